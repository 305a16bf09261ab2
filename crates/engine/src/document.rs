//! Builds the run document (`pgrig_document::document`, re-exported here) from a finished
//! [`RunResult`]: the engine's statistics summarised as plain numbers.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

pub use pgrig_document::document::*;

use crate::config::{Duration, ScriptSource};
use crate::result::{RunResult, ThreadCpu};
use crate::stats::{Counts, Moments, ScriptStats, Snapshot};

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
                unfinished_s: c.unfinished_s,
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
        unfinished_events: (r.extras.forced_shutdown).then(|| {
            (r.clients.iter())
                .filter(|c| c.unfinished_s.is_some())
                .count() as u64
        }),
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

/// The client's CPU figures of a run's threads (also the Lua path's).
pub fn client_cpu(threads: &[ThreadCpu]) -> ClientCpu {
    ClientCpu::of_threads(
        threads
            .iter()
            .map(|c| ThreadCpuDoc::new(c.user_s, c.sys_s, c.wait_s, c.wall_s))
            .collect(),
    )
}

/// The two client flags of a run's threads, with their warnings: a thread whose own CPU was the
/// limit (`client_saturated`), a thread that waited for a CPU (`host_contended`). `threads_hint`
/// names how to add threads (`-j` for pgbench's command line, `--threads` for sysbench's).
pub fn client_checks(threads: &[ThreadCpu], threads_hint: &str) -> SelfCheck {
    let mut check = SelfCheck::default();
    for (t, c) in threads.iter().enumerate() {
        if c.saturated() {
            check.client_saturated = true;
            check.warnings.push(format!(
                "client thread {t} was on a CPU {:.0}% of the run (CPU time {:.2} s in {:.2} s): the result may be limited by the client, not the server; use more threads ({threads_hint}) or run the client on another host",
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
    check
}

/// Warnings when the client, not the server, may have set the pace ([`client_checks`]), or
/// clients queued on TPC-B-like branch rows.
fn self_check(r: &RunResult) -> SelfCheck {
    let mut check = client_checks(&r.threads_cpu, "-j");
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
