//! `bench --segments N --coordinator URL --store PATH|URL`: the merged run written to the results
//! store (`pgrig_study::Store`, SQLite or PostgreSQL), so a run's result outlives the pods and
//! hosts that made it. Each run is a study of its own (`segmented run R at T`,
//! `pgrig_results::single_run`) holding one run:
//! its run document, whether it is complete, which segments it covers, and the target the
//! workers proved they reach (system identifier, database, dataset: never a connection string).

use serde_json::{json, Value};

use pgrig_engine::document::RunDocument;
use pgrig_results::single_run::{self, SingleRun};

/// Stores the merged run `doc` of coordination run `run`; the stored run's id.
pub fn save(
    store: &str,
    run: i64,
    args: &[String],
    target: &str,
    doc: &RunDocument,
) -> Result<i64, String> {
    let text = format!("pgrig bench {}\n", args.join(" "));
    let single = SingleRun {
        name: &format!("segmented run {run}"),
        file: "(bench --segments)",
        text: &text,
        started_unix: doc.started_at_unix_s,
        duration_s: doc.duration_s,
        target,
        tps: doc.tps,
        point: json!({
            "segments": doc.segments.as_ref().map_or(0, |g| g.count),
            "complete": doc.complete,
        }),
        document: serde_json::to_value(doc).unwrap_or(Value::Null),
        fields: vec![("target", json!(target)), ("coordination_run", json!(run))],
        provenance: json!({"command": text.trim_end(), "segments": doc.segments}),
        series: serde_json::to_value(&doc.series).unwrap_or(Value::Null),
        histogram: serde_json::to_value(&doc.latency_histogram).unwrap_or(Value::Null),
    };
    single_run::save(store, single).map_err(|e| e.to_string())
}
