//! `pgrig replay --store PATH|URL`: the replay kept in the results store (SQLite or
//! PostgreSQL), so `pgrig report` draws it. Each replay is a study of its own (`replay of LOG at
//! T`) holding one run: the replay document with the study, target and point the store's
//! readers expect. The stored command line and target are rebuilt from the options, so a `-W`
//! password never reaches the store.

use serde_json::{json, Value};

use pgrig_results::replay_doc::ReplayDocument;
use pgrig_results::store::{RunRecord, Store};

use super::cmdline::Opts;

/// The command line as stored: the options that shape the replay, never the password.
fn command(o: &Opts) -> String {
    let mut w = vec!["pgrig replay".to_string()];
    if o.replay_only {
        w.push("-r".into());
    }
    if o.csv {
        w.push("-c".into());
    }
    if o.speed != 1.0 {
        w.push(format!("-s {}", o.speed));
    }
    if o.jump {
        w.push("-j".into());
    }
    if o.pgrig.compare {
        w.push("--compare".into());
    }
    w.extend(o.infiles.iter().cloned());
    w.join(" ")
}

/// Where the replay went, as stored: host and port, no user or password.
fn target(o: &Opts) -> String {
    format!(
        "{}:{}",
        o.host.as_deref().unwrap_or("(default host)"),
        o.port.map_or("(default port)".into(), |p| p.to_string())
    )
}

/// Stores the replay; the stored run's id.
pub fn save(store: &str, o: &Opts, doc: &ReplayDocument) -> Result<i64, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let started = now - doc.duration_s;
    let logs = if o.infiles.is_empty() {
        "standard input".to_string()
    } else {
        o.infiles.join(", ")
    };
    let name = format!("replay of {logs} at {started:.0}");
    let text = command(o) + "\n";
    let mut s = Store::open(store).map_err(|e| e.to_string())?;
    let study = s
        .study_id(&name, "(pgrig replay)", &text)
        .map_err(|e| e.to_string())?;
    let point = json!({ "speed": o.speed, "compare": o.pgrig.compare });
    let target = target(o);
    let mut result = serde_json::to_value(doc).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut result {
        m.insert("study".into(), json!(name));
        m.insert("target".into(), json!(target));
        m.insert("point".into(), point.clone());
    }
    let record = RunRecord {
        run_index: 0,
        point,
        repetition: 1,
        round: 1,
        target,
        started_unix: started,
        finished_unix: now,
        tps: doc.tps,
        result,
        provenance: json!({ "command": text.trim_end(), "workload": { "replay": logs } }),
        series: json!([]),
        histogram: Value::Null,
    };
    s.save_run(study, &record).map_err(|e| e.to_string())
}
