//! One run stored as a study of its own (`NAME at T`, T its start in Unix seconds): what
//! `bench --segments … --store`, sysbench's `--store` and `pgrig replay --store` keep. The run's
//! document gets the study's name and point (and the caller's extra fields) so the store's
//! readers find it as they find a study's runs.

use serde_json::{json, Value};

use crate::error::StoreError;
use crate::store::{RunRecord, Store};

/// One run to store, with what its study is called and how it was started.
pub struct SingleRun<'a> {
    /// The study's name before ` at T`, e.g. `segmented run 7`, `sysbench oltp_read_only`.
    pub name: &'a str,
    /// The study's file as stored (a label in parentheses: there is no file).
    pub file: &'a str,
    /// The study's text: the command line, without passwords.
    pub text: &'a str,
    /// When the run started (Unix seconds); `None`: its duration before now.
    pub started_unix: Option<f64>,
    pub duration_s: f64,
    pub target: &'a str,
    pub tps: f64,
    pub point: Value,
    /// The run's document (its JSON form).
    pub document: Value,
    /// Fields added to the document besides `study` and `point`.
    pub fields: Vec<(&'a str, Value)>,
    pub provenance: Value,
    pub series: Value,
    pub histogram: Value,
}

/// Stores `run` in the store at `store` (opened or created); the stored run's id.
pub fn save(store: &str, run: SingleRun<'_>) -> Result<i64, StoreError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let started = run.started_unix.unwrap_or(now - run.duration_s);
    let name = format!("{} at {started:.0}", run.name);
    let mut s = Store::open(store)?;
    let study = s.study_id(&name, run.file, run.text)?;
    let mut result = run.document;
    if let Value::Object(m) = &mut result {
        m.insert("study".into(), json!(name));
        m.insert("point".into(), run.point.clone());
        for (k, v) in run.fields {
            m.insert(k.into(), v);
        }
    }
    let record = RunRecord {
        run_index: 0,
        point: run.point,
        repetition: 1,
        round: 1,
        target: run.target.to_string(),
        started_unix: started,
        finished_unix: now,
        tps: run.tps,
        result,
        provenance: run.provenance,
        series: run.series,
        histogram: run.histogram,
    };
    s.save_run(study, &record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<'a>(started: Option<f64>) -> SingleRun<'a> {
        SingleRun {
            name: "replay of a.log",
            file: "(pgrig replay)",
            text: "pgrig replay a.log\n",
            started_unix: started,
            duration_s: 2.0,
            target: "h:5432",
            tps: 12.5,
            point: json!({"speed": 1.0}),
            document: json!({"tps": 12.5}),
            fields: vec![("target", json!("h:5432"))],
            provenance: json!({"command": "pgrig replay a.log"}),
            series: json!([]),
            histogram: Value::Null,
        }
    }

    #[test]
    fn a_run_is_a_study_of_its_own_named_by_its_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.db");
        let p = path.to_str().expect("utf-8");
        let id = save(p, run(Some(1_700_000_000.4))).expect("saved");
        let mut s = Store::open_existing(p).expect("open");
        let rows = s.list(None).expect("list");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, id);
        assert_eq!(rows[0].study, "replay of a.log at 1700000000");
        assert_eq!((rows[0].target.as_str(), rows[0].tps), ("h:5432", 12.5));
        let shown = s.show(id).expect("show").expect("stored");
        let text = shown.to_string();
        for want in [
            r#""study":"replay of a.log at 1700000000""#,
            r#""point":{"speed":1.0}"#,
            r#""target":"h:5432""#,
        ] {
            assert!(text.contains(want), "{want} missing in {text}");
        }
    }

    #[test]
    fn without_a_start_the_run_began_its_duration_ago() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.db");
        let p = path.to_str().expect("utf-8");
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        save(p, run(None)).expect("saved");
        let rows = Store::open_existing(p)
            .expect("open")
            .list(None)
            .expect("list");
        let t: f64 = rows[0]
            .study
            .rsplit(' ')
            .next()
            .and_then(|t| t.parse().ok())
            .expect("a time");
        assert!((t - (before - 2.0)).abs() <= 2.0, "{t} vs {before}");
    }
}
