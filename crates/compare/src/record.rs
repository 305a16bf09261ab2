//! The one place that reads stored run documents (`Store::show`'s JSON): each run becomes a
//! [`Sample`] with its metric values, its invalid-run flags (the rules of the study's summary
//! table) and what identifies its workload. When the run document changes shape, adapt here.

use std::collections::BTreeMap;

use pgrig_results::store::text_hash;
use pgrig_results::summary;
use serde_json::Value;

use crate::metric::{Metric, METRICS};

/// Invalid-run flags, named as `pgrig study`'s table names them.
pub use pgrig_results::client_cpu::{CLIENT_SATURATED, HOST_CONTENDED};
pub const HIGH_SPREAD: &str = "high-spread";
pub const FAILURES: &str = "failures";
pub const CONTENTION: &str = "contention";

/// Share of sampled sessions waiting on locks above which a run counts as contended.
const LOCK_SHARE: f64 = 0.2;
/// Coefficient of variation (%) of tps across repetitions above which the spread is high.
pub const HIGH_CV_PCT: f64 = 10.0;

/// One stored run, as compare uses it.
#[derive(Debug, Clone)]
pub struct Sample {
    pub run_id: i64,
    pub study: String,
    pub target: String,
    pub point: Value,
    pub round: u64,
    pub values: BTreeMap<&'static str, f64>,
    /// per-run flags (client-saturated, host-contended, failures, contention)
    pub flags: Vec<&'static str>,
    /// what ran, for refusing to compare different workloads: the scripts (builtin name or
    /// file text, with weights) and `-D` defines; `None` when the run does not record them
    pub workload: Option<String>,
    /// when the run started and finished (the store's UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, which
    /// sorts as text); `None` for documents without them
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

impl Sample {
    pub fn from_doc(doc: &Value) -> Sample {
        let values = METRICS
            .iter()
            .filter_map(|m| value(m, doc).map(|v| (m.name, v)))
            .collect();
        Sample {
            run_id: doc["run_id"].as_i64().unwrap_or(0),
            study: doc["study"].as_str().unwrap_or("").to_string(),
            target: doc["target"].as_str().unwrap_or("").to_string(),
            point: doc["point"].clone(),
            round: doc["round"].as_u64().unwrap_or(1),
            values,
            flags: flags(doc),
            workload: workload(doc),
            started_at: doc["started_at"].as_str().map(str::to_string),
            finished_at: doc["finished_at"].as_str().map(str::to_string),
        }
    }
}

fn num(doc: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(doc, |v, p| v.get(p))?.as_f64()
}

fn per_tx(doc: &Value, path: &[&str]) -> Option<f64> {
    let ok = num(doc, &["transactions", "ok"])?;
    (ok > 0.0).then_some(num(doc, path)? / ok)
}

/// The value of `m` in one run document, if it records it.
pub fn value(m: &Metric, doc: &Value) -> Option<f64> {
    match m.name {
        "tps" => num(doc, &["tps"]),
        "latency_avg" => num(doc, &["latency_ms", "mean"]),
        "p50" | "p90" | "p95" | "p99" | "p99_9" => num(doc, &["latency_ms", m.name]),
        "latency_max" => num(doc, &["latency_ms", "max"]),
        "client_cpu_time" => pgrig_results::client_cpu::of(doc).map(|c| c.cpu_time),
        "client_run_queue_wait" => pgrig_results::client_cpu::of(doc).map(|c| c.run_queue_wait),
        "server_cpu" => num(doc, &["server_processes", "cpus_busy"]),
        "failures" => num(doc, &["transactions", "failed"]),
        "retries" => num(doc, &["transactions", "retries"]),
        "wal_bytes_per_tx" => per_tx(doc, &["server_stats", "wal", "wal_bytes"]),
        "wal_fpi_per_tx" => per_tx(doc, &["server_stats", "wal", "wal_fpi"]),
        "blocks_read_per_tx" => per_tx(doc, &["server_stats", "database", "blocks_read"]),
        _ => None,
    }
}

fn flags(doc: &Value) -> Vec<&'static str> {
    let mut f = pgrig_results::client_cpu::of(doc)
        .unwrap_or_default()
        .flags();
    let failed = num(doc, &["transactions", "failed"]).unwrap_or(0.0);
    if failed > 0.0 || num(doc, &["aborted_clients"]).unwrap_or(0.0) > 0.0 {
        f.push(FAILURES);
    }
    if num(doc, &["transactions", "retries"]).unwrap_or(0.0) > 0.0
        || summary::lock_share(doc) > LOCK_SHARE
    {
        f.push(CONTENTION);
    }
    f
}

/// The workload's identity and a short description, from the provenance's scripts.
fn workload(doc: &Value) -> Option<String> {
    let scripts = doc["provenance"]["scripts"].as_array()?;
    let mut parts: Vec<String> = scripts
        .iter()
        .map(|s| {
            let weight = s["weight"].as_u64().unwrap_or(1);
            let what = match (s["builtin"].as_str(), s["file"].as_str()) {
                (Some(b), _) => format!("builtin {b}"),
                (None, Some(f)) => {
                    format!("{f} (text {})", text_hash(s["text"].as_str().unwrap_or("")))
                }
                _ => s.to_string(),
            };
            if weight == 1 {
                what
            } else {
                format!("{what}@{weight}")
            }
        })
        .collect();
    if let Some(d) = doc["provenance"]["workload"]["defines"].as_object() {
        parts.extend(d.iter().map(|(k, v)| format!("-D {k}={v}")));
    }
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metrics_flags_and_workload_from_a_stored_run() {
        let doc = json!({
            "run_id": 7, "study": "s", "target": "local", "round": 1, "point": {"clients": 4},
            "tps": 100.0, "client_cpu_time": 0.95, "client_run_queue_wait": 0.2,
            "aborted_clients": 0,
            "latency_ms": {"mean": 2.0, "p50": 1.5, "p99": 9.0, "max": 20.0},
            "transactions": {"ok": 200, "failed": 1, "retries": 0},
            "server_stats": {"wal": {"wal_bytes": 50000, "wal_fpi": 20}},
            "wait_events": {"events": {"Lock:tuple": 3, "CPU:running": 7}},
            "provenance": {"scripts": [{"builtin": "tpcb-like", "weight": 1},
                                       {"file": "a.sql", "text": "SELECT 1", "weight": 2}],
                           "workload": {"defines": {"width": 10}}},
        });
        let s = Sample::from_doc(&doc);
        assert_eq!(s.run_id, 7);
        assert_eq!(s.values["tps"], 100.0);
        assert_eq!(s.values["p99"], 9.0);
        assert_eq!(s.values["wal_bytes_per_tx"], 250.0);
        assert_eq!(s.values["wal_fpi_per_tx"], 0.1);
        assert!(!s.values.contains_key("server_cpu"));
        assert!(!s.values.contains_key("p95"));
        assert_eq!(s.values["client_cpu_time"], 0.95);
        assert_eq!(
            s.flags,
            [CLIENT_SATURATED, HOST_CONTENDED, FAILURES, CONTENTION]
        );
        let w = s.workload.unwrap();
        assert!(w.starts_with("builtin tpcb-like, a.sql (text "), "{w}");
        assert!(w.ends_with("@2, -D width=10"), "{w}");
        assert_eq!(Sample::from_doc(&json!({})).workload, None);
    }

    /// A record stored before the two names: its `client_cpu` (CPU time + wait, 0.83) is not
    /// CPU time; the threads give 16 % CPU time and 67 % run-queue wait.
    #[test]
    fn an_old_record_is_read_as_cpu_time_and_run_queue_wait() {
        let doc = json!({"client_cpu": 0.83, "client_threads": [
            {"user_s": 0.6, "sys_s": 0.2, "wait_s": 3.35, "wall_s": 5.0, "busy": 0.83}]});
        let s = Sample::from_doc(&doc);
        assert!((s.values["client_cpu_time"] - 0.16).abs() < 1e-9);
        assert!((s.values["client_run_queue_wait"] - 0.67).abs() < 1e-9);
        assert_eq!(s.flags, [HOST_CONTENDED]);
    }
}
