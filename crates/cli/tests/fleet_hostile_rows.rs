//! The coordinator trusts no row of the coordination schema: forged worker rows, results and
//! interval rows (written with SQL, as anyone who can write `pgrig_fleet` could) make it refuse
//! the run, exit 1 and name the bad row — never a wrapped total, a segment outside the run, a
//! duplicate client or a non-finite figure in the report or the live metrics.

use crate::common;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::{ClientTally, RunResult, ScriptInfo, ThreadCpu};
use pgrig_engine::stats::{ScriptStats, Snapshot, ThreadStats};
use pgrig_testkit::{fresh_db, TestDb};
use serde_json::Value;

/// `pgrig bench --segments N --coordinator URL -n -S -c CLIENTS -t 5`, started.
fn coordinator(db: &TestDb, n: u32, clients: u32) -> Child {
    let mut c = common::pgrig_cmd(db);
    c.args([
        "bench",
        "--segments",
        &n.to_string(),
        "--coordinator",
        &db.url(),
    ])
    .args(["-n", "-S", "-c", &clients.to_string(), "-t", "5"])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c.spawn().expect("coordinator")
}

/// The id of the run the coordinator opened (waits for it).
fn run_id(db: &TestDb) -> i64 {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        let id = db
            .try_psql("SELECT max(id) FROM pgrig_fleet.runs")
            .unwrap_or_default();
        if let Ok(id) = id.trim().parse() {
            return id;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the coordinator opened no run");
}

/// A plausible result of a segment whose clients are `ids`.
fn result(ids: &[u32]) -> Value {
    let mut st = ScriptStats::new(2);
    for us in [120u64, 450, 9_000] {
        st.histogram.record(us).unwrap();
        st.snap.latency.add(us as f64);
        st.snap.counts.ok += 1;
    }
    let r = RunResult {
        config: BenchConfig::default(),
        scripts: vec![ScriptInfo {
            desc: "<builtin: select only>".into(),
            weight: 1,
            command_texts: vec!["\\set aid".into(), "SELECT 1".into()],
        }],
        server_version: "15.18".into(),
        scale: 1,
        partitions: None,
        stats: ThreadStats {
            scripts: vec![st],
            conn_time_us: 0.0,
            reconnects: 0,
        },
        bench_duration_s: 0.5,
        initial_conn_ms: 1.0,
        threads_cpu: vec![ThreadCpu {
            user_s: 0.01,
            sys_s: 0.01,
            wait_s: 0.0,
            wall_s: 0.5,
        }],
        series: vec![Snapshot::default()],
        aborted_clients: 0,
        clients: (ids.iter())
            .map(|&id| ClientTally {
                id,
                transactions: 3,
                busy_s: 0.01,
                unfinished_s: None,
            })
            .collect(),
        seed: 1,
        interrupted: false,
        extras: Default::default(),
    };
    serde_json::from_str(&pgrig_fleet::codec::encode(&r)).unwrap()
}

fn lit(v: &Value) -> String {
    format!("'{}'", v.to_string().replace('\'', "''"))
}

/// A worker row of run `run` for `segment`, in `state`, with `result`.
fn worker_row(db: &TestDb, run: i64, segment: i64, state: &str, result: Option<&Value>) {
    let result = result.map_or("NULL".to_string(), lit);
    db.psql(&format!(
        "INSERT INTO pgrig_fleet.workers (run_id, segment, host, cores, version, \
         clock_offset_ms, clock_error_ms, state, result) VALUES \
         ({run}, {segment}, 'forged', 1, '0.1.0', 0, 0.01, '{state}', {result})"
    ));
}

struct Ended {
    db: Option<TestDb>,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Waits for `c` (killed after 60 s).
fn ended(mut c: Child) -> Ended {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until && c.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = c.kill();
    let out = c.wait_with_output().unwrap();
    Ended {
        db: None,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A 2-segment run of 4 clients whose segments hand in `r0` and `r1`; the coordinator's end.
fn forged_results(name: &str, r0: &Value, r1: &Value) -> Ended {
    let db = fresh_db(name);
    let coord = coordinator(&db, 2, 4);
    let run = run_id(&db);
    worker_row(&db, run, 0, "done", Some(r0));
    worker_row(&db, run, 1, "done", Some(r1));
    Ended {
        db: Some(db),
        ..ended(coord)
    }
}

/// The coordinator refused the run (exit 1), saying `needles`, and printed no report.
fn assert_refused(e: &Ended, needles: &[&str]) {
    assert_eq!(
        e.code,
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        e.stdout,
        e.stderr
    );
    for n in needles {
        assert!(e.stderr.contains(n), "no {n:?} in:\n{}", e.stderr);
    }
    assert!(!e.stdout.contains("number of transactions"), "{}", e.stdout);
}

#[test]
fn a_count_that_would_wrap_the_merged_total_is_refused() {
    let mut r0 = result(&[0, 1]);
    r0["scripts"][0]["snap"]["counts"][0] = Value::from(u64::MAX);
    let e = forged_results("hostile_wrap", &r0, &result(&[2, 3]));
    assert_refused(
        &e,
        &["refused the result of segment 0", "ok is out of range"],
    );
}

#[test]
fn a_negative_count_is_refused_not_read_as_zero() {
    let mut r1 = result(&[2, 3]);
    r1["scripts"][0]["snap"]["counts"][0] = Value::from(-5);
    let e = forged_results("hostile_negative", &result(&[0, 1]), &r1);
    assert_refused(&e, &["refused the result of segment 1", "-5"]);
}

#[test]
fn duplicate_client_ids_are_refused() {
    let e = forged_results("hostile_dup_clients", &result(&[0, 1]), &result(&[2, 2]));
    assert_refused(&e, &["segment 1", "client id 2 appears twice"]);
    let e = forged_results("hostile_other_clients", &result(&[0, 1]), &result(&[0, 1]));
    assert_refused(
        &e,
        &["segment 1", "client id 0 is not one of this segment's"],
    );
}

#[test]
fn an_absurd_duration_is_refused() {
    let mut r0 = result(&[0, 1]);
    r0["bench_duration_s"] = Value::from(1e300);
    let e = forged_results("hostile_duration", &r0, &result(&[2, 3]));
    assert_refused(&e, &["segment 0", "bench_duration_s is out of range"]);
    let state =
        e.db.as_ref()
            .unwrap()
            .psql("SELECT state FROM pgrig_fleet.runs");
    assert_eq!(state.trim(), "failed");
}

#[test]
fn a_segment_outside_the_run_is_refused() {
    let db = fresh_db("hostile_segment_7");
    let coord = coordinator(&db, 2, 4);
    let run = run_id(&db);
    worker_row(&db, run, 0, "done", Some(&result(&[0, 1])));
    worker_row(&db, run, 7, "done", Some(&result(&[2, 3])));
    let e = ended(coord);
    assert_refused(&e, &["segment 7", "the run has 2 segments"]);
}

#[test]
fn a_non_finite_or_huge_interval_row_is_refused() {
    for (name, ok, latency) in [
        ("hostile_nan", "1", "'NaN'"),
        ("hostile_inf", "1", "'Infinity'"),
        ("hostile_big", "9223372036854775807", "1"),
    ] {
        let db = fresh_db(name);
        let coord = coordinator(&db, 2, 4);
        let run = run_id(&db);
        worker_row(&db, run, 0, "running", None);
        worker_row(&db, run, 1, "running", None);
        db.psql(&format!(
            "INSERT INTO pgrig_fleet.intervals (run_id, segment, seq, ok, failed, skipped, \
             retried, retries, latency_sum_us, cpu_s) VALUES \
             ({run}, 0, 0, {ok}, 0, 0, 0, 0, {latency}, 0.1)"
        ));
        let e = ended(coord);
        assert_refused(&e, &["refused interval row", "segment 0, second 0"]);
    }
}
