//! How a sysbench run ends when its events outlast `--time`, against the real sysbench 1.0.20:
//! without `--forced-shutdown` the events still running are waited for and the report follows
//! (status 0); with it the run is cut at `--time` plus the wait with sysbench's FATAL line, the
//! report of what ran and status 2 — on the Lua path (a script sleeping in `ffi.C.usleep`, an
//! endless compiled loop) and on the native path (a bundled test whose statements wait for a
//! row lock held longer than the run), and at high concurrency with sysbench 0.5's options.
//! The option's forms (`N`, `N%`, no value, `off`, a bad value) are read as sysbench reads
//! them. `--json FILE` (a separate value) writes the run document whatever ends the run.

use crate::{common, sysbench_common};

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pgrig_testkit::{fresh_db, fresh_db_on, run, CmdOutput, Server, ServerOptions, TestDb};
use sysbench_common::{command, link, normalise, oracle, pgrig, sysbench};

/// Sleeps `ms` milliseconds in every event (outside Lua, as a lock wait does).
fn sleeper(dir: &Path, ms: u32) -> String {
    let path = dir.join(format!("sleep{ms}.lua"));
    let text = format!(
        "ffi.cdef(\"int usleep(unsigned int);\")\nfunction event() ffi.C.usleep({}) end\n",
        ms * 1000
    );
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs `args` with sysbench and with pgrig: both outputs (normalised) equal, both statuses
/// equal to `code`, each run's length in `window` (s). Returns pgrig's output.
fn same_ending(db: &TestDb, args: &[&str], code: i32, window: (f64, f64)) -> CmdOutput {
    let timed = |f: &dyn Fn() -> CmdOutput| {
        let t = Instant::now();
        let out = f();
        (out, t.elapsed().as_secs_f64())
    };
    let (theirs, their_s) = timed(&|| sysbench(db, args));
    let (ours, our_s) = timed(&|| pgrig(db, args));
    assert_eq!(
        normalise(&ours.stdout),
        normalise(&theirs.stdout),
        "stdout of {args:?}\n--- pgrig:\n{}--- sysbench:\n{}",
        ours.stdout,
        theirs.stdout
    );
    assert_eq!(
        normalise(&ours.stderr),
        normalise(&theirs.stderr),
        "{args:?}"
    );
    assert_eq!(
        theirs.code,
        Some(code),
        "sysbench {args:?}: {}",
        theirs.stdout
    );
    assert_eq!(ours.code, Some(code), "pgrig {args:?}: {}", ours.stdout);
    for (who, s) in [("sysbench", their_s), ("pgrig", our_s)] {
        assert!(
            s >= window.0 && s < window.1,
            "{who} {args:?} took {s:.2} s, expected {window:?}"
        );
    }
    ours
}

#[test]
fn an_event_past_time_is_waited_for_and_reported_as_in_sysbench() {
    let db = fresh_db("sb_shut_wait");
    let dir = tempfile::tempdir().unwrap();
    let script = sleeper(dir.path(), 3000);
    let out = same_ending(
        &db,
        &[&script, "--threads=2", "--time=1", "run"],
        0,
        (2.9, 8.0),
    );
    assert!(out
        .stdout
        .contains("total number of events:              2"));
    // `off` (any case) is the default
    let args = [
        &script,
        "--threads=2",
        "--time=1",
        "--forced-shutdown=OFF",
        "run",
    ];
    same_ending(&db, &args, 0, (2.9, 8.0));
}

#[test]
fn forced_shutdown_cuts_the_run_with_its_report_and_status_2_as_in_sysbench() {
    let db = fresh_db("sb_shut_forced");
    let dir = tempfile::tempdir().unwrap();
    let script = sleeper(dir.path(), 3000);
    let args = [
        &script,
        "--threads=2",
        "--time=1",
        "--forced-shutdown=1",
        "run",
    ];
    let out = same_ending(&db, &args, 2, (1.9, 2.9));
    for line in [
        "Forcing shutdown in 2 seconds",
        "FATAL: The --max-time limit has expired, forcing shutdown...",
        "Number of unfinished transactions on forced shutdown: 2",
        "total number of events:              0",
        "events (avg/stddev):           1.0000/0.00",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
    // a percentage of --time (50 % of 2 s; events that end well after it), and no value (5 %:
    // 0 s of 2)
    let longer = sleeper(dir.path(), 5000);
    let args = [
        &longer,
        "--threads=2",
        "--time=2",
        "--forced-shutdown=50%",
        "run",
    ];
    let out = same_ending(&db, &args, 2, (2.9, 3.9));
    assert!(out.stdout.contains("Forcing shutdown in 3 seconds"));
    let args = [
        &script,
        "--threads=2",
        "--time=2",
        "--forced-shutdown",
        "run",
    ];
    same_ending(&db, &args, 2, (1.9, 2.9));
    // a bad value is refused before anything runs
    let args = [&script, "--time=2", "--forced-shutdown=2x", "run"];
    let out = same_ending(&db, &args, 1, (0.0, 2.0));
    assert_eq!(
        out.stdout,
        "FATAL: Invalid value for --forced-shutdown: '2x'\n"
    );
}

#[test]
fn forced_shutdown_ends_an_endless_compiled_loop() {
    let db = fresh_db("sb_shut_spin");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("spin.lua");
    std::fs::write(&script, "function event()\n  while true do end\nend\n").unwrap();
    let script = script.display().to_string();
    let args = [
        &script,
        "--threads=2",
        "--time=1",
        "--forced-shutdown=1",
        "run",
    ];
    let out = same_ending(&db, &args, 2, (1.9, 4.0));
    assert!(out.stdout.contains("forced shutdown: 2"), "{}", out.stdout);
}

/// `pgrig ARGS --json DIR/NAME.json run` (the separate form the README shows); its output and
/// document.
fn with_json(
    db: &TestDb,
    (dir, name): (&Path, &str),
    args: &[&str],
) -> (CmdOutput, serde_json::Value) {
    let json = dir.join(format!("{name}.json"));
    let path = json.display().to_string();
    let all = [args, &["--json", &path, "run"]].concat();
    let out = pgrig(db, &all);
    (out, read_doc(&json))
}

fn read_doc(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no run document at {}: {e}", path.display()));
    serde_json::from_str(&text).expect("run document")
}

#[test]
fn the_run_document_is_written_however_the_run_ends() {
    let db = fresh_db("sb_shut_json");
    let dir = tempfile::tempdir().unwrap();
    let quick = sleeper(dir.path(), 100);
    let slow = sleeper(dir.path(), 1500);
    let stuck = sleeper(dir.path(), 3000);
    // the limit
    let (out, doc) = with_json(
        &db,
        (dir.path(), "limit"),
        &[&quick, "--threads=2", "--time=1"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert!(doc["transactions"]["ok"].as_u64().unwrap() >= 2);
    assert!(doc.get("unfinished_events").is_none());
    // events waited for past the limit
    let (out, doc) = with_json(
        &db,
        (dir.path(), "waited"),
        &[&slow, "--threads=2", "--time=1"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert_eq!(doc["transactions"]["ok"], 2);
    // the forced shutdown: what ran, the events still running
    let args = [
        stuck.as_str(),
        "--threads=2",
        "--time=1",
        "--forced-shutdown=1",
    ];
    let (out, doc) = with_json(&db, (dir.path(), "forced"), &args);
    assert_eq!(out.code, Some(2), "{}", out.stdout);
    assert_eq!(doc["transactions"]["ok"], 0);
    assert_eq!(doc["unfinished_events"], 2);
    let cut = doc["clients"][1]["unfinished_s"].as_f64().unwrap();
    assert!((1.9..3.0).contains(&cut), "{doc}");
    let duration = doc["duration_s"].as_f64().unwrap();
    assert!((1.9..3.0).contains(&duration), "{duration}");
    // a fatal error: no report (as sysbench), the document of what ran
    let boom = dir.path().join("boom.lua");
    std::fs::write(&boom, "function event() error('boom') end\n").unwrap();
    let boom = boom.display().to_string();
    let (out, doc) = with_json(
        &db,
        (dir.path(), "fatal"),
        &[&boom, "--threads=2", "--time=1"],
    );
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    assert_eq!(doc["aborted_clients"], 1);
}

#[test]
fn ctrl_c_during_an_event_that_outlasts_it_ends_with_the_report_and_document() {
    let db = fresh_db("sb_shut_ctrl_c");
    let dir = tempfile::tempdir().unwrap();
    let stuck = sleeper(dir.path(), 60_000);
    let json = dir.path().join("run.json");
    let path = json.display().to_string();
    let args = [&stuck, "--threads=2", "--time=120", "--json", &path, "run"];
    let child = common::spawn_piped(command(link(), &db, &args));
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    common::interrupt(&child);
    let out = common::finish_within(child, Duration::from_secs(30));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(out.code, Some(130), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("General statistics:"), "{}", out.stdout);
    let doc = read_doc(&json);
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["unfinished_events"], 2);
}

/// A cluster with room for the high-concurrency runs (the shared one keeps 200 connections for
/// every test).
fn roomy_cluster() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(ServerOptions::default().max_connections(400))
    })
}

/// Holds every row of `sbtest1` on a session of its own for `secs`; returns once it does.
fn hold_rows(db: &TestDb, secs: u32) -> Child {
    let sql = format!("BEGIN; UPDATE sbtest1 SET c = c; SELECT pg_sleep({secs}); COMMIT;");
    let mut c = db.command("psql");
    c.args(["-X", "-q", "-c", &sql])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = c.spawn().expect("psql");
    wait_for(
        db,
        "count(*) = 1",
        "query LIKE 'BEGIN; UPDATE sbtest1%' AND wait_event = 'PgSleep'",
    );
    child
}

/// Waits (at most a minute) until `test` holds over the other sessions of `db` matching
/// `filter`.
fn wait_for(db: &TestDb, test: &str, filter: &str) {
    let sql = format!(
        "SELECT {test} FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND {filter}"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.psql(&sql).trim() != "t" {
        assert!(Instant::now() < deadline, "waited a minute for {sql}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `program ARGS` against `db` while a session holds `sbtest1`'s rows for `secs`; then waits
/// for that session and for the backends of clients that were cut off to end.
fn under_lock(db: &TestDb, secs: u32, program: &Path, args: &[&str]) -> (CmdOutput, f64) {
    let holder = hold_rows(db, secs);
    let t = Instant::now();
    let out = run(command(program, db, args));
    let took = t.elapsed().as_secs_f64();
    let _ = common::finish_within(holder, Duration::from_secs(60));
    wait_for(db, "count(*) = 0", "true");
    (out, took)
}

/// Both tools under the same lock: outputs (normalised) equal, statuses `code`; pgrig's output.
fn both_under_lock(db: &TestDb, secs: u32, args: &[&str], code: i32) -> (CmdOutput, f64) {
    let (theirs, _) = under_lock(db, secs, &oracle(), args);
    let (ours, took) = under_lock(db, secs, link(), args);
    assert_eq!(
        normalise(&ours.stdout),
        normalise(&theirs.stdout),
        "stdout of {args:?}\n--- pgrig:\n{}--- sysbench:\n{}",
        ours.stdout,
        theirs.stdout
    );
    assert_eq!(theirs.code, Some(code), "sysbench: {}", theirs.stdout);
    assert_eq!(
        ours.code,
        Some(code),
        "pgrig: {}{}",
        ours.stdout,
        ours.stderr
    );
    (ours, took)
}

fn prepared(name: &str, size: &str) -> TestDb {
    let db = fresh_db_on(roomy_cluster(), name);
    let table = format!("--table-size={size}");
    let out = run(command(
        link(),
        &db,
        &["oltp_update_index", "--tables=1", &table, "prepare"],
    ));
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    db
}

#[test]
fn a_bundled_tests_lock_wait_past_time_ends_as_in_sysbench() {
    let db = prepared("sb_shut_native", "10");
    let run = [
        "oltp_update_index",
        "--tables=1",
        "--table-size=10",
        "--threads=4",
        "--time=1",
    ];
    // waited for: each thread's one event ends when the lock is released
    let (out, took) = both_under_lock(&db, 4, &[&run[..], &["run"]].concat(), 0);
    assert!(
        out.stdout
            .contains("total number of events:              4"),
        "{}",
        out.stdout
    );
    assert!(took > 3.0, "{took}");
    // cut at 2 s: no event ended, four unfinished
    let forced = [&run[..], &["--forced-shutdown=1", "run"]].concat();
    let (out, took) = both_under_lock(&db, 6, &forced, 2);
    assert!(out.stdout.contains("forced shutdown: 4"), "{}", out.stdout);
    assert!((1.9..4.5).contains(&took), "{took}");
}

#[test]
fn a_high_concurrency_0_5_command_line_with_lock_waits_keeps_its_report() {
    let db = prepared("sb_shut_many", "100");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("many.json");
    let script = "/usr/share/sysbench/oltp_read_write.lua";
    let args = [
        script,
        "--tables=1",
        "--table-size=100",
        "--num-threads=150",
        "--max-time=2",
        "--forced-shutdown=1",
        "run",
    ];
    let (out, _) = both_under_lock(&db, 10, &args, 2);
    assert!(
        out.stdout.contains("forced shutdown: 150"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Threads fairness:"), "{}", out.stdout);
    // the document of the same run
    let path = json.display().to_string();
    let with_json = [&args[..6], &["--json", &path, "run"]].concat();
    let (out, took) = under_lock(&db, 10, link(), &with_json);
    assert_eq!(out.code, Some(2), "{}", out.stdout);
    assert!(took < 8.0, "{took}");
    let doc = read_doc(&json);
    assert_eq!(doc["unfinished_events"], 150);
    assert_eq!(doc["clients"].as_array().map(Vec::len), Some(150));
}
