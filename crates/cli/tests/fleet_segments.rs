//! A run spread over N `pgrig worker` processes on loopback, coordinated through the
//! `pgrig_fleet` schema in one throwaway database: the merged histogram is the histogram of the
//! union of the per-transaction logs, the segments issue the work of a single-host run with the
//! same seed, faults (a killed worker, Ctrl-C, an unreachable coordinator, a clock offset beyond
//! the limit) end as documented.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use pgrig_testkit::{fresh_db, TestDb};

fn pgrig(db: &TestDb) -> Command {
    let mut c = common::pgrig_cmd(db);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// `pgrig bench --segments N --coordinator URL ARGS`, started.
fn coordinator(db: &TestDb, n: u32, args: &[&str]) -> Child {
    let mut c = pgrig(db);
    c.args([
        "bench",
        "--segments",
        &n.to_string(),
        "--coordinator",
        &db.url(),
    ])
    .args(args);
    c.spawn().expect("coordinator")
}

/// `pgrig worker --segment I/N --coordinator URL EXTRA`, started.
fn worker(db: &TestDb, i: u32, n: u32, extra: &[&str]) -> Child {
    let mut c = pgrig(db);
    c.args(["worker", "--segment", &format!("{i}/{n}")])
        .args(["--coordinator", &db.url(), "--wait", "60"])
        .args(extra);
    c.spawn().expect("worker")
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn wait(c: Child) -> Ended {
    let out = c.wait_with_output().expect("wait");
    Ended {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The coordinator and its N workers to their ends.
fn segmented(db: &TestDb, n: u32, args: &[&str]) -> (Ended, Vec<Ended>) {
    let coord = coordinator(db, n, args);
    let workers: Vec<Child> = (0..n).map(|i| worker(db, i, n, &[])).collect();
    let ws: Vec<Ended> = workers.into_iter().map(wait).collect();
    (wait(coord), ws)
}

fn engine_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    h.auto(true);
    h
}

/// Latencies (µs, the third field) of every line of the `-l` files under `dir`.
fn logged_latencies(dir: &Path) -> Vec<u64> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            all.push(f[2].parse().unwrap());
        }
    }
    all
}

#[test]
fn segmented_run_merges_exactly_the_histogram_of_the_union_of_transaction_logs() {
    let db = fresh_db("fleet_merge");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = [
        "-n",
        "-S",
        "-c",
        "5",
        "-j",
        "2",
        "-t",
        "40",
        "-l",
        "--log-prefix",
        "seg",
        "--json",
    ];
    let mut args = args.to_vec();
    let json_s = json.display().to_string();
    args.push(&json_s);
    // each worker writes its -l logs under its own --log-dir (here: the same directory)
    let coord = coordinator(&db, 3, &args);
    let log_dir = dir.path().display().to_string();
    let workers: Vec<Child> = (0..3)
        .map(|i| worker(&db, i, 3, &["--log-dir", &log_dir]))
        .collect();
    let workers: Vec<Ended> = workers.into_iter().map(wait).collect();
    let coord = wait(coord);
    for w in &workers {
        assert_eq!(w.code, Some(0), "worker stderr:\n{}", w.stderr);
    }
    assert_eq!(coord.code, Some(0), "coordinator stderr:\n{}", coord.stderr);
    assert!(
        coord.stdout.contains("number of clients: 5"),
        "{}",
        coord.stdout
    );
    assert!(coord
        .stdout
        .contains("number of transactions actually processed: 200/200"));
    let logs = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("seg.") {
            std::fs::rename(&p, logs.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    let latencies = logged_latencies(logs.path());
    assert_eq!(latencies.len(), 200, "logged transactions");
    let mut h = engine_histogram();
    for l in &latencies {
        h.record(*l).unwrap();
    }
    let expected: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let merged: Vec<(u64, u64)> =
        serde_json::from_value(doc["latency_histogram"]["buckets"].clone()).unwrap();
    assert_eq!(
        merged, expected,
        "merged histogram vs the union of the logs"
    );
    let p99 = doc["latency_ms"]["p99"].as_f64().unwrap_or(-1.0);
    assert_eq!(
        p99,
        h.value_at_quantile(0.99) as f64 / 1000.0,
        "{}",
        doc["latency_ms"]
    );
}

/// The rows a script inserting `(:client_id, random)` left, sorted.
fn work_rows(db: &TestDb) -> String {
    db.psql("SELECT client, r FROM work ORDER BY client, r")
}

#[test]
fn segments_issue_the_work_of_a_single_host_run_with_the_same_seed() {
    let db = fresh_db("fleet_same_work");
    db.psql("CREATE TABLE work (client int, r bigint)");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("work.sql");
    std::fs::write(
        &script,
        "\\set r random(1, 1000000000)\nINSERT INTO work VALUES (:client_id, :r);\n",
    )
    .unwrap();
    let s = script.display().to_string();
    let args = [
        "-n",
        "-c",
        "5",
        "-j",
        "2",
        "-t",
        "7",
        "--random-seed",
        "4242",
        "-f",
        &s,
    ];
    let single = common::pgrig_bench(&db, &args);
    assert!(single.success(), "{}", single.stderr);
    let one_host = work_rows(&db);
    assert_eq!(one_host.lines().count(), 35, "{one_host}");
    db.psql("TRUNCATE work");
    let (coord, workers) = segmented(&db, 3, &args);
    for w in &workers {
        assert_eq!(w.code, Some(0), "worker stderr:\n{}", w.stderr);
    }
    assert_eq!(coord.code, Some(0), "coordinator stderr:\n{}", coord.stderr);
    assert_eq!(
        work_rows(&db),
        one_host,
        "the segments' work differs from one host's"
    );
}

/// Reads `child`'s stderr until a line contains `needle` (or 60 s pass); the lines read.
fn stderr_until(child: &mut Child, needle: &str) -> String {
    let mut seen = String::new();
    let err = child.stderr.as_mut().unwrap();
    let mut r = BufReader::new(err);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        seen.push_str(&line);
        if line.contains(needle) {
            break;
        }
    }
    seen
}

#[test]
fn a_killed_worker_marks_the_run_incomplete() {
    let db = fresh_db("fleet_killed");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let store = fresh_db("fleet_killed_store");
    let store_arg = format!("--store={}", store.url());
    let coord = coordinator(
        &db,
        2,
        &["-n", "-S", "-c", "2", "-T", "8", &json_arg, &store_arg],
    );
    let w0 = worker(&db, 0, 2, &[]);
    let mut w1 = worker(&db, 1, 2, &[]);
    let seen = stderr_until(&mut w1, "segment 1/2 of run");
    assert!(seen.contains("segment 1/2 of run"), "{seen}");
    std::thread::sleep(Duration::from_secs(4));
    w1.kill().unwrap();
    let _ = w1.wait();
    let w0 = wait(w0);
    let coord = wait(coord);
    assert_eq!(w0.code, Some(0), "{}", w0.stderr);
    assert_eq!(coord.code, Some(2), "coordinator stderr:\n{}", coord.stderr);
    assert!(coord.stderr.contains("segment 1 on"), "{}", coord.stderr);
    assert!(
        coord.stderr.contains("has not reported for"),
        "{}",
        coord.stderr
    );
    assert!(coord
        .stderr
        .contains("is incomplete: no result from segment(s) 1"));
    assert!(
        coord.stdout.contains("number of clients: 2"),
        "{}",
        coord.stdout
    );
    let state = db.psql("SELECT state FROM pgrig_fleet.runs");
    assert_eq!(state.trim(), "incomplete");
    // issue 20 item 8(b): the report and --json say so too, naming the segments
    assert!(
        coord.stdout.contains(
            "INCOMPLETE RUN: no result from segment(s) 1 of 2; the figures below cover segment(s) 0 only"
        ),
        "{}",
        coord.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["complete"], serde_json::json!(false), "{doc}");
    assert_eq!(doc["segments"]["missing"], serde_json::json!([1]));
    assert_eq!(doc["segments"]["merged"], serde_json::json!([0]));
    let mut show = pgrig(&db);
    show.args(["results", "show", "1", "--store", &store.url()]);
    let shown = wait(show.spawn().unwrap());
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    let text: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    let text = text.to_string();
    assert!(text.contains("\"complete\":false"), "{text}");
    assert!(text.contains("\"missing\":[1]"), "{text}");
}

#[test]
fn ctrl_c_on_the_coordinator_stops_every_worker() {
    let db = fresh_db("fleet_ctrl_c");
    common::pgbench_init(&db, 1);
    let mut coord = coordinator(&db, 2, &["-n", "-S", "-c", "2", "-T", "60"]);
    let w0 = worker(&db, 0, 2, &[]);
    let mut w1 = worker(&db, 1, 2, &[]);
    stderr_until(&mut w1, "segment 1/2 of run");
    std::thread::sleep(Duration::from_secs(4));
    let t0 = Instant::now();
    // SAFETY: signalling the child we started, by its pid.
    unsafe { libc::kill(coord.id() as i32, libc::SIGINT) };
    let (w0, w1) = (wait(w0), wait(w1));
    let _ = coord.stdin.take();
    let coord = wait(coord);
    assert!(t0.elapsed() < Duration::from_secs(20), "workers ran on");
    assert_eq!(w0.code, Some(130), "{}", w0.stderr);
    assert_eq!(w1.code, Some(130), "{}", w1.stderr);
    assert_eq!(coord.code, Some(130), "{}", coord.stderr);
    assert!(
        coord.stdout.contains("number of clients: 2"),
        "{}",
        coord.stdout
    );
}

#[test]
fn a_worker_that_cannot_reach_the_coordinator_says_so() {
    let db = fresh_db("fleet_unreachable");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgresql://nobody:secretpw@127.0.0.1:{port}/x");
    let mut c = pgrig(&db);
    c.args(["worker", "--segment", "0/2", "--coordinator", &url]);
    let out = wait(c.spawn().unwrap());
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("could not reach the coordinator at"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("secretpw"), "{}", out.stderr);
}

#[test]
fn a_clock_offset_beyond_the_limit_is_refused() {
    let db = fresh_db("fleet_clock");
    common::pgbench_init(&db, 1);
    let coord = coordinator(&db, 1, &["-n", "-S", "-c", "1", "-t", "5"]);
    let w = wait(worker(&db, 0, 1, &["--max-clock-offset", "0.000001"]));
    let coord = wait(coord);
    assert_eq!(w.code, Some(1), "{}", w.stderr);
    assert!(
        w.stderr.contains("beyond --max-clock-offset"),
        "{}",
        w.stderr
    );
    assert_eq!(coord.code, Some(1), "{}", coord.stderr);
    assert!(coord.stderr.contains("segment 0 on"), "{}", coord.stderr);
    assert!(coord.stderr.contains("clock offset"), "{}", coord.stderr);
}

#[test]
fn run_with_segments_coordinates_workers_and_reports_the_whole_run() {
    let db = fresh_db("fleet_run");
    common::pgbench_init(&db, 1);
    let mut c = pgrig(&db);
    c.args(["run", "--segments", "2", "--coordinator", &db.url()])
        .args([
            "--target",
            &db.url(),
            "-w",
            "select-only",
            "-c",
            "3",
            "-T",
            "2",
        ]);
    let coord = c.spawn().unwrap();
    let workers: Vec<Child> = (0..2).map(|i| worker(&db, i, 2, &[])).collect();
    for w in workers.into_iter().map(wait) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let coord = wait(coord);
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    assert!(
        coord.stdout.contains("number of clients: 3"),
        "{}",
        coord.stdout
    );
    assert!(
        coord.stdout.contains("<builtin: select only>"),
        "{}",
        coord.stdout
    );
    assert!(coord.stderr.contains("segment 1 on"), "{}", coord.stderr);
}

#[test]
fn run_with_segments_refuses_a_throwaway_server() {
    let db = fresh_db("fleet_run_refused");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE"] {
        c.env_remove(v);
    }
    c.args(["run", "--segments", "2", "--coordinator", &db.url()]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a throwaway server"), "{err}");
}

#[test]
fn workers_stop_when_the_coordinator_is_gone() {
    let db = fresh_db("fleet_coordinator_gone");
    common::pgbench_init(&db, 1);
    let mut coord = coordinator(&db, 2, &["-n", "-S", "-c", "2", "-T", "120"]);
    let w0 = worker(&db, 0, 2, &[]);
    let mut w1 = worker(&db, 1, 2, &[]);
    stderr_until(&mut w1, "segment 1/2 of run");
    std::thread::sleep(Duration::from_secs(3));
    coord.kill().unwrap();
    let _ = coord.wait();
    let t0 = Instant::now();
    let (w0, w1) = (wait(w0), wait(w1));
    assert!(t0.elapsed() < Duration::from_secs(30), "workers ran on");
    for w in [&w0, &w1] {
        assert_eq!(w.code, Some(130), "{}", w.stderr);
        assert!(w.stderr.contains("has not been seen for"), "{}", w.stderr);
    }
    let states = db.psql("SELECT state FROM pgrig_fleet.workers ORDER BY segment");
    assert_eq!(states.trim(), "done\ndone", "their results are kept");
}

/// Waits for `c` at most `limit` (killed after): `None` when it ran on.
fn wait_within(mut c: Child, limit: Duration) -> Option<Ended> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if c.try_wait().unwrap().is_some() {
            return Some(wait(c));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = c.kill();
    let _ = wait(c);
    None
}

/// Issue 20 item 8(c): two workers reaching different databases (same server, so the same
/// system identifier) are refused before the start, naming both targets.
#[test]
fn two_workers_on_different_databases_are_refused() {
    let db = fresh_db("fleet_two_dbs_a");
    let other = fresh_db("fleet_two_dbs_b");
    common::pgbench_init(&db, 1);
    common::pgbench_init(&other, 1);
    let coord = coordinator(&db, 2, &["-n", "-S", "-c", "2", "-T", "3"]);
    let w0 = worker(&db, 0, 2, &["--target", &db.url()]);
    let w1 = worker(&db, 1, 2, &["--target", &other.url()]);
    let coord = wait_within(coord, Duration::from_secs(90)).expect("the coordinator ends");
    let (w0, w1) = (wait(w0), wait(w1));
    assert_eq!(coord.code, Some(1), "{}", coord.stderr);
    assert!(
        coord.stderr.contains("the workers reach different targets"),
        "{}",
        coord.stderr
    );
    assert!(coord.stderr.contains("pgbench scale 1"), "{}", coord.stderr);
    assert!(!coord.stdout.contains("tps"), "no report: {}", coord.stdout);
    for w in [&w0, &w1] {
        assert_ne!(w.code, Some(0), "{}", w.stderr);
    }
    let state = db.psql("SELECT state FROM pgrig_fleet.runs");
    assert_eq!(state.trim(), "failed");
}

/// Issue 20 item 8(d): a coordinator killed while its run waits leaves a stale `waiting` run;
/// workers started later do not join it, the next coordinator cancels it, and the later run
/// completes instead of hanging.
#[test]
fn a_stale_run_left_by_a_killed_coordinator_does_not_hang_a_later_run() {
    let db = fresh_db("fleet_stale_run");
    common::pgbench_init(&db, 1);
    let mut dead = coordinator(&db, 2, &["-n", "-S", "-c", "2", "-T", "2"]);
    let seen = stderr_until(&mut dead, "waits for 2 workers");
    assert!(seen.contains("waits for 2 workers"), "{seen}");
    dead.kill().unwrap();
    let _ = dead.wait();
    // past the coordinator's silence limit (10 s): the run is stale
    std::thread::sleep(Duration::from_secs(12));
    let workers: Vec<Child> = (0..2).map(|i| worker(&db, i, 2, &[])).collect();
    std::thread::sleep(Duration::from_secs(2));
    let coord = coordinator(&db, 2, &["-n", "-S", "-c", "2", "-T", "2"]);
    let coord = wait_within(coord, Duration::from_secs(120)).expect("the later run hung");
    for w in workers {
        let w = wait_within(w, Duration::from_secs(30)).expect("a worker hung");
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    assert!(coord.stderr.contains("cancelled run 1"), "{}", coord.stderr);
    let states = db.psql("SELECT id, state FROM pgrig_fleet.runs ORDER BY id");
    assert_eq!(states.trim(), "1|failed\n2|finished");
}

/// Issue 20 item 8(d): `--run ID` joins that run only, never a finished one.
#[test]
fn a_worker_never_joins_another_run_than_it_asks_for() {
    let db = fresh_db("fleet_run_id");
    common::pgbench_init(&db, 1);
    let (coord, ws) = segmented(&db, 1, &["-n", "-S", "-c", "1", "-t", "3"]);
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    assert_eq!(ws[0].code, Some(0), "{}", ws[0].stderr);
    let late = wait(worker(&db, 0, 1, &["--run", "1"]));
    assert_eq!(late.code, Some(1), "{}", late.stderr);
    assert!(
        late.stderr.contains("run 1: not joining: it is finished"),
        "{}",
        late.stderr
    );
    let mut c = pgrig(&db);
    c.args(["worker", "--segment", "0/1", "--coordinator", &db.url()])
        .args(["--options-digest", "00000000", "--wait", "2"]);
    let other = wait(c.spawn().unwrap());
    assert_eq!(other.code, Some(1), "{}", other.stderr);
    assert!(
        other.stderr.contains("with options digest 00000000"),
        "{}",
        other.stderr
    );
}

/// Issue 20 item 8(e): the coordinator gives up after `--segments-wait`, and prints merged
/// `-P` lines over every segment.
#[test]
fn the_coordinator_waits_a_limited_time_and_prints_merged_progress() {
    let db = fresh_db("fleet_wait_limit");
    common::pgbench_init(&db, 1);
    let c = coordinator(
        &db,
        2,
        &["-n", "-S", "-c", "2", "-T", "2", "--segments-wait", "2"],
    );
    let c = wait_within(c, Duration::from_secs(60)).expect("the coordinator waited on");
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(
        c.stderr
            .contains("only 0 of 2 segments registered within 2 s (--segments-wait)"),
        "{}",
        c.stderr
    );
    let (coord, _) = segmented(&db, 2, &["-n", "-S", "-c", "2", "-T", "4", "-P", "1"]);
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    let lines = coord
        .stderr
        .lines()
        .filter(|l| l.contains("progress: ") && l.contains("(merged, 2 segments)"))
        .count();
    assert!(lines >= 2, "{}", coord.stderr);
}

/// Issue 20 item 8(f): `--store URL` keeps the merged run (PostgreSQL results store), with
/// whether it is complete and the target the workers proved they reach.
#[test]
fn the_merged_run_is_stored_in_a_results_store() {
    let db = fresh_db("fleet_store");
    let store = fresh_db("fleet_store_results");
    common::pgbench_init(&db, 1);
    let (coord, _) = segmented(
        &db,
        2,
        &["-n", "-S", "-c", "2", "-t", "5", "--store", &store.url()],
    );
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    assert!(
        coord.stderr.contains("stored as run 1 in"),
        "{}",
        coord.stderr
    );
    let mut show = pgrig(&db);
    show.args(["results", "show", "1", "--store", &store.url()]);
    let shown = wait(show.spawn().unwrap());
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    let v: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    let text = v.to_string();
    assert!(text.contains("\"complete\":true"), "{text}");
    assert!(text.contains("pgbench scale 1"), "{text}");
    assert!(text.contains("\"missing\":[]"), "{text}");
}
