//! `bench --segments N --coordinator URL --store PATH|URL`: the merged run written to the results
//! store (`pgrig_study::Store`, SQLite or PostgreSQL), so a run's result outlives the pods and
//! hosts that made it. Each run is a study of its own (`segmented run R at T`) holding one run:
//! its run document, whether it is complete, which segments it covers, and the target the
//! workers proved they reach (system identifier, database, dataset: never a connection string).

use serde_json::{json, Value};

use pgrig_engine::document::RunDocument;
use pgrig_study::store::{RunRecord, Store};

/// Stores the merged run `doc` of coordination run `run`; the stored run's id.
pub fn save(
    store: &str,
    run: i64,
    args: &[String],
    target: &str,
    doc: &RunDocument,
) -> Result<i64, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let started = doc.started_at_unix_s.unwrap_or(now - doc.duration_s);
    let name = format!("segmented run {run} at {started:.0}");
    let text = format!("pgrig bench {}\n", args.join(" "));
    let mut s = Store::open(store).map_err(|e| e.to_string())?;
    let study = s
        .study_id(&name, "(bench --segments)", &text)
        .map_err(|e| e.to_string())?;
    let point = json!({
        "segments": doc.segments.as_ref().map_or(0, |g| g.count),
        "complete": doc.complete,
    });
    let mut result = serde_json::to_value(doc).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut result {
        m.insert("study".into(), json!(name));
        m.insert("target".into(), json!(target));
        m.insert("point".into(), point.clone());
        m.insert("coordination_run".into(), json!(run));
    }
    let record = RunRecord {
        run_index: 0,
        point,
        repetition: 1,
        round: 1,
        target: target.to_string(),
        started_unix: started,
        finished_unix: now,
        tps: doc.tps,
        result,
        provenance: json!({"command": text.trim_end(), "segments": doc.segments}),
        series: serde_json::to_value(&doc.series).unwrap_or(Value::Null),
        histogram: serde_json::to_value(&doc.latency_histogram).unwrap_or(Value::Null),
    };
    s.save_run(study, &record).map_err(|e| e.to_string())
}
