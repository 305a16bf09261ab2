//! State shared by every worker thread of one run (read-only after start, except the stop flag),
//! and the per-thread context its clients share (single-threaded: `Cell`/`RefCell`, no locks).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
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
    /// `--debug`: per script and command, the meta-command text after `executing `
    pub meta_debug: Vec<Vec<String>>,
    /// per variable slot: not a valid variable name (assigning it aborts the client)
    pub invalid_name: Vec<bool>,
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
    /// transactions left to start over all clients (`total_transactions`)
    pub transactions_left: Option<std::sync::atomic::AtomicU64>,
    /// mean delay between transactions of one thread (µs), `-R`
    pub throttle_delay_us: Option<f64>,
    pub latency_limit_us: Option<i64>,
    /// Ctrl-C, or `--exit-on-abort` after an abort
    pub stop: AtomicBool,
    /// `start` on the monotonic clock, in µs
    pub start_mono_us: i64,
    /// `-T`'s end in `now_us()` time, once the benchmark started (`i64::MAX` before / under -t)
    pub end_cache_us: AtomicI64,
    /// cancel key of each client's current connection (by client id), for Ctrl-C on long
    /// statements
    pub cancels: std::sync::Mutex<Vec<Option<pgrig_wire::CancelToken>>>,
    /// set when every worker has finished
    pub finished: AtomicBool,
    /// set when `BenchConfig::forced_end_s` cut a client off
    pub forced: AtomicBool,
    /// a native workload run instead of scripts
    pub native: Option<crate::native_run::NativeRun>,
}

/// CLOCK_MONOTONIC (what `Instant` uses) in µs: one vDSO call, no `Duration` arithmetic.
#[inline]
pub(crate) fn mono_us() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1_000
}

impl RunShared {
    #[inline]
    pub fn now_us(&self) -> i64 {
        mono_us() - self.start_mono_us
    }

    /// Records the benchmark start (the first thread past the connection barrier wins) and
    /// returns it.
    pub fn mark_bench_start(&self) -> Instant {
        let b = *self.bench_start.get_or_init(Instant::now);
        if let Some(end) = self.end_us() {
            self.end_cache_us.store(end, Ordering::Relaxed);
        }
        b
    }

    /// Whether `-T` has run out (always false under `-t`).
    #[inline]
    pub fn timer_exceeded(&self, now_us: i64) -> bool {
        now_us >= self.end_cache_us.load(Ordering::Relaxed)
    }

    pub fn end_us(&self) -> Option<i64> {
        match (self.duration_us, self.bench_start.get()) {
            (Some(d), Some(b)) => Some(b.duration_since(self.start).as_micros() as i64 + d),
            _ => None,
        }
    }

    /// Opens one client connection (blocking, like libpq's `PQconnectdb`) for the worker's
    /// runtime, its notices printed as libpq's default notice processor does.
    pub fn connect(&self) -> Result<pgrig_wire::Connection, pgrig_wire::Error> {
        let mut conn = pgrig_wire::Connection::connect_rt(&self.wire)?;
        conn.set_notice_handler(Some(crate::sink::notice_printer(self.sink.clone())));
        Ok(conn)
    }

    /// Remembers how to cancel what client `id`'s connection runs (Ctrl-C).
    pub fn register_cancel(&self, id: u32, conn: &pgrig_wire::Connection) {
        if let Ok(mut t) = self.cancels.lock() {
            let i = id as usize;
            if t.len() <= i {
                t.resize(i + 1, None);
            }
            t[i] = Some(conn.cancel_token());
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// pgbench's check when a variable is created: `CONTEXT: invalid variable name: "NAME"`.
    /// Returns false (after the message) when `var` cannot be assigned.
    #[inline]
    pub fn assignable(&self, var: VarId, context: &str) -> bool {
        if !self.invalid_name[var.0 as usize] {
            return true;
        }
        self.msg(
            Level::Error,
            &pgrig_script::vars::invalid_variable_name_message(context, self.vartable.name(var)),
        );
        false
    }

    pub fn msg(&self, level: Level, text: &str) {
        self.sink.message(level, text);
    }
}

/// What the clients of one worker thread share.
pub(crate) struct ThreadCtx {
    pub stats: RefCell<ThreadStats>,
    pub choose_rng: RefCell<Prng>,
    pub throttle_rng: RefCell<Prng>,
    /// next scheduled transaction start (µs since run start), `-R`
    pub throttle_trigger: Cell<i64>,
    pub log: Option<RefCell<TxLog>>,
    /// latency histogram of the current second's successful transactions (µs), handed to
    /// the coordinator with each tick
    pub second_histogram: RefCell<hdrhistogram::Histogram<u64>>,
}
