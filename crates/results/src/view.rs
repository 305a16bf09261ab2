//! A run as its readers see it ([`RunView`]), typed: the results store's run (`Store::show` /
//! `export`: `point`, `per_statement`, `histogram`, `provenance`, the collectors' figures) or the
//! `--json` run document of `pgrig bench`/`run` (`options`, `scripts` with their commands,
//! `client_cpu`'s threads). This is the one place outside the writers that knows the stored key
//! names: reports, compare and `pgrig results` read these fields.
//!
//! Reading is lenient, as a report of old or partial documents needs: a key that is missing, or
//! holds a value of another type, leaves its field empty (`None`, 0, empty) and never fails the
//! whole run.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::client_cpu::Figures;

/// Deserializes `T`, or its default when the value is of another shape.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

/// Reads `T` from `v` leniently (the default when `v` does not fit).
fn read<T: DeserializeOwned + Default>(v: &Value) -> T {
    T::deserialize(v).unwrap_or_default()
}

/// Declares a struct whose every field is read with [`lenient`].
macro_rules! lenient_struct {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
        #[serde(default)]
        pub struct $name {
            $($(#[$fm])* #[serde(deserialize_with = "lenient")] pub $f: $t,)*
        }
    };
}

lenient_struct! {
    /// Transaction outcomes (`transactions`).
    pub struct Outcomes {
        pub ok: Option<f64>,
        pub failed: Option<f64>,
        pub skipped: Option<f64>,
        pub retried: Option<f64>,
        pub retries: Option<f64>,
    }
}

lenient_struct! {
    /// A latency summary in ms (`latency_ms`, a script's `latency_ms`).
    pub struct LatencyView {
        pub mean: Option<f64>,
        pub p50: Option<f64>,
        pub p90: Option<f64>,
        pub p95: Option<f64>,
        pub p99: Option<f64>,
        pub p99_9: Option<f64>,
        pub max: Option<f64>,
    }
}

lenient_struct! {
    /// One second of the per-second series.
    pub struct SecondView {
        pub second: Option<f64>,
        pub tps: Option<f64>,
        pub latency_ms_mean: Option<f64>,
        pub latency_ms_p50: Option<f64>,
        pub latency_ms_p99: Option<f64>,
        pub latency_ms_max: Option<f64>,
        pub failed: Option<f64>,
        pub retries: Option<f64>,
        pub checkpoints: Option<f64>,
        pub wal_bytes: Option<f64>,
        pub server_cpu: Option<f64>,
        pub queries_read: Option<f64>,
        pub queries_write: Option<f64>,
        pub queries_other: Option<f64>,
        pub reconnects: Option<f64>,
    }
}

lenient_struct! {
    /// One statement's figures: a store run's `per_statement` entry or a bench document's
    /// script command.
    pub struct StatementView {
        /// the script it belongs to (store runs; bench documents name it by the script)
        pub script: Option<String>,
        pub text: Option<String>,
        pub executions: Option<f64>,
        pub latency_ms_mean: Option<f64>,
        pub latency_ms: LatencyView,
    }
}

lenient_struct! {
    /// One script of a bench document.
    pub struct ScriptView {
        pub desc: Option<String>,
        pub latency_ms: LatencyView,
        pub commands: Vec<Value>,
    }
}

lenient_struct! {
    /// A relation's sizes in bytes (`relation_sizes.TABLE`).
    pub struct SizesView {
        pub heap: Option<f64>,
        pub indexes: Option<f64>,
        pub total: Option<f64>,
        /// the parts (`pg_relation_size(rel, fork)`, the TOAST relation's total); absent in
        /// older stores
        pub main: Option<f64>,
        pub fsm: Option<f64>,
        pub vm: Option<f64>,
        pub init: Option<f64>,
        pub toast: Option<f64>,
    }
}

lenient_struct! {
    /// One execution of a query (query studies), with the server's plan figures when taken.
    pub struct ExecutionView {
        pub ok: Option<bool>,
        pub client_ms: Option<f64>,
        pub server: Option<Value>,
        /// the EXPLAIN JSON as the server gave it (null without EXPLAIN)
        pub explain: Option<Value>,
    }
}

lenient_struct! {
    /// One query of a query run (`query.queries[]`).
    pub struct QueryView {
        pub name: Option<String>,
        pub executions: Vec<Value>,
        pub plan_execution: Option<Value>,
        pub summary: Map<String, Value>,
    }
}

lenient_struct! {
    /// One node of an executed plan (EXPLAIN ANALYZE, depth-first).
    pub struct PlanNodeView {
        pub id: Option<u64>,
        pub depth: Option<u64>,
        pub node_type: Option<String>,
        pub parallel_aware: Option<bool>,
        pub relation: Option<String>,
        pub inclusive_ms: Option<f64>,
        pub self_ms: Option<f64>,
        pub rows_total: Option<f64>,
        pub loops: Option<f64>,
        pub plan_rows: Option<f64>,
        pub q_error: Option<f64>,
        pub index: Option<String>,
        pub join_type: Option<String>,
    }
}

/// A script of the provenance (`provenance.scripts[]`): a builtin or a file with its text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptSourceView {
    pub builtin: Option<String>,
    pub file: Option<String>,
    pub text: Option<String>,
    pub weight: Option<u64>,
    /// the entry as stored (compact JSON), for entries that are neither
    pub stored: String,
}

impl ScriptSourceView {
    fn of(v: &Value) -> ScriptSourceView {
        ScriptSourceView {
            builtin: text(&v["builtin"]),
            file: text(&v["file"]),
            text: text(&v["text"]),
            weight: v["weight"].as_u64(),
            stored: v.to_string(),
        }
    }
}

impl ExecutionView {
    /// The plan nodes of this execution's server figures (`None` when it has none).
    pub fn nodes(&self) -> Option<Vec<PlanNodeView>> {
        let nodes = self.server.as_ref()?.get("nodes")?.as_array()?;
        Some(nodes.iter().map(read).collect())
    }
}

impl QueryView {
    pub fn executions(&self) -> Vec<ExecutionView> {
        self.executions.iter().map(read).collect()
    }

    pub fn plan_execution(&self) -> Option<ExecutionView> {
        self.plan_execution.as_ref().map(read)
    }

    /// The summary's count of failed executions.
    pub fn failed(&self) -> u64 {
        self.summary
            .get("failed")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
}

impl ScriptView {
    pub fn commands(&self) -> Vec<StatementView> {
        self.commands.iter().map(read).collect()
    }
}

/// One run, as reports, compare and `pgrig results` read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunView {
    /// the store's id of the run (store runs)
    pub run_id: Option<i64>,
    pub study: Option<String>,
    pub target: Option<String>,
    /// the point's matrix values as the study file wrote them
    pub point: Map<String, Value>,
    /// a steps study: the point's step (name, 0-based position in the study's steps)
    pub step: Option<String>,
    pub step_index: Option<u64>,
    pub repetition: Option<u64>,
    pub round: Option<u64>,
    pub tps: Option<f64>,
    pub duration_s: Option<f64>,
    pub transactions: Outcomes,
    pub aborted_clients: Option<f64>,
    pub latency_ms: LatencyView,
    /// the client's CPU time and run-queue wait, whatever the record's age
    pub client_cpu: Option<Figures>,
    /// share of sampled sessions waiting on locks (`wait_events`)
    pub lock_share: f64,
    /// wait-event samples per event (`wait_events.events`)
    pub wait_events: Vec<(String, f64)>,
    /// `server_stats.checkpointer`: timed and requested checkpoints
    pub checkpoints_timed: Option<f64>,
    pub checkpoints_requested: Option<f64>,
    /// `server_stats.wal`
    pub wal_bytes: Option<f64>,
    pub wal_fpi: Option<f64>,
    /// `server_stats.database.blocks_read`
    pub blocks_read: Option<f64>,
    /// `server_processes.cpus_busy`
    pub cpus_busy: Option<f64>,
    pub relation_sizes: Vec<(String, SizesView)>,
    /// store runs: `per_statement` (`None` for bench documents)
    pub per_statement: Option<Vec<StatementView>>,
    /// bench documents: the scripts with their commands
    pub scripts: Vec<ScriptView>,
    pub series: Vec<SecondView>,
    /// the merged histogram's `[value, count]` buckets (µs)
    pub histogram: Vec<(f64, f64)>,
    /// provenance (store runs) and options (bench documents), as stored
    pub provenance: Value,
    pub options: Value,
    pub pgrig_version: Option<String>,
    pub server_version: Option<String>,
    pub schema_version: Option<String>,
    /// `query` for query runs, a native workload's name for bench documents
    pub workload: Option<String>,
    /// query runs: each query
    pub queries: Vec<QueryView>,
    /// the store's timestamps and study text (`Store::show`)
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub study_text: Option<String>,
    /// provenance: the exact scripts (builtin names, files with their text)
    pub provenance_scripts: Option<Vec<ScriptSourceView>>,
    /// provenance: the workload's `-D` defines
    pub defines: Vec<(String, Value)>,
    /// `[collect] profile`: the folded stacks kept, by whose (`server`, `client`)
    pub profiles: Vec<(String, String)>,
    /// `pgrig replay` runs: the replay's statistics and `--compare`'s statements
    pub replay: Option<crate::replay_doc::ReplayDoc>,
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn object(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

impl RunView {
    /// Reads one run (a store run or a bench document).
    pub fn of(v: &Value) -> RunView {
        let stats = &v["server_stats"];
        RunView {
            run_id: v["run_id"].as_i64(),
            study: text(&v["study"]),
            target: text(&v["target"]),
            point: object(&v["point"]),
            step: text(&v["step"]),
            step_index: v["step_index"].as_u64(),
            repetition: v["repetition"].as_u64(),
            round: v["round"].as_u64(),
            tps: num(&v["tps"]),
            duration_s: num(&v["duration_s"]),
            transactions: read(&v["transactions"]),
            aborted_clients: num(&v["aborted_clients"]),
            latency_ms: read(&v["latency_ms"]),
            client_cpu: crate::client_cpu::of(v),
            lock_share: crate::summary::lock_share(v),
            wait_events: object(&v["wait_events"]["events"])
                .into_iter()
                .map(|(k, n)| (k, n.as_f64().unwrap_or(0.0)))
                .collect(),
            checkpoints_timed: num(&stats["checkpointer"]["checkpoints_timed"]),
            checkpoints_requested: num(&stats["checkpointer"]["checkpoints_requested"]),
            wal_bytes: num(&stats["wal"]["wal_bytes"]),
            wal_fpi: num(&stats["wal"]["wal_fpi"]),
            blocks_read: num(&stats["database"]["blocks_read"]),
            cpus_busy: num(&v["server_processes"]["cpus_busy"]),
            relation_sizes: object(&v["relation_sizes"])
                .into_iter()
                .map(|(t, s)| (t, read(&s)))
                .collect(),
            per_statement: v["per_statement"]
                .as_array()
                .map(|l| l.iter().map(read).collect()),
            scripts: v["scripts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(read)
                .collect(),
            series: v["series"]
                .as_array()
                .into_iter()
                .flatten()
                .map(read)
                .collect(),
            histogram: buckets(&v["histogram"]["buckets"]),
            provenance: v["provenance"].clone(),
            options: v["options"].clone(),
            pgrig_version: text(&v["pgrig_version"]),
            server_version: text(&v["server_version"]),
            schema_version: text(&v["schema_version"]),
            workload: text(&v["workload"]),
            queries: v["query"]["queries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(read)
                .collect(),
            started_at: text(&v["started_at"]),
            finished_at: text(&v["finished_at"]),
            study_text: text(&v["study_text"]),
            provenance_scripts: v["provenance"]["scripts"]
                .as_array()
                .map(|l| l.iter().map(ScriptSourceView::of).collect()),
            defines: object(&v["provenance"]["workload"]["defines"])
                .into_iter()
                .collect(),
            profiles: object(&v["provenance"]["profiles"])
                .into_iter()
                .filter_map(|(which, p)| Some((which, p["folded"].as_str()?.to_string())))
                .filter(|(_, f)| !f.trim().is_empty())
                .collect(),
            replay: v.get("replay").filter(|r| r.is_object()).map(read),
        }
    }

    /// Whether a JSON object looks like a run at all (query runs have no `transactions`).
    pub fn is_run(v: &Value) -> bool {
        v.is_object()
            && v.get("tps").is_some()
            && (v.get("transactions").is_some() || v["workload"] == "query")
    }
}

/// `[value, count]` pairs; malformed pairs are left out.
fn buckets(v: &Value) -> Vec<(f64, f64)> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| Some((b.get(0)?.as_f64()?, b.get(1)?.as_f64()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_of_another_type_stays_empty_and_the_rest_is_read() {
        let v = json!({"tps": "fast", "transactions": {"ok": 3, "failed": "x"},
            "latency_ms": {"p50": 1.5, "p99": [1]}, "series": [{"second": 1, "tps": "?"}, 7],
            "relation_sizes": {"t": {"heap": 1, "total": "big"}},
            "histogram": {"buckets": [[1, 2], ["a", 1], [3]]}});
        let r = RunView::of(&v);
        assert_eq!(r.tps, None);
        assert_eq!(
            (r.transactions.ok, r.transactions.failed),
            (Some(3.0), None)
        );
        assert_eq!((r.latency_ms.p50, r.latency_ms.p99), (Some(1.5), None));
        assert_eq!(r.series.len(), 2);
        assert_eq!((r.series[0].second, r.series[0].tps), (Some(1.0), None));
        assert_eq!(r.series[1], SecondView::default());
        assert_eq!(r.relation_sizes[0].1.heap, Some(1.0));
        assert_eq!(r.relation_sizes[0].1.total, None);
        assert_eq!(r.histogram, vec![(1.0, 2.0)]);
    }

    #[test]
    fn query_runs_keep_their_executions_and_plan_nodes() {
        let v = json!({"tps": 1.0, "workload": "query", "query": {"queries": [{"name": "q1",
            "executions": [{"ok": true, "client_ms": 2.0, "server": {"nodes": [
                {"id": 1, "node_type": "Seq Scan", "relation": "t", "self_ms": 0.5}]}}],
            "summary": {"failed": 2}}]}});
        assert!(RunView::is_run(&v));
        let r = RunView::of(&v);
        let q = &r.queries[0];
        assert_eq!((q.name.as_deref(), q.failed()), (Some("q1"), 2));
        let nodes = q.executions()[0].nodes().unwrap();
        assert_eq!(nodes[0].node_type.as_deref(), Some("Seq Scan"));
        assert_eq!(nodes[0].self_ms, Some(0.5));
    }
}
