//! pgbench's password prompt (libpq's `simple_prompt`): `Password: ` on the terminal, the answer
//! read from it with echo off and never shown, then a newline. Without a terminal (no
//! `/dev/tty`), the prompt goes to stderr and the answer comes from standard input, as
//! pgbench does. Ctrl-C at the prompt restores the terminal and exits 130. The terminal is
//! driven through `nix::sys::termios`; only installing the Ctrl-C handler and its `_exit` are
//! `unsafe`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::sync::Mutex;

use nix::sys::signal::{signal, SigHandler, Signal};
use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg, Termios};

/// The terminal and its settings to restore if Ctrl-C ends the prompt. The handler's own copy:
/// the prompt never borrows it, so restoring from the handler cannot meet a borrow in progress.
static SAVED: Mutex<Option<(File, Termios)>> = Mutex::new(None);

extern "C" fn restore_and_exit(_: libc::c_int) {
    // try_lock: never block in a signal handler; tcsetattr (no allocation, no lock) and _exit
    // are async-signal-safe.
    if let Ok(saved) = SAVED.try_lock() {
        if let Some((tty, t)) = saved.as_ref() {
            let _ = tcsetattr(tty, SetArg::TCSAFLUSH, t);
        }
    }
    // SAFETY: _exit is async-signal-safe and ends the process without running Rust code.
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

/// Echo off (and Ctrl-C restoring it) until the answer is read; `None` when `tty` is not a
/// terminal (then nothing was changed).
struct EchoOff<'a> {
    tty: &'a File,
    original: Termios,
    previous: Option<SigHandler>,
}

impl<'a> EchoOff<'a> {
    fn new(tty: &'a File) -> Option<EchoOff<'a>> {
        let original = tcgetattr(tty).ok()?;
        let handler_copy = tty.try_clone().ok().map(|f| (f, original.clone()));
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = handler_copy;
        // SAFETY: the handler only restores the terminal (from its own copy) and exits.
        let previous =
            unsafe { signal(Signal::SIGINT, SigHandler::Handler(restore_and_exit)) }.ok();
        let mut quiet = original.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(tty, SetArg::TCSAFLUSH, &quiet);
        Some(EchoOff {
            tty,
            original,
            previous,
        })
    }
}

impl Drop for EchoOff<'_> {
    /// Echo back on, then the handler that was there before.
    fn drop(&mut self) {
        let _ = tcsetattr(self.tty, SetArg::TCSAFLUSH, &self.original);
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(h) = self.previous {
            // SAFETY: putting back the handler that was installed before.
            let _ = unsafe { signal(Signal::SIGINT, h) };
        }
    }
}

/// Echo off, the prompt, the answer, echo back on, the line ended.
fn read_without_echo(tty: &File, prompt: &str) -> String {
    let echo_off = EchoOff::new(tty);
    let mut out = tty;
    let _ = out.write_all(prompt.as_bytes());
    let _ = out.flush();
    let line = match tty.try_clone() {
        Ok(f) => read_line(&mut BufReader::new(f)),
        Err(_) => String::new(),
    };
    drop(echo_off);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
    line
}
