//! One finished run as stored and exported, rendered from its run document
//! (`pgrig_engine::document`): the result (the keys scripts rely on: `study`, `point`,
//! `repetition`, `round`, `tps`, `transactions`, `latency_ms`, `client_cpu_time`, `client_run_queue_wait`, `relation_sizes`,
//! plus collectors; mapping in docs/run-document.md), its provenance, per-second series and
//! merged histogram.

use serde_json::{json, Value};

use pgrig_engine::config::ScriptSource;
use pgrig_engine::document::RunDocument;

use crate::managed::Managed;
use crate::plan::{Plan, PlannedRun, Point};
use crate::spec::Study;
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
    /// `[collect] profile`: the provenance's `profiles` (null when not profiled)
    pub profiles: Value,
    /// `[collect] consistency`: `[{check, passed, line}]` (null when not checked)
    pub consistency: Value,
    /// the server's readings around each second of the run (the series' server figures)
    pub server_seconds: Option<crate::collect::server_seconds::Readings>,
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

/// Everything about one run, ready for the store.
#[allow(clippy::too_many_arguments)]
pub fn build(
    study: &str,
    target: &str,
    point: &Point,
    run: &PlannedRun,
    doc: &RunDocument,
    c: &Collected,
    provenance: Value,
    started_unix: f64,
    finished_unix: f64,
) -> RunRecord {
    let w = &point.workload;
    let o = &doc.options;
    let per_statement: Vec<Value> = doc
        .scripts
        .iter()
        .flat_map(|s| {
            s.commands.iter().map(move |c| {
                json!({"script": s.desc, "text": c.text, "executions": c.executions,
                       "latency_ms_mean": c.latency_ms_mean,
                       "failures": c.failures, "retries": c.retries})
            })
        })
        .collect();
    let mut result = json!({
        "study": study,
        "target": target,
        "point": point_json(point),
        "point_index": point.index,
        "step": point.step.as_ref().map(|s| s.name.clone()),
        "step_index": point.step.as_ref().map(|s| s.index),
        "run_index": run.index,
        "repetition": run.repetition,
        "round": run.round,
        "tps": doc.tps,
        "duration_s": doc.duration_s,
        "transactions": doc.transactions,
        "aborted_clients": doc.aborted_clients,
        "latency_ms": doc.latency_ms,
        "client_cpu_time": doc.client_cpu.cpu_time,
        "client_run_queue_wait": doc.client_cpu.run_queue_wait,
        "client_threads": doc.client_cpu.threads,
        "clients": o.clients,
        "threads": o.threads,
        "protocol": o.protocol,
        "isolation": w.isolation.clone().unwrap_or_else(|| "server default".into()),
        "max_tries": o.max_tries,
        "seed": o.random_seed,
        "scale": o.scale,
        "server_cpus": w.server_cpus,
        "client_cpus": w.client_cpus,
        "settings": point.settings.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "server_version": doc.server_version,
        "server_stats": c.server_stats,
        "wait_events": c.wait_events,
        "server_processes": c.server_processes,
        "relation_sizes": c.relation_sizes,
        "consistency": c.consistency,
        "per_statement": per_statement,
    });
    workload_fields(&mut result, doc);
    RunRecord {
        run_index: run.index,
        point: point_json(point),
        repetition: run.repetition,
        round: run.round,
        target: target.to_string(),
        started_unix,
        finished_unix,
        tps: doc.tps,
        result,
        provenance,
        series: serde_json::to_value(&doc.series).unwrap_or(Value::Null),
        histogram: serde_json::to_value(&doc.latency_histogram).unwrap_or(Value::Null),
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

/// Where a run comes from: the study, its plan and base directory, the host and the server's
/// version and non-default settings.
pub struct Origin<'a> {
    pub study: &'a Study,
    pub plan: &'a Plan,
    pub base_dir: &'a std::path::Path,
    pub host: &'a Value,
    /// `version` and non-default `settings` of the server
    pub server: &'a Value,
}

/// What every stored run's provenance holds (a script run adds its scripts and seed, a query
/// run its queries).
pub fn provenance(
    o: &Origin,
    m: &Managed,
    point: &Point,
    run: &PlannedRun,
) -> serde_json::Map<String, Value> {
    let v = json!({
        "pgrig_version": env!("CARGO_PKG_VERSION"),
        "server_version": o.server["version"],
        "server_settings": o.server["settings"],
        "analyze": o.server.get("analyze"),
        "target": m.provenance(),
        "host": o.host,
        "study": {"name": o.study.spec.name, "file": o.study.file,
                  "base_dir": o.base_dir.display().to_string(), "points": o.plan.points.len(),
                  "repetitions": o.plan.repetitions},
        "point": point_json(point),
        "repetition": run.repetition,
        "round": run.round,
        "run_index": run.index,
        "workload": serde_json::to_value(&point.workload).unwrap_or(Value::Null),
        "server_cpu_list": m.server_cpu_list(),
    });
    match v {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The workload's own counters (`workload_counters`: a sysbench test's or script's queries
/// by class, TPC-C's skipped districts) when it kept any; a sysbench script's run (`workload`
/// = `sysbench`) also names the script's options it ran with (`workload_options`).
fn workload_fields(result: &mut Value, doc: &RunDocument) {
    let Value::Object(m) = result else {
        return;
    };
    if !doc.workload_counters.is_empty() {
        m.insert("workload_counters".into(), json!(doc.workload_counters));
    }
    if doc.workload.as_deref() == Some("sysbench") {
        m.insert("workload".into(), json!(doc.workload));
        m.insert("workload_options".into(), json!(doc.workload_options));
    }
}
