//! What a finished run hands to its sinks: merged statistics, timings, the client's own CPU use,
//! the per-second series, and how it ended.

use crate::config::BenchConfig;
use crate::stats::{Snapshot, ThreadStats};

pub use pgrig_document::client_cpu::{
    CONTENDED_RUN_QUEUE_WAIT, FLAG_MIN_WALL_S, SATURATED_CPU_TIME,
};

/// What one worker thread spent over the run: CPU time (user + system, `RUSAGE_THREAD`) and
/// run-queue wait (ready to run, waiting for a CPU: schedstat's run delay), over `wall_s`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    pub user_s: f64,
    pub sys_s: f64,
    /// run-queue wait: ready to run but waiting for a CPU (another thread or process had it)
    pub wait_s: f64,
    pub wall_s: f64,
}

impl ThreadCpu {
    /// CPU time, seconds (user + system).
    pub fn cpu_time_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    /// CPU time as a share of the wall time (0..1; 1 = on a CPU all the run).
    pub fn cpu_time(&self) -> f64 {
        share(self.cpu_time_s(), self.wall_s)
    }

    /// Run-queue wait as a share of the wall time (0..1).
    pub fn run_queue_wait(&self) -> f64 {
        share(self.wait_s, self.wall_s)
    }

    /// On a CPU at least [`SATURATED_CPU_TIME`] of a run long enough to judge.
    pub fn saturated(&self) -> bool {
        self.wall_s >= FLAG_MIN_WALL_S && self.cpu_time() >= SATURATED_CPU_TIME
    }

    /// Waited for a CPU at least [`CONTENDED_RUN_QUEUE_WAIT`] of a run long enough to judge.
    pub fn contended(&self) -> bool {
        self.wall_s >= FLAG_MIN_WALL_S && self.run_queue_wait() >= CONTENDED_RUN_QUEUE_WAIT
    }

    /// What was spent since `before` (readings of the same thread).
    pub fn since(&self, before: &ThreadCpu) -> ThreadCpu {
        ThreadCpu {
            user_s: self.user_s - before.user_s,
            sys_s: self.sys_s - before.sys_s,
            wait_s: self.wait_s - before.wait_s,
            wall_s: self.wall_s - before.wall_s,
        }
    }
}

/// `part / whole`, capped to 0..1 (readings taken a moment apart can overshoot slightly).
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        (part / whole).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// One client's share of the run (sysbench's "threads fairness").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientTally {
    pub id: u32,
    /// transactions done (ok + skipped + failed)
    pub transactions: u64,
    /// latency of its successful transactions, summed, in seconds
    pub busy_s: f64,
    /// cut off by `BenchConfig::forced_end_s` in a transaction: how long it had run, s
    pub unfinished_s: Option<f64>,
}

/// Scripts as the report names them.
#[derive(Clone, Debug)]
pub struct ScriptInfo {
    pub desc: String,
    pub weight: i64,
    /// `-r` text of each command
    pub command_texts: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub config: BenchConfig,
    pub scripts: Vec<ScriptInfo>,
    pub server_version: String,
    /// `:scale` as used (from pgbench_branches for builtins)
    pub scale: i64,
    /// `(method, count)` when pgbench_accounts is partitioned (builtin scripts only)
    pub partitions: Option<(String, i64)>,
    pub stats: ThreadStats,
    /// seconds from the earliest thread's benchmark start to the end
    pub bench_duration_s: f64,
    /// ms from run start until the first thread started benchmarking (initial connections)
    pub initial_conn_ms: f64,
    pub threads_cpu: Vec<ThreadCpu>,
    /// per-second deltas (index 0 = first second)
    pub series: Vec<Snapshot>,
    /// clients that did not finish normally
    pub aborted_clients: u32,
    /// every client's share, by client id
    pub clients: Vec<ClientTally>,
    pub seed: u64,
    /// stopped early from outside (Ctrl-C): the figures cover what completed before
    pub interrupted: bool,
    /// what a native workload's run adds (empty for scripts)
    pub extras: RunExtras,
}

/// Per transaction type, what completed in one second of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeSecond {
    /// successful transactions
    pub ok: u64,
    /// of those, the ones that ended in the workload's own rollback
    pub rollbacks: u64,
}

/// What a run records beyond pgbench's figures: when it started, each transaction type's
/// per-second counts (native workloads), and the counters the programs kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunExtras {
    /// wall-clock start of the measured run (the first worker's benchmark start), Unix seconds
    pub started_unix_s: Option<f64>,
    /// per second (index 0 = first), per script / transaction type (native workloads only)
    pub series_by_type: Vec<Vec<TypeSecond>>,
    /// the native programs' own counters (TPC-C's districts skipped by Delivery), summed over
    /// clients
    pub counters: std::collections::BTreeMap<String, u64>,
    /// a run merged from segments (`bench --segments N`): which segments the figures cover
    pub segments: Option<pgrig_document::document::SegmentsDoc>,
    /// `BenchConfig::forced_end_s` cut clients off (`ClientTally::unfinished_s`: the
    /// transactions they were running)
    pub forced_shutdown: bool,
}
