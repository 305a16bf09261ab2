//! One finished run as stored and exported: the result document (the keys scripts rely on:
//! `study`, `point`, `repetition`, `round`, `tps`, `transactions`, `latency_ms`, `client_cpu`,
//! `relation_sizes`, plus collectors), its provenance, per-second series and merged histogram.

use serde_json::{json, Value};

use pgrig_engine::config::ScriptSource;
use pgrig_engine::result::RunResult;
use pgrig_engine::stats::LatencyMs;

use crate::plan::{PlannedRun, Point};
use crate::store::RunRecord;

/// What the collectors gathered around one run.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub server_stats: Value,
    pub wait_events: Value,
    pub server_processes: Value,
    pub relation_sizes: Value,
    /// share of sampled sessions waiting on locks
    pub lock_share: f64,
}

/// Matrix values of a point as a JSON object.
pub fn point_json(p: &Point) -> Value {
    let m: serde_json::Map<String, Value> = p
        .values
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(Value::Null)))
        .collect();
    Value::Object(m)
}

pub fn tps(r: &RunResult) -> f64 {
    if r.bench_duration_s > 0.0 {
        r.stats.total().counts.ok as f64 / r.bench_duration_s
    } else {
        0.0
    }
}

pub fn busiest_cpu(r: &RunResult) -> f64 {
    r.threads_cpu.iter().map(|c| c.busy()).fold(0.0, f64::max)
}

/// Everything about one run, ready for the store.
#[allow(clippy::too_many_arguments)]
pub fn build(
    study: &str,
    target: &str,
    point: &Point,
    run: &PlannedRun,
    r: &RunResult,
    c: &Collected,
    provenance: Value,
    started_unix: f64,
    finished_unix: f64,
) -> RunRecord {
    let total = r.stats.total();
    let k = &total.counts;
    let per_statement: Vec<Value> = r
        .scripts
        .iter()
        .zip(&r.stats.scripts)
        .flat_map(|(s, ss)| {
            s.command_texts
                .iter()
                .zip(&ss.commands)
                .map(move |(t, cs)| {
                    json!({"script": s.desc, "text": t, "executions": cs.latency.count,
                       "latency_ms_mean": cs.latency.mean() / 1000.0,
                       "failures": cs.failures, "retries": cs.retries})
                })
        })
        .collect();
    let w = &point.workload;
    let result = json!({
        "study": study,
        "target": target,
        "point": point_json(point),
        "point_index": point.index,
        "run_index": run.index,
        "repetition": run.repetition,
        "round": run.round,
        "tps": tps(r),
        "duration_s": r.bench_duration_s,
        "transactions": {
            "ok": k.ok, "failed": k.failed(), "skipped": k.skipped, "retried": k.retried,
            "retries": k.retries, "late": k.late,
            "failures": {"serialization": k.serialization_failures, "deadlock": k.deadlock_failures,
                         "other": k.other_failures},
        },
        "aborted_clients": r.aborted_clients,
        "latency_ms": LatencyMs::of(&total.latency, &r.stats.histogram()),
        "client_cpu": busiest_cpu(r),
        "client_threads": r.threads_cpu.iter().map(|t| json!({
            "user_s": t.user_s, "sys_s": t.sys_s, "wall_s": t.wall_s, "busy": t.busy()})).collect::<Vec<_>>(),
        "clients": r.config.clients,
        "threads": r.threads_cpu.len(),
        "protocol": r.config.mode.name(),
        "isolation": w.isolation.clone().unwrap_or_else(|| "server default".into()),
        "max_tries": r.config.max_tries,
        "seed": r.seed,
        "scale": r.scale,
        "server_cpus": w.server_cpus,
        "client_cpus": w.client_cpus,
        "settings": point.settings.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "server_version": r.server_version,
        "server_stats": c.server_stats,
        "wait_events": c.wait_events,
        "server_processes": c.server_processes,
        "relation_sizes": c.relation_sizes,
        "per_statement": per_statement,
    });
    let series: Vec<Value> = r
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"second": i + 1, "tps": s.counts.ok, "failed": s.counts.failed(),
                   "retries": s.counts.retries, "latency_ms_mean": s.latency.mean() / 1000.0})
        })
        .collect();
    let histogram: Vec<Value> = r
        .stats
        .histogram()
        .iter_recorded()
        .map(|v| json!([v.value_iterated_to(), v.count_at_value()]))
        .collect();
    RunRecord {
        run_index: run.index,
        point: point_json(point),
        repetition: run.repetition,
        round: run.round,
        target: target.to_string(),
        started_unix,
        finished_unix,
        tps: tps(r),
        result,
        provenance,
        series: Value::Array(series),
        histogram: json!({"unit": "us", "buckets": histogram}),
    }
}

/// The exact scripts of a run (builtin names, file paths with their text).
pub fn scripts_json(scripts: &[ScriptSource]) -> Value {
    Value::Array(
        scripts
            .iter()
            .map(|s| match s {
                ScriptSource::Builtin { name, weight } => {
                    json!({"builtin": name, "weight": weight})
                }
                ScriptSource::File { path, text, weight } => {
                    json!({"file": path, "weight": weight, "text": text})
                }
            })
            .collect(),
    )
}
