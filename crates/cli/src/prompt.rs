//! pgbench's password prompt (libpq's `simple_prompt`): `Password: ` on the terminal, the answer
//! read from it with echo off and never shown, then a newline. Without a terminal (no
//! `/dev/tty`), the prompt goes to stderr and the answer comes from standard input, as
//! pgbench does. Ctrl-C at the prompt restores the terminal and exits 130.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

/// The terminal settings to restore if Ctrl-C ends the prompt: (fd, termios).
static SAVED: Mutex<Option<(i32, libc::termios)>> = Mutex::new(None);

extern "C" fn restore_and_exit(_: libc::c_int) {
    // try_lock: never block in a signal handler; tcsetattr and _exit are async-signal-safe.
    if let Ok(saved) = SAVED.try_lock() {
        if let Some((fd, t)) = *saved {
            // SAFETY: restoring settings read earlier by tcgetattr on the same descriptor.
            unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &t) };
        }
    }
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(130) };
}

/// Asks for a password; an empty answer (or end of input) gives `""`. On a terminal, echo is
/// turned off before the prompt is shown (as libpq's `simple_prompt` does), so an answer typed
/// as soon as the prompt appears is never flushed away.
pub fn read_password(prompt: &str) -> String {
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok();
    let line = match &tty {
        Some(t) => read_without_echo(t, prompt),
        None => {
            let mut err = std::io::stderr();
            let _ = err.write_all(prompt.as_bytes());
            let _ = err.flush();
            let line = read_line(&mut std::io::stdin().lock());
            let _ = err.write_all(b"\n");
            line
        }
    };
    line
}

fn read_line(input: &mut dyn BufRead) -> String {
    let mut line = String::new();
    let _ = input.read_line(&mut line);
    while line.ends_with('\n') || line.ends_with('\r') {
        line.pop();
    }
    line
}

/// Echo off, the prompt, the answer, echo back on, the line ended.
fn read_without_echo(tty: &File, prompt: &str) -> String {
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it for a valid descriptor.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    let is_tty = unsafe { libc::tcgetattr(fd, &mut t) } == 0;
    let mut previous = None;
    if is_tty {
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some((fd, t));
        // SAFETY: installing a handler that only restores the terminal and exits.
        previous = Some(unsafe {
            libc::signal(
                libc::SIGINT,
                restore_and_exit as *const () as libc::sighandler_t,
            )
        });
        let mut quiet = t;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: valid descriptor and settings derived from its own.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) };
    }
    let mut out = tty;
    let _ = out.write_all(prompt.as_bytes());
    let _ = out.flush();
    let line = match tty.try_clone() {
        Ok(f) => read_line(&mut BufReader::new(f)),
        Err(_) => String::new(),
    };
    if is_tty {
        // SAFETY: restoring the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &t) };
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(h) = previous {
            // SAFETY: putting back the handler that was installed before.
            unsafe { libc::signal(libc::SIGINT, h) };
        }
    }
    let _ = out.write_all(b"\n");
    let _ = out.flush();
    line
}
