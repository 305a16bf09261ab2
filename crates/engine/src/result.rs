//! What a finished run hands to its sinks: merged statistics, timings, the client's own CPU use,
//! the per-second series, and how it ended.

use crate::config::BenchConfig;
use crate::stats::{Snapshot, ThreadStats};

/// CPU time one worker thread spent, and over how long.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    pub user_s: f64,
    pub sys_s: f64,
    /// ready to run but waiting for a CPU (another process had it)
    pub wait_s: f64,
    pub wall_s: f64,
}

impl ThreadCpu {
    /// Fraction of the wall time the thread was on a CPU or waiting for one (0..1): never
    /// waiting for the server. Counting the wait keeps the measure true on a loaded machine,
    /// where a thread that always has work gets only part of a CPU.
    pub fn busy(&self) -> f64 {
        if self.wall_s > 0.0 {
            ((self.user_s + self.sys_s + self.wait_s) / self.wall_s).min(1.0)
        } else {
            0.0
        }
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
}
