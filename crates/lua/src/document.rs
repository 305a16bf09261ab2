//! The run document (`pgrig_document::document::RunDocument`) of a script's `run`: events as
//! transactions (ignored errors as retries, events restarted as retried), the event latencies
//! (moments, HDR percentiles and buckets), one entry per whole second (with its queries by
//! class and reconnects), each thread as a client
//! with its CPU time and run-queue wait and the self-check they raise, the queries by
//! sysbench's classes as `workload_counters`, and the script with its options as
//! `workload_options`. Workload `sysbench`; the script's path is `scripts[0].desc`. Built from
//! a run's [`Tally`], one host's or the merge of a multi-host run's segments.

use std::collections::BTreeMap;

use pgrig_document::document::*;
use pgrig_engine::result::ThreadCpu;

use crate::invocation::Invocation;
use crate::tally::Tally;

/// The counters' names in `workload_counters`: sysbench's report lines (one set of names for
/// the native and the Lua path).
pub use pgrig_workloads::sysbench::report::{
    QUERIES_OTHER as OTHER, QUERIES_READ as READS, QUERIES_WRITE as WRITES,
};

/// The document of a finished run (its [`Tally`]); `server_version` as the server reported it.
pub fn of(inv: &Invocation, t: &Tally, server_version: &str) -> RunDocument {
    let events = t.events;
    let cpus: Vec<ThreadCpu> = t.threads.iter().map(|t| t.cpu).collect();
    let (latency_ms, histogram) = latency(t);
    let transactions = Transactions {
        ok: events,
        retried: t.restarted,
        retries: t.errors,
        ..Transactions::default()
    };
    let tps = if t.elapsed_s > 0.0 {
        events as f64 / t.elapsed_s
    } else {
        0.0
    };
    let counters = BTreeMap::from([
        (READS.to_string(), t.reads),
        (WRITES.to_string(), t.writes),
        (OTHER.to_string(), t.other),
    ]);
    RunDocument {
        schema_version: SCHEMA_VERSION,
        pgrig_version: env!("CARGO_PKG_VERSION").into(),
        server_version: server_version.into(),
        interrupted: t.interrupted,
        workload: Some("sysbench".into()),
        options: run_options(inv),
        partitions: None,
        transactions,
        tps,
        duration_s: t.elapsed_s,
        initial_connection_ms: 0.0,
        connection_time_ms: 0.0,
        reconnects: t.reconnects,
        latency_ms,
        schedule_lag_ms: lag(t),
        aborted_clients: u32::from(t.fatal),
        scripts: vec![ScriptDoc {
            desc: inv.script.display().to_string(),
            weight: 1,
            transactions,
            tps,
            latency_ms,
            commands: Vec::new(),
        }],
        series: series(t),
        client_cpu: pgrig_engine::document::client_cpu(&cpus),
        self_check: pgrig_engine::document::client_checks(&cpus, "--threads"),
        latency_histogram: histogram,
        clients: (t.threads.iter().enumerate())
            .map(|(i, c)| ClientDoc {
                id: t.first_thread + i as u32,
                transactions: c.events,
                busy_s: c.busy_s,
                unfinished_s: c.unfinished_s,
            })
            .collect(),
        started_at_unix_s: Some(t.started_unix_s),
        type_series: Vec::new(),
        workload_counters: counters,
        server_xacts: None,
        workload_options: workload_options(inv, &t.options),
        workload_figures: None,
        complete: None,
        segments: None,
        unfinished_events: (t.forced || t.threads.iter().any(|c| c.unfinished_s.is_some())).then(
            || {
                t.threads
                    .iter()
                    .filter(|c| c.unfinished_s.is_some())
                    .count() as u64
            },
        ),
    }
}

/// The general options as the document's `options` (never a password).
fn run_options(inv: &Invocation) -> Options {
    Options {
        clients: inv.threads.max(1),
        threads: inv.threads.max(1) as usize,
        protocol: if inv.ps_mode_disable {
            "simple"
        } else {
            "extended"
        }
        .into(),
        transactions_per_client: None,
        duration_s: (inv.time > 0).then_some(inv.time),
        rate: (inv.rate > 0).then_some(inv.rate as f64),
        latency_limit_ms: None,
        max_tries: 0,
        connect_per_transaction: false,
        random_seed: u64::from(inv.rand_seed),
        scale: 0,
        host: inv.conn.host.clone(),
        port: inv.conn.port.clone(),
        user: inv.conn.user.clone(),
        failures_detailed: false,
        continue_on_error: false,
        progress_s: (inv.report_interval > 0).then_some(inv.report_interval),
        report_per_command: false,
    }
}

/// The script (`script`), its command-line limits, and its own options with their values.
fn workload_options(inv: &Invocation, options: &[(String, String)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = (options.iter().cloned()).collect();
    m.insert("script".into(), inv.script.display().to_string());
    m.insert("threads".into(), inv.threads.to_string());
    m.insert("events".into(), inv.events.to_string());
    m.insert("time".into(), inv.time.to_string());
    m.insert("rate".into(), inv.rate.to_string());
    m
}

/// The events' latency summary and histogram (µs buckets).
fn latency(t: &Tally) -> (LatencyMs, HistogramDoc) {
    let buckets = (t.hdr.iter_recorded())
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    let histogram = HistogramDoc {
        unit: "us".into(),
        buckets,
    };
    if t.events == 0 {
        return (LatencyMs::default(), histogram);
    }
    let n = t.events as f64;
    let mean_us = t.sum_ms * 1000.0 / n;
    let var = (t.sum_sq_us / n - mean_us * mean_us).max(0.0);
    let q = |p: f64| t.hdr.value_at_quantile(p) as f64 / 1000.0;
    let ms = LatencyMs {
        mean: t.sum_ms / n,
        stddev: var.sqrt() / 1000.0,
        min: t.min_ms,
        p50: q(0.5),
        p90: q(0.9),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        max: t.max_ms,
    };
    (ms, histogram)
}

/// `--rate`: how late events started against their schedule.
fn lag(t: &Tally) -> Lag {
    let (n, sum, max) = t.lag;
    if n == 0 {
        return Lag::default();
    }
    Lag {
        mean: sum / n as f64,
        max,
    }
}

fn series(t: &Tally) -> Vec<Second> {
    (t.seconds.iter().enumerate())
        .map(|(i, s)| Second {
            second: i as u64 + 1,
            tps: s.events,
            failed: 0,
            retries: s.errors,
            latency_ms_mean: if s.events > 0 {
                s.latency_sum_ms / s.events as f64
            } else {
                0.0
            },
            queries_read: Some(s.reads),
            queries_write: Some(s.writes),
            queries_other: Some(s.other),
            reconnects: Some(s.reconnects),
            ..Second::default()
        })
        .collect()
}
