//! State shared by every worker thread of one run (read-only after start, except the stop flag),
//! and the per-thread context its clients share (single-threaded: `Cell`/`RefCell`, no locks).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use pgrig_script::{Prng, Script, VarId, VarTable};

use crate::config::BenchConfig;
use crate::log::TxLog;
use crate::sink::{Level, Sink};
use crate::stats::ThreadStats;

pub(crate) struct RunShared {
    pub cfg: BenchConfig,
    pub scripts: Vec<Script>,
    /// prepared-statement index of each command (`usize::MAX` for meta-commands), per script
    pub prep_index: Vec<Vec<usize>>,
    pub n_prepared: usize,
    pub total_weight: i64,
    pub vartable: VarTable,
    pub default_seed_var: VarId,
    pub wire: pgrig_wire::Config,
    pub sink: Arc<dyn Sink>,
    /// run start: the zero of all `now_us()` times
    pub start: Instant,
    pub start_wall: SystemTime,
    /// first thread's benchmark start (after the connection barrier)
    pub bench_start: OnceLock<Instant>,
    /// transactions per client (`-t`)
    pub nxacts: Option<u64>,
    /// `-T` in µs
    pub duration_us: Option<i64>,
    /// mean delay between transactions of one thread (µs), `-R`
    pub throttle_delay_us: Option<f64>,
    pub latency_limit_us: Option<i64>,
    /// Ctrl-C, or `--exit-on-abort` after an abort
    pub stop: AtomicBool,
}

impl RunShared {
    #[inline]
    pub fn now_us(&self) -> i64 {
        self.start.elapsed().as_micros() as i64
    }

    /// Whether `-T` has run out (always false under `-t`).
    #[inline]
    pub fn timer_exceeded(&self, now_us: i64) -> bool {
        match (self.duration_us, self.bench_start.get()) {
            (Some(d), Some(b)) => now_us >= b.duration_since(self.start).as_micros() as i64 + d,
            _ => false,
        }
    }

    pub fn end_us(&self) -> Option<i64> {
        match (self.duration_us, self.bench_start.get()) {
            (Some(d), Some(b)) => Some(b.duration_since(self.start).as_micros() as i64 + d),
            _ => None,
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn msg(&self, level: Level, text: &str) {
        self.sink.message(level, text);
    }
}

/// What the clients of one worker thread share.
pub(crate) struct ThreadCtx {
    pub tid: usize,
    pub stats: RefCell<ThreadStats>,
    pub choose_rng: RefCell<Prng>,
    pub throttle_rng: RefCell<Prng>,
    pub sample_rng: RefCell<Prng>,
    /// next scheduled transaction start (µs since run start), `-R`
    pub throttle_trigger: Cell<i64>,
    pub log: Option<RefCell<TxLog>>,
}
