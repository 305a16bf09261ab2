//! A deadline on a stretch of a script that sysbench cannot interrupt either: the script's body
//! and `init()` (bounded by `--time`; sysbench waits for ever) and the threads'
//! `thread_init()` (sysbench's 30 s). LuaJIT's compiled loops cannot be interrupted, so when the
//! deadline passes the process ends with its `FATAL:` line and status — nothing was measured
//! yet, so no report or run document is lost.

use std::io::Write;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::time::Duration;

/// sysbench's limit on its threads' initialisation (`THREAD_INIT_TIMEOUT`).
pub const THREAD_INIT_TIMEOUT: Duration = Duration::from_secs(30);

/// An armed deadline; dropping it disarms it.
pub struct Watchdog {
    _disarm: Option<Sender<()>>,
}

impl Watchdog {
    /// Ends the process with `line` and `code` unless disarmed within `after`.
    pub fn arm(after: Duration, line: String, code: i32) -> Watchdog {
        let (tx, rx) = channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("lua-watchdog".into())
            .spawn(move || {
                if rx.recv_timeout(after) == Err(RecvTimeoutError::Timeout) {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                    std::process::exit(code);
                }
            });
        Watchdog {
            _disarm: spawned.is_ok().then_some(tx),
        }
    }

    /// No deadline (none applies).
    pub fn none() -> Watchdog {
        Watchdog { _disarm: None }
    }
}

/// The deadline of the script's `what` (its body, `init()`) under `--time` of `time` seconds
/// (0: none, as in sysbench).
pub fn time_limit(time: u64, what: &str) -> Watchdog {
    if time == 0 {
        return Watchdog::none();
    }
    Watchdog::arm(
        Duration::from_secs(time),
        format!("FATAL: the script's {what} has not returned within the --time limit ({time} s)"),
        1,
    )
}
