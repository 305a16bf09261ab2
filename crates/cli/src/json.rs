//! `--json`: the whole result as one JSON document (options, counts, tps, latency moments and HDR
//! percentiles overall / per script / per command, the per-second series, failures by kind, and the
//! client's own CPU time per worker thread). Never contains a password.

use hdrhistogram::Histogram;
use serde_json::{json, Value};

use pgrig_engine::config::Duration;
use pgrig_engine::result::RunResult;
use pgrig_engine::stats::{Counts, LatencyMs, Moments};

fn latency(m: &Moments, h: &Histogram<u64>) -> Value {
    serde_json::to_value(LatencyMs::of(m, h)).unwrap_or(Value::Null)
}

fn counts(k: &Counts) -> Value {
    json!({
        "ok": k.ok, "failed": k.failed(), "skipped": k.skipped, "retried": k.retried, "retries": k.retries,
        "late": k.late,
        "failures": {"serialization": k.serialization_failures, "deadlock": k.deadlock_failures, "other": k.other_failures},
    })
}

pub fn render(r: &RunResult) -> Value {
    let cfg = &r.config;
    let tps = if r.bench_duration_s > 0.0 {
        r.stats.total().counts.ok as f64 / r.bench_duration_s
    } else {
        0.0
    };
    let scripts: Vec<Value> = r
        .scripts
        .iter()
        .zip(&r.stats.scripts)
        .map(|(s, ss)| {
            let commands: Vec<Value> = s
                .command_texts
                .iter()
                .zip(&ss.commands)
                .map(|(t, c)| {
                    json!({"text": t, "executions": c.latency.count, "latency_ms_mean": c.latency.mean() / 1000.0,
                           "failures": c.failures, "retries": c.retries})
                })
                .collect();
            json!({
                "desc": s.desc, "weight": s.weight,
                "transactions": counts(&ss.snap.counts),
                "tps": if r.bench_duration_s > 0.0 { ss.snap.counts.ok as f64 / r.bench_duration_s } else { 0.0 },
                "latency_ms": latency(&ss.snap.latency, &ss.histogram),
                "commands": commands,
            })
        })
        .collect();
    let series: Vec<Value> = r
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"second": i + 1, "tps": s.counts.ok, "failed": s.counts.failed(), "retries": s.counts.retries,
                   "latency_ms_mean": s.latency.mean() / 1000.0})
        })
        .collect();
    let cpu: Vec<Value> = r
        .threads_cpu
        .iter()
        .map(
            |c| json!({"user_s": c.user_s, "sys_s": c.sys_s, "wall_s": c.wall_s, "busy": c.busy()}),
        )
        .collect();
    let (transactions_per_client, duration_s) = match cfg.duration {
        Duration::Transactions(t) => (Some(t), None),
        Duration::Seconds(s) => (None, Some(s)),
    };
    json!({
        "pgrig_version": env!("CARGO_PKG_VERSION"),
        "server_version": r.server_version,
        "options": {
            "clients": cfg.clients, "threads": r.threads_cpu.len(), "protocol": cfg.mode.name(),
            "transactions_per_client": transactions_per_client, "duration_s": duration_s,
            "rate": cfg.rate, "latency_limit_ms": cfg.latency_limit_us.map(|l| l as f64 / 1000.0),
            "max_tries": cfg.max_tries, "connect_per_transaction": cfg.connect_per_tx,
            "random_seed": r.seed, "scale": r.scale,
            "host": cfg.conn.host, "port": cfg.conn.port, "user": cfg.conn.user,
        },
        "transactions": counts(&r.stats.total().counts),
        "tps": tps,
        "duration_s": r.bench_duration_s,
        "initial_connection_ms": r.initial_conn_ms,
        "latency_ms": latency(&r.stats.total().latency, &r.stats.histogram()),
        "aborted_clients": r.aborted_clients,
        "scripts": scripts,
        "series": series,
        "client_cpu": {
            "threads": cpu,
            "busiest": r.threads_cpu.iter().map(|c| c.busy()).fold(0.0, f64::max),
        },
    })
}
