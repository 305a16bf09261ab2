//! `pgrig run`'s verdict on a run with a warm-up the test makes itself: a lock on
//! `pgbench_branches` held for 10 s just after the clients start stops every TPC-B-like
//! transaction, so the first seconds are a transient. The run's steady window must start after
//! it, and its throughput must be what the server's own rows say: `pgbench_history` gets one row
//! per transaction with its `mtime` (the transaction's start), so the rows timed inside the
//! window, over the window's length, recompute `steady.tps` without the client's figures.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use pgrig_testkit::fresh_db;

/// Runs `pgrig run` for 50 s with the 10 s stall just after its start; returns the document
/// and the two outputs.
fn stalled_run(db: &pgrig_testkit::TestDb) -> (serde_json::Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut c = common::pgrig_cmd(db);
    c.args([
        "run",
        "--target",
        &db.conninfo(),
        "-c",
        "2",
        "-T",
        "50s",
        "--json",
    ])
    .arg(&json)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    // the run has started once its transactions reach the history (vacuum empties it first)
    let t = Instant::now();
    while db.psql("SELECT count(*) FROM pgbench_history") == "0" {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    db.psql(
        "BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(10); COMMIT",
    );
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stderr}");
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (doc, stdout, stderr)
}

/// Up to 3 runs: on a machine whose load changes during the run (another test's run starting or
/// ending), the throughput after the stall need not be steady, and then the verdict rightly finds
/// no steady window (`unsettled`); the test runs again rather than fail on the machine's load.
#[test]
fn a_warm_up_is_cut_from_the_steady_window_whose_throughput_the_history_rows_recompute() {
    let _turn = common::alone();
    let db = fresh_db("verdict_warm_up");
    common::pgbench_init(&db, 1);
    let mut unsteady = Vec::new();
    let (doc, stdout, stderr) = loop {
        let (doc, stdout, stderr) = stalled_run(&db);
        if !doc["steady"].is_null() {
            break (doc, stdout, stderr);
        }
        let checks: Vec<&str> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["check"].as_str().unwrap())
            .collect();
        assert!(
            checks.contains(&"unsettled") || checks.contains(&"too_short"),
            "no steady window, and no finding says why: {checks:?}"
        );
        unsteady.push(doc["series"].to_string());
        assert!(
            unsteady.len() < 3,
            "3 runs without a steady window: {unsteady:?}"
        );
    };
    let steady = &doc["steady"];
    let (from, to, tps) = (
        steady["from_s"].as_f64().unwrap(),
        steady["to_s"].as_f64().unwrap(),
        steady["tps"].as_f64().unwrap(),
    );
    assert!(from >= 10.0, "the window starts inside the stall: {steady}");
    assert!(to - from >= 30.0, "{steady}");
    let checks: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"warm_up"), "{checks:?}");
    assert!(
        stderr.contains("pgrig: warning [warm_up]: the first"),
        "{stderr}"
    );
    assert!(
        stdout.contains(&format!("steady:       {tps:.1} tps")),
        "{stdout}"
    );
    assert!(
        stdout.contains("verdict:      valid with warnings (warning warm_up"),
        "{stdout}"
    );
    // the server's rows in the window
    let start = doc["started_at_unix_s"].as_f64().unwrap();
    let rows: f64 = db
        .psql(&format!(
            "SELECT count(*) FROM pgbench_history WHERE mtime >= to_timestamp({}) AND mtime < to_timestamp({})",
            start + from,
            start + to
        ))
        .parse()
        .unwrap();
    let server_tps = rows / (to - from);
    eprintln!(
        "steady window {from}–{to} s: {tps:.1} tps, history rows {server_tps:.1}/s; whole run {}",
        doc["tps"]
    );
    assert!(
        (server_tps - tps).abs() <= 0.03 * server_tps,
        "steady {tps:.1} tps, the history rows {server_tps:.1} ({rows} rows from {from} s to {to} s)"
    );
    // the whole run's figure includes the stall; the window's does not
    assert!(doc["tps"].as_f64().unwrap() < tps, "{}", doc["tps"]);
}
