//! Stored runs as compare uses them: each run (read as a [`RunView`]) becomes a [`Sample`] with
//! its metric values (the catalogue's, `pgrig_results::metric`), its invalid-run flags (the
//! rules of the study's summary table) and what identifies its workload.

use std::collections::BTreeMap;

use pgrig_results::store::text_hash;
use pgrig_results::RunView;
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
    /// a query run's queries with their plans and execution times (empty otherwise)
    pub queries: Vec<crate::plan_changes::QuerySide>,
}

impl Sample {
    pub fn from_doc(doc: &Value) -> Sample {
        Sample::of(&RunView::of(doc))
    }

    pub fn of(v: &RunView) -> Sample {
        let values = METRICS
            .iter()
            .filter_map(|m| value(m, v).map(|x| (m.name, x)))
            .collect();
        Sample {
            run_id: v.run_id.unwrap_or(0),
            study: v.study.clone().unwrap_or_default(),
            target: v.target.clone().unwrap_or_default(),
            point: Value::Object(v.point.clone()),
            round: v.round.unwrap_or(1),
            values,
            flags: flags(v),
            workload: workload(v),
            started_at: v.started_at.clone(),
            finished_at: v.finished_at.clone(),
            queries: v
                .queries
                .iter()
                .map(crate::plan_changes::QuerySide::of)
                .collect(),
        }
    }
}

/// The value of `m` in one run, if it records it.
pub fn value(m: &Metric, v: &RunView) -> Option<f64> {
    (m.get)(v)
}

fn flags(v: &RunView) -> Vec<&'static str> {
    let mut f = v.client_cpu.unwrap_or_default().flags();
    if v.transactions.failed.unwrap_or(0.0) > 0.0 || v.aborted_clients.unwrap_or(0.0) > 0.0 {
        f.push(FAILURES);
    }
    if v.transactions.retries.unwrap_or(0.0) > 0.0 || v.lock_share > LOCK_SHARE {
        f.push(CONTENTION);
    }
    f
}

/// The workload's identity and a short description, from the provenance's scripts.
fn workload(v: &RunView) -> Option<String> {
    let scripts = v.provenance_scripts.as_ref()?;
    let mut parts: Vec<String> = scripts
        .iter()
        .map(|s| {
            let weight = s.weight.unwrap_or(1);
            let what = match (&s.builtin, &s.file) {
                (Some(b), _) => format!("builtin {b}"),
                (None, Some(f)) => {
                    format!("{f} (text {})", text_hash(s.text.as_deref().unwrap_or("")))
                }
                _ => s.stored.clone(),
            };
            if weight == 1 {
                what
            } else {
                format!("{what}@{weight}")
            }
        })
        .collect();
    parts.extend(v.defines.iter().map(|(k, x)| format!("-D {k}={x}")));
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
