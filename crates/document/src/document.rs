//! The run document: what one finished run measured, built once from the engine's run result (`pgrig_engine::document::of`) and
//! rendered by every output — `--json` (the document serialised), pgbench's text report,
//! `pgrig run`'s summary and the study store's record. Plain data: latency distributions are
//! summarised here (moments and HDR percentiles, the histogram's buckets as numbers), so no
//! renderer sees the statistics' storage. Its fields are documented in `docs/run-document.md`;
//! adding a field keeps [`SCHEMA_VERSION`], renaming or removing one raises it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Version of the document's shape (`schema_version`).
pub const SCHEMA_VERSION: u32 = 2;

/// One run, as every output shows it. Reads documents written before `schema_version` existed
/// too (the fields they lack take their defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// 0 when read from a document written before the version existed
    #[serde(default)]
    pub schema_version: u32,
    pub pgrig_version: String,
    pub server_version: String,
    /// stopped early by Ctrl-C: the figures cover the transactions completed before
    #[serde(default)]
    pub interrupted: bool,
    /// the native workload run (`oltp_read_write`, `ycsb-a`, `tpcc`); absent for scripts, whose
    /// names are in `scripts`
    #[serde(default)]
    pub workload: Option<String>,
    pub options: Options,
    /// how pgbench_accounts is partitioned (builtin scripts only; `None` when it is not)
    #[serde(default)]
    pub partitions: Option<Partitions>,
    pub transactions: Transactions,
    /// successful transactions per second of `duration_s`
    pub tps: f64,
    /// seconds from the first thread's benchmark start to the end
    pub duration_s: f64,
    /// ms until the first thread started benchmarking (initial connections)
    pub initial_connection_ms: f64,
    /// `-C`: connect and disconnect time summed over all transactions, ms
    #[serde(default)]
    pub connection_time_ms: f64,
    /// connections a native workload closed and opened again between transactions
    /// (sysbench's `--reconnect`)
    #[serde(default)]
    pub reconnects: u64,
    /// latency of successful transactions
    pub latency_ms: LatencyMs,
    /// `-R`: how late transactions started against their schedule
    #[serde(default)]
    pub schedule_lag_ms: Lag,
    pub aborted_clients: u32,
    pub scripts: Vec<ScriptDoc>,
    /// one entry per whole second of the run
    pub series: Vec<Second>,
    pub client_cpu: ClientCpu,
    #[serde(default)]
    pub self_check: SelfCheck,
    /// the merged latency histogram of successful transactions
    #[serde(default)]
    pub latency_histogram: HistogramDoc,
    /// every client's share of the run, by client id
    #[serde(default)]
    pub clients: Vec<ClientDoc>,
    /// wall-clock start of the measured run, Unix seconds (absent in constructed documents)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_s: Option<f64>,
    /// native workloads: per transaction type, its completions in each whole second
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_series: Vec<TypeSeries>,
    /// native workloads: the programs' own counters, summed over clients
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_counters: BTreeMap<String, u64>,
    /// the server's transactions (`pg_stat_database`) over part of the run, sampled by the
    /// front end (`pgrig run` with TPC-C: the steady window)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_xacts: Option<ServerXacts>,
    /// native workloads: the `-o` options the run was given (set by the front end)
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_options: BTreeMap<String, String>,
    /// native workloads: the family's own figures (TPC-C's NOPM, TPM, efficiency...), set by
    /// the front end from this document
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_figures: Option<serde_json::Value>,
    /// a run merged from segments: whether every segment's result is in the figures (absent for
    /// a single-host run)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// a run merged from segments: which segments the figures cover and which are missing
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<SegmentsDoc>,
    /// sysbench's `--forced-shutdown` (or, for a Lua script, a Ctrl-C that an event outlasted)
    /// cut the run short: how many events were still running then (not in `transactions` nor
    /// the latencies; `duration_s` ends at the cut); absent when the run ended otherwise
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished_events: Option<u64>,
}

/// The segments of a run spread over several client hosts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentsDoc {
    /// segments the run was split into
    pub count: u32,
    /// segments whose results are merged into the figures
    pub merged: Vec<u32>,
    /// segments that handed in no result (died, went silent, failed)
    pub missing: Vec<u32>,
}

/// The run database's `xact_commit + xact_rollback` (`pg_stat_database`) between two readings
/// taken during the run, less pgrig's own readings in between: the workload's transactions as
/// the server counted them (HammerDB sums every database and counts its own samples).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerXacts {
    /// when the first sample was taken, seconds after the run's start
    pub from_s: f64,
    /// when the run ended (the count is read once the clients' backends have exited, so their
    /// counts are flushed)
    pub to_s: f64,
    /// the counter's move less pgrig's own readings (older documents: every database's move)
    pub transactions: u64,
    /// the counter's move between the two readings
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_counted: Option<u64>,
    /// pgrig's own readings (one transaction each) inside the window
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgrig_readings: Option<u64>,
}

/// One transaction type's completions per whole second (the seconds of `series`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeSeries {
    /// the type's name (a `scripts[].desc`)
    pub desc: String,
    /// successful transactions completed in each second (index 0 = second 1)
    pub ok: Vec<u64>,
    /// of those, the ones that ended in the workload's own rollback
    pub rollbacks: Vec<u64>,
}

/// One client's share of the run (sysbench's "threads fairness").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientDoc {
    pub id: u32,
    /// transactions done (ok + skipped + failed)
    pub transactions: u64,
    /// latency of its successful transactions, summed
    pub busy_s: f64,
    /// a run ended by sysbench's `--forced-shutdown`: the event this client was still running
    /// then, and how long it had run (s); absent otherwise
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished_s: Option<f64>,
}

/// The options the run was made with (never a password or a connection string).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Options {
    pub clients: u32,
    /// worker threads used
    pub threads: usize,
    /// query mode: simple, extended or prepared
    pub protocol: String,
    /// `-t` (absent under `-T`)
    pub transactions_per_client: Option<u64>,
    /// `-T` (absent under `-t`)
    pub duration_s: Option<u64>,
    /// `-R`, transactions per second over all clients
    pub rate: Option<f64>,
    /// `-L`
    pub latency_limit_ms: Option<f64>,
    /// `--max-tries` (0 = unlimited)
    pub max_tries: u32,
    /// `-C`
    pub connect_per_transaction: bool,
    /// the seed actually used
    pub random_seed: u64,
    /// `:scale` as used
    pub scale: i64,
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    /// `--failures-detailed`
    #[serde(default)]
    pub failures_detailed: bool,
    /// `--continue-on-error`
    #[serde(default)]
    pub continue_on_error: bool,
    /// `-P`, seconds between progress lines
    #[serde(default)]
    pub progress_s: Option<u32>,
    /// `-r`
    #[serde(default)]
    pub report_per_command: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partitions {
    /// `range` or `hash`
    pub method: String,
    pub count: i64,
}

/// Transaction outcomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transactions {
    pub ok: u64,
    pub failed: u64,
    /// `-L` with `-R`: not sent because already too late
    pub skipped: u64,
    /// transactions retried at least once
    pub retried: u64,
    /// retries in total
    pub retries: u64,
    /// successful transactions above the `-L` limit
    pub late: u64,
    /// successful native transactions that ended in the workload's own rollback (TPC-C's
    /// unused item)
    #[serde(default)]
    pub rollbacks: u64,
    pub failures: Failures,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Failures {
    pub serialization: u64,
    pub deadlock: u64,
    pub other: u64,
}

impl Transactions {
    /// Everything that counts against `-t`: ok + skipped + failed.
    pub fn total(&self) -> u64 {
        self.ok + self.skipped + self.failed
    }
}

/// A latency summary in milliseconds: moments over every transaction, percentiles and max from
/// the HDR histogram (3 significant digits); all 0 when nothing was recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

/// Schedule lag (`-R`) in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lag {
    pub mean: f64,
    pub max: f64,
}

/// One script of the run (`-b`/`-f`), with its share of the figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScriptDoc {
    pub desc: String,
    pub weight: i64,
    pub transactions: Transactions,
    pub tps: f64,
    pub latency_ms: LatencyMs,
    pub commands: Vec<CommandDoc>,
}

/// One command of a script (always present; its figures are measured under `-r` only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandDoc {
    /// the command's first line, as pgbench's `-r` report shows it
    pub text: String,
    pub executions: u64,
    pub latency_ms_mean: f64,
    pub failures: u64,
    pub retries: u64,
    /// the command's latency distribution (native workload statements; script commands under
    /// `-r`)
    #[serde(default)]
    pub latency_ms: Option<LatencyMs>,
}

/// One second of the run. The server's figures are filled in by a front end that sampled the
/// server alongside the run (`pgrig run`, studies); absent (and not written) otherwise, so older
/// documents read as before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// 1 = the first second
    pub second: u64,
    /// successful transactions completed in this second
    pub tps: u64,
    pub failed: u64,
    pub retries: u64,
    pub latency_ms_mean: f64,
    /// checkpoints the server's checkpointer counted as done in this second
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<u64>,
    /// WAL written in this second (the server's insert position moved by this many bytes)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<u64>,
    /// the server's processes' CPU time in this second over its length: CPUs busy
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<f64>,
    /// sysbench Lua scripts: the statements completed in this second by sysbench's classes
    /// (read, write, other) and the reconnects, as the interval lines count them
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries_read: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries_write: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries_other: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnects: Option<u64>,
}

/// The client's own CPU, under two names: CPU time (user + system time of each worker thread)
/// and run-queue wait (time a worker thread was ready to run but waited for a CPU). Read back,
/// every figure is recomputed from `threads` (documents before schema 2 stored `wait_s` and a
/// `busy`/`busiest` share that mixed the two; they are read as the two figures).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredClientCpu")]
pub struct ClientCpu {
    /// one entry per worker thread
    pub threads: Vec<ThreadCpuDoc>,
    /// CPU time of all worker threads, seconds
    pub cpu_time_s: f64,
    /// run-queue wait of all worker threads, seconds
    pub run_queue_wait_s: f64,
    /// the largest `cpu_time` of the threads (0..1; 1 = a thread was on a CPU all the run)
    pub cpu_time: f64,
    /// the largest `run_queue_wait` of the threads (0..1)
    pub run_queue_wait: f64,
}

/// What [`ClientCpu`] is read from: its threads.
#[derive(Deserialize)]
struct StoredClientCpu {
    #[serde(default)]
    threads: Vec<ThreadCpuDoc>,
}

impl From<StoredClientCpu> for ClientCpu {
    fn from(s: StoredClientCpu) -> ClientCpu {
        let threads = s
            .threads
            .iter()
            .map(|t| ThreadCpuDoc::new(t.user_s, t.sys_s, t.run_queue_wait_s, t.wall_s));
        ClientCpu::of_threads(threads.collect())
    }
}

impl ClientCpu {
    /// The figures of these threads: sums and, for the shares, the largest of any thread.
    pub fn of_threads(threads: Vec<ThreadCpuDoc>) -> ClientCpu {
        let max = |f: fn(&ThreadCpuDoc) -> f64| threads.iter().map(f).fold(0.0, f64::max);
        ClientCpu {
            cpu_time_s: threads.iter().map(|t| t.cpu_time_s).sum(),
            run_queue_wait_s: threads.iter().map(|t| t.run_queue_wait_s).sum(),
            cpu_time: max(|t| t.cpu_time),
            run_queue_wait: max(|t| t.run_queue_wait),
            threads,
        }
    }
}

/// One worker thread's CPU time and run-queue wait over the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadCpuDoc {
    pub user_s: f64,
    pub sys_s: f64,
    /// user + system (absent before schema 2: read as 0, recomputed from the two)
    #[serde(default)]
    pub cpu_time_s: f64,
    /// ready to run but waiting for a CPU (`wait_s` before schema 2; absent in the first
    /// documents: 0)
    #[serde(default, alias = "wait_s")]
    pub run_queue_wait_s: f64,
    pub wall_s: f64,
    /// cpu_time_s / wall_s, 0..1
    #[serde(default)]
    pub cpu_time: f64,
    /// run_queue_wait_s / wall_s, 0..1
    #[serde(default)]
    pub run_queue_wait: f64,
}

impl ThreadCpuDoc {
    /// One thread's figures from its readings (seconds): the shares are of `wall_s`, capped to
    /// 0..1 (readings taken a moment apart can overshoot slightly).
    pub fn new(user_s: f64, sys_s: f64, run_queue_wait_s: f64, wall_s: f64) -> ThreadCpuDoc {
        let share = |part: f64| {
            if wall_s > 0.0 {
                (part / wall_s).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        ThreadCpuDoc {
            user_s,
            sys_s,
            cpu_time_s: user_s + sys_s,
            run_queue_wait_s,
            wall_s,
            cpu_time: share(user_s + sys_s),
            run_queue_wait: share(run_queue_wait_s),
        }
    }
}

/// pgrig's client self-check: signs that the client, not the server, set the pace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfCheck {
    /// a worker thread's CPU time was at least 90 % of a run of at least 0.5 s: the client's
    /// own CPU was the limit
    pub client_saturated: bool,
    /// a worker thread's run-queue wait was at least 10 % of a run of at least 0.5 s: other
    /// work on the client host took the CPU from it
    #[serde(default)]
    pub host_contended: bool,
    /// TPC-B-like clients outnumber the branch rows they update (row-lock queueing)
    pub branch_contention: bool,
    /// the warnings, as printed
    pub warnings: Vec<String>,
}

/// A histogram as plain numbers: `[value, count]` pairs, `value` the bucket's upper end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramDoc {
    /// `us`
    pub unit: String,
    pub buckets: Vec<(u64, u64)>,
}
