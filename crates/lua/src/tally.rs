//! What a finished `run` measured, as plain data: the counters, the latency moments, sysbench's
//! latency slots and the HDR histogram, the schedule lag, the per-second series and every
//! thread's share and CPU. The run document is built from it (`crate::document`); a segment of
//! a multi-host run hands it to the coordinator (serialised by `pgrig_fleet::lua_codec`), which
//! adds the segments' tallies into the whole run's and prints its report from it ([`report_body`]).

use hdrhistogram::Histogram;
use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::report::{self as render, Summary};

use crate::invocation::Invocation;
use crate::stats::{Finished, SecondCounts, Stats, ThreadEnd};

/// A finished run's figures.
#[derive(Clone, Debug)]
pub struct Tally {
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    /// ignored errors (events restarted)
    pub errors: u64,
    pub reconnects: u64,
    /// events restarted at least once
    pub restarted: u64,
    /// a connection was made (the report's "SQL statistics" appear)
    pub sql_used: bool,
    /// event latencies: min, max and sum in ms (min is 0 without events), sum of squares in µs²
    pub min_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
    pub sum_sq_us: f64,
    /// event latencies, µs
    pub hdr: Histogram<u64>,
    /// sysbench's latency slots (its percentile and `--histogram`)
    pub slots: Slots,
    /// `--rate`: events started late (count, sum ms, max ms)
    pub lag: (u64, f64, f64),
    pub elapsed_s: f64,
    pub started_unix_s: f64,
    pub seconds: Vec<SecondCounts>,
    /// every thread, in global id order from `first_thread`
    pub threads: Vec<ThreadEnd>,
    pub first_thread: u32,
    /// the run ended on a fatal error
    pub fatal: bool,
    /// stopped early from outside (Ctrl-C, a multi-host run's coordinator): the figures cover
    /// what ran before
    pub interrupted: bool,
    /// the script's own options with the values it ran with
    pub options: Vec<(String, String)>,
    /// sysbench's `--forced-shutdown` ended the run (`threads[].unfinished_s`: what was still
    /// running)
    pub forced: bool,
}

impl Tally {
    /// The tally of a finished run.
    pub fn of(stats: &Stats, fin: &Finished, first_thread: u32) -> Tally {
        let empty = || Histogram::new(3).expect("3 significant digits are valid");
        let (min_ms, max_ms, sum_ms, sum_sq_us, hdr, slots) = match stats.latency.lock() {
            Ok(l) => (
                l.min_ms,
                l.max_ms,
                l.sum_ms,
                l.sum_sq_us,
                l.hdr.clone(),
                l.total.clone(),
            ),
            Err(_) => (0.0, 0.0, 0.0, 0.0, empty(), Slots::new()),
        };
        let events = stats.events.total();
        Tally {
            events,
            reads: stats.reads.total(),
            writes: stats.writes.total(),
            other: stats.other.total(),
            errors: stats.errors.total(),
            reconnects: stats.reconnects.total(),
            restarted: stats.restarted.total(),
            sql_used: stats.sql_used.load(std::sync::atomic::Ordering::Relaxed),
            min_ms: if events > 0 { min_ms } else { 0.0 },
            max_ms,
            sum_ms,
            sum_sq_us,
            hdr,
            slots,
            lag: (stats.lag_count(), stats.lag_sum_ms(), stats.lag_max_ms()),
            elapsed_s: fin.elapsed_s,
            started_unix_s: fin.started_unix_s,
            seconds: fin.seconds.clone(),
            threads: fin.threads.clone(),
            first_thread,
            fatal: fin.fatal,
            interrupted: fin.interrupted,
            options: fin.options.clone(),
            forced: fin.forced,
        }
    }

    /// sysbench's final report of the run (`inv`: the whole run's options), as one host running
    /// every thread prints it.
    pub fn summary(&self, inv: &Invocation) -> Summary {
        let pct = inv.percentile;
        Summary {
            reads: self.reads,
            writes: self.writes,
            other: self.other,
            events: self.events,
            errors: self.errors,
            reconnects: self.reconnects,
            time_s: self.elapsed_s,
            min_ms: self.min_ms,
            avg_ms: if self.events > 0 {
                self.sum_ms / self.events as f64
            } else {
                0.0
            },
            max_ms: self.max_ms,
            percentile: pct,
            pct_ms: if pct > 0 {
                self.slots.percentile(pct)
            } else {
                0.0
            },
            sum_ms: self.sum_ms,
            per_thread: (self.threads.iter())
                .map(|t| match t.unfinished_s {
                    Some(s) => (t.events + 1, t.busy_s + s),
                    None => (t.events, t.busy_s),
                })
                .collect(),
            histogram: (inv.histogram && !self.forced).then(|| self.slots.render()),
            unfinished: self.forced.then(|| {
                (self.threads.iter())
                    .filter(|t| t.unfinished_s.is_some())
                    .count() as u64
            }),
        }
    }
}

/// The run's final report after its header (`crate::report::header`), `Threads started!` and
/// the interval lines: the SQL statistics when the script used the database, or nothing below
/// `--verbosity` 3.
pub fn report_body(inv: &Invocation, t: &Tally) -> String {
    if !inv.notices {
        return String::new();
    }
    let s = t.summary(inv);
    if t.sql_used {
        render::summary(&s)
    } else {
        render::general_statistics(&s)
    }
}
