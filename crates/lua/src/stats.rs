//! The run's counters, shared by every thread's Lua state: events, queries by sysbench's
//! classes, ignored errors and reconnects (totals and the current `--report-interval` period),
//! and the event latencies in sysbench's histogram slots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::{nominal_class, QueryClass};

/// Counts of one kind, total and since the last interval.
#[derive(Default, Debug)]
pub struct Pair {
    total: AtomicU64,
    period: AtomicU64,
}

impl Pair {
    pub fn add(&self, n: u64) {
        self.total.fetch_add(n, Relaxed);
        self.period.fetch_add(n, Relaxed);
    }

    pub fn total(&self) -> u64 {
        self.total.load(Relaxed)
    }

    /// The period's count, starting the next period.
    pub fn take_period(&self) -> u64 {
        self.period.swap(0, Relaxed)
    }
}

/// Latencies: the run's and the period's slots, and min/max/sum in ms.
#[derive(Debug)]
pub struct Latency {
    pub total: Slots,
    pub period: Slots,
    pub min_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            total: Slots::new(),
            period: Slots::new(),
            min_ms: f64::INFINITY,
            max_ms: 0.0,
            sum_ms: 0.0,
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
        }
    }
}
