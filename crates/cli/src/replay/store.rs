//! `pgrig replay --store PATH|URL`: the replay kept in the results store (SQLite or
//! PostgreSQL), so `pgrig report` draws it. Each replay is a study of its own (`replay of LOG at
//! T`, `pgrig_results::single_run`) holding one run: the replay document with the study, target and point the store's
//! readers expect. The stored command line and target are rebuilt from the options, so a `-W`
//! password never reaches the store.

use serde_json::{json, Value};

use pgrig_results::replay_doc::ReplayDocument;
use pgrig_results::single_run::{self, SingleRun};

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
    let logs = if o.infiles.is_empty() {
        "standard input".to_string()
    } else {
        o.infiles.join(", ")
    };
    let text = command(o) + "\n";
    let target = target(o);
    let run = SingleRun {
        name: &format!("replay of {logs}"),
        file: "(pgrig replay)",
        text: &text,
        started_unix: None,
        duration_s: doc.duration_s,
        target: &target,
        tps: doc.tps,
        point: json!({ "speed": o.speed, "compare": o.pgrig.compare }),
        document: serde_json::to_value(doc).unwrap_or(Value::Null),
        fields: vec![("target", json!(target))],
        provenance: json!({ "command": text.trim_end(), "workload": { "replay": logs } }),
        series: json!([]),
        histogram: Value::Null,
    };
    single_run::save(store, run).map_err(|e| e.to_string())
}
