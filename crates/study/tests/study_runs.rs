//! The study library on a real server (`pgrig-testkit`), without the binary: a study text
//! expands into its plan (points × repetitions, in the file's order), `run_study` runs it on an
//! external target into a SQLite store in a temporary directory, and the stored records read
//! back agree with what the server itself counted (pgbench_history gets one row per TPC-B-like
//! transaction); a second run of the same study stores nothing again.

use std::cell::RefCell;
use std::sync::Arc;

use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_study::plan::expand;
use pgrig_study::{check, run_study, spec, Control, Outcome, Reporter, Store};
use pgrig_testkit::{fresh_db, TestDb};
use serde_json::Value;

/// The engine's messages, printed (shown when a test fails).
struct PrintSink;

impl Sink for PrintSink {
    fn message(&self, level: Level, text: &str) {
        eprintln!("{level:?}: {text}");
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

/// Keeps the runner's run lines.
#[derive(Default)]
struct Lines(RefCell<Vec<String>>);

impl Reporter for Lines {
    fn info(&self, text: &str) {
        eprintln!("info: {text}");
    }
    fn run_done(&self, done: usize, total: usize, _: Option<std::time::Duration>, line: &str) {
        self.0.borrow_mut().push(format!("{done}/{total} {line}"));
    }
}

/// A study of the TPC-B-like builtin at scale 1 on `db`, 5 transactions per client, over
/// `clients` (a TOML array).
fn study_text(db: &TestDb, clients: &str, extra: &str) -> String {
    format!(
        "name = \"lib\"\n{extra}[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n\
         [workload]\ntransactions = 5\n[matrix]\nclients = {clients}\n\
         [collect]\nwait_events = false\n",
        db.url()
    )
}

fn run(text: &str, store_path: &str) -> (Outcome, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let study = spec::parse("study.toml", text).expect("the study parses");
    let checked = check(study, dir.path()).expect("the study checks");
    let mut store = Store::open(store_path).expect("the store opens");
    let lines = Lines::default();
    let control = Control {
        stop: StopHandle::default(),
        interrupted: Box::new(|| false),
    };
    let outcome = run_study(&checked, &mut store, Arc::new(PrintSink), &lines, &control)
        .unwrap_or_else(|e| panic!("the study failed: {e}"));
    (outcome, lines.0.into_inner())
}

fn count(db: &TestDb, table: &str) -> u64 {
    db.psql(&format!("SELECT count(*) FROM {table}"))
        .parse()
        .unwrap()
}

#[test]
fn the_plan_expands_points_times_repetitions_in_the_files_order() {
    let db = fresh_db("study_plan");
    let study = spec::parse(
        "study.toml",
        &study_text(&db, "[1, 2, 4]", "repetitions = 2\n"),
    )
    .unwrap();
    let plan = expand(&study).unwrap();
    let clients: Vec<String> = plan
        .points
        .iter()
        .map(|p| {
            let (key, value) = &p.values[0];
            format!("{key}={value}")
        })
        .collect();
    assert_eq!(clients, ["clients=1", "clients=2", "clients=4"]);
    let runs: Vec<(usize, u32)> = plan.runs.iter().map(|r| (r.point, r.repetition)).collect();
    assert_eq!(runs, [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]);
    // a matrix key the runner does not know is refused, naming the key and the file
    let text = study_text(&db, "[1]", "").replace("clients =", "clientz =");
    let bad = spec::parse("bad.toml", &text).and_then(|s| expand(&s).map(|_| ()));
    let e = bad.expect_err("an unknown matrix key").to_string();
    assert!(e.contains("bad.toml") && e.contains("clientz"), "{e}");
}

#[test]
fn a_two_point_study_stores_records_that_agree_with_the_servers_counts() {
    let db = fresh_db("study_store");
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("results.db");
    let store_path = store_path.to_str().unwrap();
    let (outcome, lines) = run(&study_text(&db, "[1, 2]", ""), store_path);
    assert_eq!(
        (outcome.total, outcome.ran, outcome.already_stored),
        (2, 2, 0)
    );
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].starts_with("2/2 "), "{lines:?}");

    let mut store = Store::open_existing(store_path).unwrap();
    let rows = store.list(Some("lib")).unwrap();
    assert_eq!(rows.len(), 2);
    let mut processed = 0;
    for (row, clients) in rows.iter().zip([1u64, 2]) {
        let rec: Value = store.show(row.id).unwrap().expect("the stored run");
        assert_eq!(rec["point"]["clients"], clients, "{rec}");
        assert_eq!(rec["clients"], clients);
        assert_eq!(rec["transactions"]["ok"], 5 * clients, "{rec}");
        assert_eq!(rec["transactions"]["failed"], 0);
        assert!(rec["tps"].as_f64().unwrap() > 0.0);
        assert!(rec["study_text"]
            .as_str()
            .unwrap()
            .contains("transactions = 5"));
        processed += rec["transactions"]["ok"].as_u64().unwrap();
    }
    // the dataset was loaded once (reinit = "once"), and every transaction left its history row
    assert_eq!(count(&db, "pgbench_history"), processed);
    assert_eq!(count(&db, "pgbench_accounts"), 100_000);
}

#[test]
fn running_a_stored_study_again_runs_nothing() {
    let db = fresh_db("study_resume");
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("results.db");
    let store_path = store_path.to_str().unwrap();
    let text = study_text(&db, "[1]", "");
    let (first, _) = run(&text, store_path);
    assert_eq!((first.ran, first.already_stored), (1, 0));
    let history = count(&db, "pgbench_history");
    assert_eq!(history, 5);
    let (again, lines) = run(&text, store_path);
    assert_eq!((again.total, again.ran, again.already_stored), (1, 0, 1));
    assert_eq!(again.study_id, first.study_id);
    assert!(lines.is_empty(), "{lines:?}");
    assert_eq!(count(&db, "pgbench_history"), history, "no transaction ran");
    let mut store = Store::open_existing(store_path).unwrap();
    assert_eq!(store.list(None).unwrap().len(), 1);
}
