//! How a script's `run` ends, as sysbench 1.0.20 ends it. At `--time` no thread starts another
//! event and the run waits for the events still running, however long they take; with
//! `--forced-shutdown` (`Invocation::forced_shutdown`, the second it goes off) the run is cut
//! there: `FATAL: The --max-time limit has expired, forcing shutdown...`, the report of what
//! ran with the events still running counted as sysbench counts them, no `done()`, status 2.
//! A stop from outside (Ctrl-C, a multi-host run's coordinator) ends the run as `--time` does,
//! and an event that outlasts it by a second is cut the same way (without the FATAL line).
//! Either way the threads left running are not waited for: what they did is read from
//! [`crate::progress`], and the run document is written from it.

use std::sync::atomic::Ordering::Relaxed;
use std::thread;
use std::time::{Duration, Instant};

use mlua::Lua;

use crate::report::{self, Figures};
use crate::state::Shared;
use crate::stats::{SecondCounts, ThreadEnd};

/// How long the events still running after a stop from outside may take before the run is cut.
const GRACE: Duration = Duration::from_secs(1);

/// The worker threads, as spawned.
pub type Handles = Vec<std::io::Result<thread::JoinHandle<ThreadEnd>>>;

/// What cut a run short, leaving threads running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// sysbench's `--forced-shutdown` went off
    Forced,
    /// a stop from outside that an event outlasted
    Interrupted,
}

/// How the watch over the running threads ended.
pub struct Ended {
    /// the run's whole seconds
    pub seconds: Vec<SecondCounts>,
    /// `None`: every thread finished
    pub cut: Option<Cut>,
}

/// The main thread while the workers run: interval reports, the per-second counts, the time
/// limit, a stop from outside and the forced shutdown.
pub fn watch(lua: &Lua, sh: &Shared, handles: &Handles, began: Instant) -> Ended {
    let limit = (sh.inv.time > 0).then(|| Duration::from_secs(sh.inv.time));
    let forced = (sh.inv.forced_shutdown)
        .filter(|&at| at > 0)
        .map(|at| Duration::from_secs(u64::from(at)));
    let interval = u64::from(sh.inv.report_interval);
    let mut next_report = interval;
    let mut seconds = Vec::new();
    let mut errors_before = 0;
    let mut stopped_at: Option<Duration> = None;
    let running = || {
        (handles.iter())
            .filter(|h| h.as_ref().is_ok_and(|h| !h.is_finished()))
            .count()
    };
    loop {
        let n = running();
        let now = began.elapsed();
        if n == 0 {
            // the last, partial second: told to live metrics and a segment's interval rows,
            // not part of the series
            sh.stats
                .take_second(seconds.len() as u64 + 1, errors_before, 0);
            return Ended { seconds, cut: None };
        }
        while now.as_secs() > seconds.len() as u64 {
            let s = (sh.stats).take_second(seconds.len() as u64 + 1, errors_before, n as u32);
            errors_before += s.errors;
            seconds.push(s);
        }
        if interval > 0 && now.as_secs() >= next_report {
            let span = (next_report - interval) as usize..next_report as usize;
            let period = (next_report as f64, interval as f64, n as u32);
            report::intermediate(lua, sh, period, seconds.get(span).unwrap_or_default());
            next_report += interval;
        }
        // the interval line of the second the alarm goes off comes first, as in sysbench
        let cut = match () {
            _ if forced.is_some_and(|f| now >= f) => Some(Cut::Forced),
            _ if stopped_at.is_some_and(|at| now >= at + GRACE) => Some(Cut::Interrupted),
            _ => None,
        };
        if cut.is_some() {
            sh.stats
                .take_second(seconds.len() as u64 + 1, errors_before, 0);
            sh.stop.store(true, Relaxed);
            return Ended { seconds, cut };
        }
        if sh.interrupt.as_ref().is_some_and(|s| s.requested()) && !sh.stop.load(Relaxed) {
            sh.interrupted.store(true, Relaxed);
            sh.stop.store(true, Relaxed);
            stopped_at = Some(now);
        }
        if limit.is_some_and(|l| now >= l) {
            sh.stop.store(true, Relaxed);
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Every thread's share: joined when it finished (or the run was not `cut`: then it is waited
/// for), else as its progress stands.
pub fn threads(sh: &Shared, handles: Handles, cut: bool) -> Vec<ThreadEnd> {
    (handles.into_iter().enumerate())
        .map(|(i, h)| match h {
            Ok(h) if h.is_finished() || !cut => h.join().unwrap_or_default(),
            Ok(_) => sh.progress.snapshot(i),
            Err(_) => ThreadEnd::default(),
        })
        .collect()
}

/// The report of a run cut short (`forced`: by `--forced-shutdown`), as sysbench prints it at
/// its forced shutdown: the completed events' figures, the events still running counted on
/// their own line and, in threads fairness, as events that ended then; no histogram, no
/// `done()`. Returns the status: 2 for a forced shutdown, 0 for a stop from outside (which
/// the command line makes 130).
pub fn cut_report(
    lua: &Lua,
    sh: &Shared,
    elapsed: f64,
    threads: &[ThreadEnd],
    forced: bool,
) -> i32 {
    if forced {
        print!("{}", pgrig_workloads::sysbench::report::FORCED_SHUTDOWN);
    }
    let per_thread = (threads.iter())
        .map(|t| match t.unfinished_s {
            Some(s) => (t.events + 1, t.busy_s + s),
            None => (t.events, t.busy_s),
        })
        .collect();
    let mut fig = Figures::of(sh, elapsed, per_thread);
    if let Some(s) = &mut fig.summary {
        s.histogram = None;
        s.unfinished = Some(threads.iter().filter(|t| t.unfinished_s.is_some()).count() as u64);
    }
    report::cumulative(lua, sh, &fig);
    if forced {
        2
    } else {
        0
    }
}
