//! The run's counters, shared by every thread's Lua state: events, queries by sysbench's
//! classes, ignored errors and reconnects (totals and the current `--report-interval` period),
//! and the event latencies in sysbench's histogram slots, an HDR histogram (µs, for the run
//! document) and the current second's count and sum (its per-second series). [`Finished`]: what
//! a run leaves for its document (elapsed time, the seconds, each thread's share and CPU).

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use hdrhistogram::Histogram;

use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::{nominal_class, QueryClass};

/// Counts of one kind, total and since the last interval (a cell per thread).
pub use crate::counter::Pair;

/// Latencies: the run's and the period's slots, and min/max/sum in ms; the run's HDR
/// histogram and sum of squares (µs); the current second's events and latency sum.
#[derive(Debug)]
pub struct Latency {
    pub total: Slots,
    pub period: Slots,
    pub min_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
    pub hdr: Histogram<u64>,
    pub sum_sq_us: f64,
    pub second_events: u64,
    pub second_sum_ms: f64,
    /// the current second's latencies (µs), for live metrics
    pub second_hdr: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            total: Slots::new(),
            period: Slots::new(),
            min_ms: f64::INFINITY,
            max_ms: 0.0,
            sum_ms: 0.0,
            hdr: Histogram::new(3).expect("3 significant digits are valid"),
            sum_sq_us: 0.0,
            second_events: 0,
            second_sum_ms: 0.0,
            second_hdr: Histogram::new(3).expect("3 significant digits are valid"),
        }
    }
}

/// Everything the threads count.
#[derive(Default, Debug)]
pub struct Stats {
    pub events: Pair,
    pub reads: Pair,
    pub writes: Pair,
    pub other: Pair,
    pub errors: Pair,
    pub reconnects: Pair,
    /// a connection was made (the report's "SQL statistics" then appear)
    pub sql_used: AtomicBool,
    pub latency: Mutex<Latency>,
    /// events that were restarted at least once (sysbench's ignorable errors)
    pub restarted: Pair,
    /// what the finished run leaves for its document
    pub finished: Mutex<Option<Finished>>,
    /// `--rate`: events started late against their schedule (count, sum ms, max ms)
    pub lag: Mutex<(u64, f64, f64)>,
    /// told each second as it ends (live metrics)
    pub on_second: std::sync::OnceLock<SecondHook>,
    /// reads, writes, other and reconnects at the start of the current second
    pub second_marks: Mutex<[u64; 4]>,
}

/// What is told each second: its number (1 = the first), its counts and its latencies (µs).
pub type SecondFn = dyn Fn(u64, &SecondCounts, &Histogram<u64>) + Send + Sync;

/// A [`SecondFn`] kept in [`Stats`].
pub struct SecondHook(pub Box<SecondFn>);

impl std::fmt::Debug for SecondHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecondHook")
    }
}

/// One whole second of the run: its events, ignored errors and latency sum (ms), its queries
/// by sysbench's classes and reconnects, and the threads still running as it ended (0: the
/// run's last, partial second, which is not part of the series).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SecondCounts {
    pub events: u64,
    pub errors: u64,
    pub latency_sum_ms: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub reconnects: u64,
    pub threads: u32,
}

/// One worker thread at the end of the run: its events, the seconds spent in them, and its
/// CPU time and run-queue wait over its event loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadEnd {
    pub events: u64,
    pub busy_s: f64,
    pub cpu: pgrig_engine::result::ThreadCpu,
    /// a run cut short (`--forced-shutdown`): how long the event the thread was still running
    /// had run, s (not in `events` nor `busy_s`)
    pub unfinished_s: Option<f64>,
}

/// A finished `run`: what its document is built from besides the counters.
#[derive(Clone, Debug, Default)]
pub struct Finished {
    pub elapsed_s: f64,
    /// wall-clock start, Unix seconds
    pub started_unix_s: f64,
    pub seconds: Vec<SecondCounts>,
    pub threads: Vec<ThreadEnd>,
    /// the run ended on a fatal error
    pub fatal: bool,
    /// stopped early from outside (Ctrl-C): the figures cover what ran before
    pub interrupted: bool,
    /// the script's own options (`sysbench.cmdline.options`) with the values it ran with
    pub options: Vec<(String, String)>,
    /// sysbench's `--forced-shutdown` ended the run (the threads' `unfinished_s` say what was
    /// still running)
    pub forced: bool,
}

impl Stats {
    /// Counts one statement by the class of its text.
    pub fn query(&self, sql: &str) {
        match nominal_class(sql) {
            QueryClass::Read => self.reads.add(1),
            QueryClass::Write => self.writes.add(1),
            QueryClass::Other => self.other.add(1),
        }
    }

    /// Counts one event without a latency: a script's `sb_counter_inc(tid, SB_CNT_TRX)`, which
    /// moves sysbench's event counter alone.
    pub fn count_event(&self) {
        self.events.add(1);
        if let Ok(mut l) = self.latency.lock() {
            l.second_events += 1;
        }
    }

    /// Counts one finished event that took `ns`.
    pub fn event(&self, ns: u64) {
        self.events.add(1);
        let ms = ns as f64 / 1e6;
        if let Ok(mut l) = self.latency.lock() {
            let us = (ns / 1000).max(1);
            l.total.add_us(us, 1);
            l.period.add_us(us, 1);
            l.min_ms = l.min_ms.min(ms);
            l.max_ms = l.max_ms.max(ms);
            l.sum_ms += ms;
            let _ = l.hdr.record(us);
            l.sum_sq_us += (ns as f64 / 1e3).powi(2);
            l.second_events += 1;
            l.second_sum_ms += ms;
            let _ = l.second_hdr.record(us);
        }
    }
}

impl Stats {
    /// The second that just ended: its events and latency sum (taken, starting the next), the
    /// ignored errors since `errors_before` (the total at its start), its queries by class and
    /// reconnects, with `running` threads at its end.
    /// The second `n` is told to the hook, if any, with its latencies.
    pub fn take_second(&self, n: u64, errors_before: u64, running: u32) -> SecondCounts {
        let empty = || Histogram::new(3).expect("3 significant digits are valid");
        let (events, latency_sum_ms, hdr) = match self.latency.lock() {
            Ok(mut l) => {
                let hdr = match self.on_second.get() {
                    Some(_) => std::mem::replace(&mut l.second_hdr, empty()),
                    None => {
                        l.second_hdr.reset();
                        empty()
                    }
                };
                let events = std::mem::take(&mut l.second_events);
                (events, std::mem::take(&mut l.second_sum_ms), hdr)
            }
            Err(_) => (0, 0.0, empty()),
        };
        let now = [
            self.reads.total(),
            self.writes.total(),
            self.other.total(),
            self.reconnects.total(),
        ];
        let before = match self.second_marks.lock() {
            Ok(mut m) => std::mem::replace(&mut *m, now),
            Err(_) => now,
        };
        let d = |i: usize| now[i].saturating_sub(before[i]);
        let s = SecondCounts {
            events,
            errors: self.errors.total().saturating_sub(errors_before),
            latency_sum_ms,
            reads: d(0),
            writes: d(1),
            other: d(2),
            reconnects: d(3),
            threads: running,
        };
        if let Some(hook) = self.on_second.get() {
            (hook.0)(n, &s, &hdr);
        }
        s
    }
}

impl Stats {
    /// `--rate`: an event that started `ms` after its scheduled time.
    pub fn lagged(&self, ms: f64) {
        if let Ok(mut l) = self.lag.lock() {
            l.0 += 1;
            l.1 += ms;
            l.2 = l.2.max(ms);
        }
    }

    pub fn lag_count(&self) -> u64 {
        self.lag.lock().map_or(0, |l| l.0)
    }

    pub fn lag_sum_ms(&self) -> f64 {
        self.lag.lock().map_or(0.0, |l| l.1)
    }

    pub fn lag_max_ms(&self) -> f64 {
        self.lag.lock().map_or(0.0, |l| l.2)
    }
}
