//! Each worker thread's progress as the main thread can read it while the thread is still busy:
//! its events and the time spent in them, the start of the event it is running, and where its
//! CPU time is read. A run cut short (sysbench's `--forced-shutdown`, a Ctrl-C that an event
//! outlasts) reports what ran from here without waiting for the threads.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use pgrig_engine::result::ThreadCpu;

use crate::stats::ThreadEnd;

/// One thread's progress (on a cache line of its own: the thread writes it every event).
#[repr(align(64))]
#[derive(Default)]
pub struct ThreadProgress {
    events: AtomicU64,
    busy_ns: AtomicU64,
    /// the running event's start, ns since the run's epoch plus 1 (0: no event running)
    since: AtomicU64,
    /// the thread's kernel id (0: not started)
    task: AtomicI32,
    /// the thread's CPU reading when its event loop began, and that moment
    cpu0: Mutex<Option<(ThreadCpu, Instant)>>,
}

/// Every thread's progress, in thread order.
pub struct Progress {
    epoch: Instant,
    threads: Vec<ThreadProgress>,
}

impl Progress {
    pub fn new(threads: u32) -> Progress {
        Progress {
            epoch: Instant::now(),
            threads: (0..threads.max(1)).map(|_| Default::default()).collect(),
        }
    }

    fn slot(&self, i: usize) -> Option<&ThreadProgress> {
        self.threads.get(i)
    }

    /// Thread `i` begins its event loop (`cpu0`: its CPU reading then, at `origin`).
    pub fn began(&self, i: usize, cpu0: ThreadCpu, origin: Instant) {
        if let Some(t) = self.slot(i) {
            // SAFETY: gettid has no preconditions.
            t.task.store(unsafe { libc::gettid() }, Relaxed);
            if let Ok(mut c) = t.cpu0.lock() {
                *c = Some((cpu0, origin));
            }
        }
    }

    /// Thread `i` starts an event.
    pub fn event_start(&self, i: usize) {
        if let Some(t) = self.slot(i) {
            let ns = self.epoch.elapsed().as_nanos() as u64;
            t.since.store(ns + 1, Relaxed);
        }
    }

    /// Thread `i`'s event ended after `ns`; `counted`: it counts as an event (a fatal error's
    /// does not).
    pub fn event_end(&self, i: usize, ns: u64, counted: bool) {
        if let Some(t) = self.slot(i) {
            t.since.store(0, Relaxed);
            if counted {
                t.events.fetch_add(1, Relaxed);
                t.busy_ns.fetch_add(ns, Relaxed);
            }
        }
    }

    /// Thread `i` as it stands now: its events and busy time, the time its running event has
    /// run (if one is), and its CPU since its event loop began (read from `/proc`).
    pub fn snapshot(&self, i: usize) -> ThreadEnd {
        let Some(t) = self.slot(i) else {
            return ThreadEnd::default();
        };
        let since = t.since.load(Relaxed);
        let now = self.epoch.elapsed().as_nanos() as u64;
        let cpu = match t.cpu0.lock().ok().and_then(|c| *c) {
            Some((cpu0, origin)) => pgrig_engine::cpu::task_reading(t.task.load(Relaxed), origin)
                .map_or_else(ThreadCpu::default, |r| r.since(&cpu0)),
            None => ThreadCpu::default(),
        };
        ThreadEnd {
            events: t.events.load(Relaxed),
            busy_s: t.busy_ns.load(Relaxed) as f64 / 1e9,
            cpu,
            unfinished_s: (since > 0).then(|| now.saturating_sub(since - 1) as f64 / 1e9),
        }
    }
}
