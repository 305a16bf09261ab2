//! Ctrl-C, the one handler of the process: the first SIGINT asks what runs to stop through its
//! [`StopHandle`] (a benchmark's clients finish or abandon their transaction and the report for
//! what ran is printed; initialisation cancels its statements); a second one exits at once (130).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use pgrig_engine::StopHandle;

static HITS: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();

extern "C" fn on_sigint(_: libc::c_int) {
    if HITS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the handler and a watcher thread that forwards the request to `stop`.
pub fn on_interrupt(stop: StopHandle) {
    INSTALL.call_once(|| {
        // SAFETY: installing a handler that only touches an atomic and calls _exit.
        unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
    });
    std::thread::spawn(move || loop {
        if HITS.load(Ordering::SeqCst) > 0 {
            stop.stop();
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    });
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    HITS.load(Ordering::SeqCst) > 0
}
