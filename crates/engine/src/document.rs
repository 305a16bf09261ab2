//! The run document: what one finished run measured, built once from its [`RunResult`] and
//! rendered by every output — `--json` (the document serialised), pgbench's text report,
//! `pgrig run`'s summary and the study store's record. Plain data: latency distributions are
//! summarised here (moments and HDR percentiles, the histogram's buckets as numbers), so no
//! renderer sees the statistics' storage. Its fields are documented in `docs/run-document.md`;
//! adding a field keeps [`SCHEMA_VERSION`], renaming or removing one raises it.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::config::{Duration, ScriptSource};
use crate::result::{RunResult, ThreadCpu};
use crate::stats::{Counts, Moments, ScriptStats, Snapshot};

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

/// `sum(xact_commit + xact_rollback)` of `pg_stat_database` (every database, as HammerDB
/// reads it) between two samples taken during the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerXacts {
    /// when the first sample was taken, seconds after the run's start
    pub from_s: f64,
    /// when the second was taken (after the clients disconnected, so their counts are flushed)
    pub to_s: f64,
    /// the difference
    pub transactions: u64,
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
        let threads: Vec<ThreadCpu> = s.threads.iter().map(ThreadCpuDoc::reading).collect();
        client_cpu(&threads)
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
    fn reading(&self) -> ThreadCpu {
        ThreadCpu {
            user_s: self.user_s,
            sys_s: self.sys_s,
            wait_s: self.run_queue_wait_s,
            wall_s: self.wall_s,
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

impl RunDocument {
    /// The document of a finished run.
    pub fn of(r: &RunResult) -> RunDocument {
        let total = r.stats.total();
        let histogram = r.stats.histogram();
        RunDocument {
            schema_version: SCHEMA_VERSION,
            pgrig_version: env!("CARGO_PKG_VERSION").into(),
            server_version: r.server_version.clone(),
            interrupted: r.interrupted,
            workload: r.config.native.as_ref().map(|n| n.0.name().to_string()),
            options: options(r),
            partitions: r.partitions.as_ref().map(|(method, count)| Partitions {
                method: method.clone(),
                count: *count,
            }),
            transactions: transactions(&total.counts),
            tps: per_second(total.counts.ok, r.bench_duration_s),
            duration_s: r.bench_duration_s,
            initial_connection_ms: r.initial_conn_ms,
            connection_time_ms: r.stats.conn_time_us / 1000.0,
            reconnects: r.stats.reconnects,
            latency_ms: latency(&total.latency, &histogram),
            schedule_lag_ms: Lag {
                mean: total.lag.mean() / 1000.0,
                max: total.lag.max / 1000.0,
            },
            aborted_clients: r.aborted_clients,
            scripts: r
                .scripts
                .iter()
                .zip(&r.stats.scripts)
                .map(|(info, ss)| script(info, ss, r.bench_duration_s))
                .collect(),
            series: r.series.iter().enumerate().map(second).collect(),
            client_cpu: client_cpu(&r.threads_cpu),
            self_check: self_check(r),
            latency_histogram: HistogramDoc {
                unit: "us".into(),
                buckets: histogram
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect(),
            },
            clients: r
                .clients
                .iter()
                .map(|c| ClientDoc {
                    id: c.id,
                    transactions: c.transactions,
                    busy_s: c.busy_s,
                })
                .collect(),
            started_at_unix_s: r.extras.started_unix_s,
            type_series: type_series(r),
            workload_counters: r.extras.counters.clone(),
            server_xacts: None,
            workload_options: BTreeMap::new(),
            workload_figures: None,
            complete: r.extras.segments.as_ref().map(|s| s.missing.is_empty()),
            segments: r.extras.segments.clone(),
        }
    }
}

/// The per-second counts of each transaction type, as one series per type.
fn type_series(r: &RunResult) -> Vec<TypeSeries> {
    let per_second = &r.extras.series_by_type;
    if per_second.is_empty() {
        return Vec::new();
    }
    r.scripts
        .iter()
        .enumerate()
        .map(|(i, info)| {
            let at = |s: &Vec<crate::result::TypeSecond>| s.get(i).copied().unwrap_or_default();
            TypeSeries {
                desc: info.desc.clone(),
                ok: per_second.iter().map(|s| at(s).ok).collect(),
                rollbacks: per_second.iter().map(|s| at(s).rollbacks).collect(),
            }
        })
        .collect()
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

fn options(r: &RunResult) -> Options {
    let cfg = &r.config;
    let (transactions_per_client, duration_s) = match cfg.duration {
        Duration::Transactions(t) => (Some(t), None),
        Duration::Seconds(s) => (None, Some(s)),
    };
    Options {
        clients: cfg.clients,
        threads: r.threads_cpu.len(),
        protocol: cfg.mode.name().into(),
        transactions_per_client,
        duration_s,
        rate: cfg.rate,
        latency_limit_ms: cfg.latency_limit_us.map(|l| l as f64 / 1000.0),
        max_tries: cfg.max_tries,
        connect_per_transaction: cfg.connect_per_tx,
        random_seed: r.seed,
        scale: r.scale,
        host: cfg.conn.host.clone(),
        port: cfg.conn.port.clone(),
        user: cfg.conn.user.clone(),
        failures_detailed: cfg.failures_detailed,
        continue_on_error: cfg.continue_on_error,
        progress_s: cfg.progress,
        report_per_command: cfg.report_per_command,
    }
}

fn transactions(k: &Counts) -> Transactions {
    Transactions {
        ok: k.ok,
        failed: k.failed(),
        skipped: k.skipped,
        retried: k.retried,
        retries: k.retries,
        late: k.late,
        rollbacks: k.rollbacks,
        failures: Failures {
            serialization: k.serialization_failures,
            deadlock: k.deadlock_failures,
            other: k.other_failures,
        },
    }
}

/// Moments (µs) and the histogram (µs) of one set of transactions, in ms.
fn latency(m: &Moments, h: &Histogram<u64>) -> LatencyMs {
    if h.is_empty() || m.count == 0 {
        return LatencyMs {
            mean: m.mean() / 1000.0,
            stddev: m.stddev() / 1000.0,
            ..LatencyMs::default()
        };
    }
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
    LatencyMs {
        mean: m.mean() / 1000.0,
        stddev: m.stddev() / 1000.0,
        min: m.min / 1000.0,
        p50: q(0.5),
        p90: q(0.9),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        max: h.max() as f64 / 1000.0,
    }
}

fn script(info: &crate::result::ScriptInfo, ss: &ScriptStats, seconds: f64) -> ScriptDoc {
    ScriptDoc {
        desc: info.desc.clone(),
        weight: info.weight,
        transactions: transactions(&ss.snap.counts),
        tps: per_second(ss.snap.counts.ok, seconds),
        latency_ms: latency(&ss.snap.latency, &ss.histogram),
        commands: info
            .command_texts
            .iter()
            .zip(&ss.commands)
            .enumerate()
            .map(|(i, (text, c))| CommandDoc {
                text: text.clone(),
                executions: c.latency.count,
                latency_ms_mean: c.latency.mean() / 1000.0,
                failures: c.failures,
                retries: c.retries,
                latency_ms: ss.command_histograms.get(i).map(|h| latency(&c.latency, h)),
            })
            .collect(),
    }
}

fn second((i, s): (usize, &Snapshot)) -> Second {
    Second {
        second: i as u64 + 1,
        tps: s.counts.ok,
        failed: s.counts.failed(),
        retries: s.counts.retries,
        latency_ms_mean: s.latency.mean() / 1000.0,
        ..Second::default()
    }
}

fn client_cpu(threads: &[ThreadCpu]) -> ClientCpu {
    let max = |f: fn(&ThreadCpu) -> f64| threads.iter().map(f).fold(0.0, f64::max);
    ClientCpu {
        threads: threads
            .iter()
            .map(|c| ThreadCpuDoc {
                user_s: c.user_s,
                sys_s: c.sys_s,
                cpu_time_s: c.cpu_time_s(),
                run_queue_wait_s: c.wait_s,
                wall_s: c.wall_s,
                cpu_time: c.cpu_time(),
                run_queue_wait: c.run_queue_wait(),
            })
            .collect(),
        cpu_time_s: threads.iter().map(ThreadCpu::cpu_time_s).sum(),
        run_queue_wait_s: threads.iter().map(|c| c.wait_s).sum(),
        cpu_time: max(ThreadCpu::cpu_time),
        run_queue_wait: max(ThreadCpu::run_queue_wait),
    }
}

/// Warnings when the client, not the server, may have set the pace: a thread whose own CPU was
/// the limit (`client_saturated`), a thread that waited for a CPU (`host_contended`).
fn self_check(r: &RunResult) -> SelfCheck {
    let mut check = SelfCheck::default();
    for (t, c) in r.threads_cpu.iter().enumerate() {
        if c.saturated() {
            check.client_saturated = true;
            check.warnings.push(format!(
                "client thread {t} was on a CPU {:.0}% of the run (CPU time {:.2} s in {:.2} s): the result may be limited by the client, not the server; use more threads (-j) or run the client on another host",
                100.0 * c.cpu_time(),
                c.cpu_time_s(),
                c.wall_s
            ));
        }
        if c.contended() {
            check.host_contended = true;
            check.warnings.push(format!(
                "client thread {t} waited for a CPU {:.0}% of the run (run-queue wait {:.2} s, CPU time {:.2} s in {:.2} s): other work on the client host took its CPU, so the result may measure that contention; run the client on a quieter host or give it its own CPUs",
                100.0 * c.run_queue_wait(),
                c.wait_s,
                c.cpu_time_s(),
                c.wall_s
            ));
        }
    }
    let tpcb = r.config.native.is_none() && r.config.scripts.is_empty()
        || r.config.scripts.iter().any(|s| {
            matches!(s, ScriptSource::Builtin { name, .. } if name == "tpcb-like" || name == "simple-update")
        });
    if tpcb && r.config.clients as i64 > r.scale {
        check.branch_contention = true;
        check.warnings.push(format!(
            "{} clients on scale {}: every TPC-B-like transaction updates one of {} branch rows, so clients queue on row locks and the result measures that contention; use a scale of at least the number of clients",
            r.config.clients, r.scale, r.scale
        ));
    }
    check
}
