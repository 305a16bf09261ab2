//! sysbench 1.0.20's run output, rendered from plain figures (pure; the figures come from the
//! run document, see [`Summary::of`]): the run's header, the `--report-interval` lines, and the
//! final report — SQL statistics, general statistics, latency, threads fairness, and the
//! `--histogram` table before them.

use super::sql::{nominal_class, QueryClass};
use pgrig_engine::document::RunDocument;

use super::histogram::Slots;

/// What the run header says.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub threads: u32,
    /// `--rate` (0: none)
    pub rate: u64,
    pub report_interval: u32,
    /// `--rand-seed` (0: from the time)
    pub rand_seed: u32,
    /// `--forced-shutdown`: the second at which the run is ended (`--time` plus the wait)
    pub forced_shutdown: Option<u32>,
}

/// The lines from "Running the test with following options:" to "Initializing worker
/// threads...".
pub fn header(h: &Header) -> String {
    let mut s = String::from("Running the test with following options:\n");
    s += &format!("Number of threads: {}\n", h.threads);
    if h.rate > 0 {
        s += &format!("Target transaction rate: {}/sec\n", h.rate);
    }
    if h.report_interval > 0 {
        s += &format!(
            "Report intermediate results every {} second(s)\n",
            h.report_interval
        );
    }
    if h.rand_seed != 0 {
        s += &format!(
            "Initializing random number generator from seed ({}).\n\n",
            h.rand_seed as i32
        );
    } else {
        s += "Initializing random number generator from current time\n\n";
    }
    if let Some(at) = h.forced_shutdown {
        s += &format!("Forcing shutdown in {at} seconds\n");
    }
    s += "\nInitializing worker threads...\n\n";
    s
}

/// Printed once every client is connected.
pub const THREADS_STARTED: &str = "Threads started!\n\n";

/// One `--report-interval` period.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// seconds since the start, at the end of the period
    pub time_s: f64,
    /// length of the period, s
    pub seconds: f64,
    pub threads: u32,
    pub events: f64,
    pub reads: f64,
    pub writes: f64,
    pub other: f64,
    pub percentile: u32,
    /// the period's latency percentile, ms
    pub latency_ms: f64,
    pub errors: f64,
    pub reconnects: f64,
    /// `--rate`: (queue length, concurrency)
    pub queue: Option<(u64, u64)>,
}

/// An interval's line (and, under `--rate`, its queue line).
pub fn interval(i: &Interval) -> String {
    let per = |x: f64| if i.seconds > 0.0 { x / i.seconds } else { 0.0 };
    let stamp = format!("[ {:.0}s ] ", i.time_s);
    let mut s = format!(
        "{stamp}thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) lat (ms,{}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}\n",
        i.threads,
        per(i.events),
        per(i.reads + i.writes + i.other),
        per(i.reads),
        per(i.writes),
        per(i.other),
        i.percentile,
        i.latency_ms,
        per(i.errors),
        per(i.reconnects),
    );
    if let Some((len, conc)) = i.queue {
        s += &format!("{stamp}queue length: {len}, concurrency: {conc}\n");
    }
    s
}

/// The run document's `workload_counters` holding a run's queries by sysbench's classes, as
/// counted from each statement's reply (`pgrig_engine::stats::Replies` on the native path,
/// the Lua path's connection).
pub const QUERIES_READ: &str = "queries_read";
pub const QUERIES_WRITE: &str = "queries_write";
pub const QUERIES_OTHER: &str = "queries_other";

/// The `workload_counters` of a native run's queries by class, from the statements' replies
/// (a row set is a read, rows changed a write, anything else other).
pub fn class_counters(r: &pgrig_engine::stats::Replies) -> [(String, u64); 3] {
    [
        (QUERIES_READ.to_string(), r.rows),
        (QUERIES_WRITE.to_string(), r.changed),
        (QUERIES_OTHER.to_string(), r.neither),
    ]
}

/// Queries by class (read, write, other) as the document counted them from the replies;
/// `None` for a document without them (stored before they were counted).
pub fn counted_classes(doc: &RunDocument) -> Option<(u64, u64, u64)> {
    let c = |k| doc.workload_counters.get(k).copied();
    Some((c(QUERIES_READ)?, c(QUERIES_WRITE)?, c(QUERIES_OTHER)?))
}

/// Queries by class from the per-statement counts, each statement by its nominal class (a
/// write that matched no row still a write): documents from before replies were counted.
fn nominal_classes(doc: &RunDocument) -> (u64, u64, u64) {
    let (mut reads, mut writes, mut other) = (0, 0, 0);
    for c in doc.scripts.iter().flat_map(|s| &s.commands) {
        let n = c.executions.saturating_sub(c.failures);
        match nominal_class(&c.text) {
            QueryClass::Read => reads += n,
            QueryClass::Write => writes += n,
            QueryClass::Other => other += n,
        }
    }
    (reads, writes, other)
}

/// The figures of the final report.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub events: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub time_s: f64,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    /// `--percentile` (0: disabled)
    pub percentile: u32,
    pub pct_ms: f64,
    pub sum_ms: f64,
    /// per thread (client): events and seconds spent in them
    pub per_thread: Vec<(u64, f64)>,
    /// `--histogram`'s table, when asked for
    pub histogram: Option<String>,
    /// a run ended by `--forced-shutdown`: the events still running then (sysbench's "Number
    /// of unfinished transactions on forced shutdown", printed when above 0; `per_thread`
    /// counts them as events that ended then, as sysbench's threads fairness does)
    pub unfinished: Option<u64>,
}

impl Summary {
    /// The figures of a run document: queries by class as counted from the replies
    /// ([`counted_classes`]; a document without them: each statement by its nominal class),
    /// events = successful transactions, ignored errors = retried errors, threads = clients.
    pub fn of(doc: &RunDocument, percentile: u32, histogram: bool) -> Self {
        // a forced shutdown: no histogram, the unfinished events in threads fairness
        let histogram = histogram && doc.unfinished_events.is_none();
        let (reads, writes, other) = counted_classes(doc).unwrap_or_else(|| nominal_classes(doc));
        let events = doc.transactions.ok;
        let slots = Slots::from_us_buckets(&doc.latency_histogram.buckets);
        let avg = doc.latency_ms.mean;
        Summary {
            reads,
            writes,
            other,
            events,
            errors: doc.transactions.retries,
            reconnects: 0,
            time_s: doc.duration_s,
            min_ms: doc.latency_ms.min,
            avg_ms: avg,
            max_ms: doc.latency_ms.max,
            percentile,
            pct_ms: if percentile > 0 {
                slots.percentile(percentile)
            } else {
                0.0
            },
            sum_ms: avg * events as f64,
            per_thread: (doc.clients.iter())
                .map(|c| match c.unfinished_s {
                    Some(s) => (c.transactions + 1, c.busy_s + s),
                    None => (c.transactions, c.busy_s),
                })
                .collect(),
            histogram: histogram.then(|| slots.render()),
            unfinished: doc.unfinished_events,
        }
    }
}

/// The final report, from "SQL statistics:" (or the histogram) to the end.
pub fn summary(s: &Summary) -> String {
    histogram(s) + &sql_statistics(s) + &unfinished(s) + &general(s)
}

/// The final report of a run that used no database (a Lua script's): no SQL statistics.
pub fn general_statistics(s: &Summary) -> String {
    histogram(s) + &unfinished(s) + &general(s)
}

/// sysbench's line at a forced shutdown with events still running.
fn unfinished(s: &Summary) -> String {
    match s.unfinished {
        Some(n) if n > 0 => {
            format!("\nNumber of unfinished transactions on forced shutdown: {n}\n")
        }
        _ => String::new(),
    }
}

/// The line sysbench prints when its `--forced-shutdown` alarm goes off, before the report.
pub const FORCED_SHUTDOWN: &str = "FATAL: The --max-time limit has expired, forcing shutdown...\n";

fn histogram(s: &Summary) -> String {
    let mut o = String::new();
    if let Some(h) = &s.histogram {
        o += "Latency histogram (values are in milliseconds)\n";
        o += h;
        o += " \n";
    }
    o
}

fn sql_statistics(s: &Summary) -> String {
    let per = |x: u64| {
        if s.time_s > 0.0 {
            x as f64 / s.time_s
        } else {
            0.0
        }
    };
    let queries = s.reads + s.writes + s.other;
    let mut o = String::from("SQL statistics:\n    queries performed:\n");
    o += &format!("        read:                            {}\n", s.reads);
    o += &format!("        write:                           {}\n", s.writes);
    o += &format!("        other:                           {}\n", s.other);
    o += &format!("        total:                           {queries}\n");
    for (label, n) in [
        ("transactions:                        ", s.events),
        ("queries:                             ", queries),
        ("ignored errors:                      ", s.errors),
        ("reconnects:                          ", s.reconnects),
    ] {
        o += &format!("    {label}{n:<6} ({:.2} per sec.)\n", per(n));
    }
    o
}

fn general(s: &Summary) -> String {
    let mut o = String::from("\nGeneral statistics:\n");
    o += &format!(
        "    total time:                          {:.4}s\n",
        s.time_s
    );
    o += &format!("    total number of events:              {}\n\n", s.events);
    o += "Latency (ms):\n";
    o += &format!("         min: {:39.2}\n", s.min_ms);
    o += &format!("         avg: {:39.2}\n", s.avg_ms);
    o += &format!("         max: {:39.2}\n", s.max_ms);
    if s.percentile > 0 {
        o += &format!(
            "        {:3}th percentile: {:27.2}\n",
            s.percentile, s.pct_ms
        );
    } else {
        o += "         percentile stats:               disabled\n";
    }
    o += &format!("         sum: {:39.2}\n\n", s.sum_ms);
    o += &fairness(s);
    o
}

fn fairness(s: &Summary) -> String {
    let n = s.per_thread.len().max(1) as f64;
    let events_avg = s.per_thread.iter().map(|t| t.0 as f64).sum::<f64>() / n;
    let time_avg = s.sum_ms / 1000.0 / n;
    let dev = |f: &dyn Fn(&(u64, f64)) -> f64, avg: f64| {
        (s.per_thread
            .iter()
            .map(|t| (avg - f(t)).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
    };
    let events_dev = dev(&|t| t.0 as f64, events_avg);
    let time_dev = dev(&|t| t.1, time_avg);
    format!(
        "Threads fairness:\n    events (avg/stddev):           {events_avg:.4}/{events_dev:3.2}\n    execution time (avg/stddev):   {time_avg:.4}/{time_dev:3.2}\n\n"
    )
}
