//! pgrig's client self-check and percentile lines: a client thread that is busy the whole run
//! is reported as the possible limit (its own CPU, or the CPU it waited for); more TPC-B clients than branch rows are reported as
//! contention; `--percentiles` adds HDR percentile lines to pgbench's report. (The busy-thread
//! tests take turns with the suite's other timing tests: `common::alone`.)

use crate::common;

use common::*;
use pgrig_testkit::fresh_db;

/// A thread that never waits for the server spends the run on a CPU or waiting for one: on a
/// quiet host its CPU time is the limit (`client-saturated`), on a loaded one it waits for a
/// CPU (`host-contended`). Which one depends on the machine; that the two add up to the run
/// and the warnings follow them does not.
#[test]
fn a_thread_busy_all_run_is_reported_as_the_possible_limit() {
    let _alone = common::alone();
    let db = fresh_db("busy");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("spin.sql");
    let json = dir.path().join("out.json");
    // meta-commands only: the client computes and never waits for the server
    std::fs::write(&f, "\\set a random(1, 1000000)\n\\set b :a * 2 + 1\n").unwrap();
    let out = pgrig_bench(
        &db,
        &[
            "-n",
            "-T",
            "1",
            "-f",
            f.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &doc["client_cpu"];
    let (cpu, wait) = (
        c["cpu_time"].as_f64().unwrap(),
        c["run_queue_wait"].as_f64().unwrap(),
    );
    let saturated = out.stderr.contains("warning: client thread 0 was on a CPU");
    let contended = out
        .stderr
        .contains("warning: client thread 0 waited for a CPU");
    assert_eq!(saturated, cpu >= 0.9, "CPU time {cpu}: {}", out.stderr);
    assert_eq!(
        contended,
        wait >= 0.1,
        "run-queue wait {wait}: {}",
        out.stderr
    );
    // on a CPU or waiting for one all the run (never for the server)
    assert!(cpu + wait >= 0.9, "{c}\n{}", out.stderr);
    assert_eq!(doc["self_check"]["client_saturated"], saturated);
    assert_eq!(doc["self_check"]["host_contended"], contended);
    if saturated {
        assert!(out
            .stderr
            .contains("the result may be limited by the client"));
    }
}

#[test]
fn tpcb_with_more_clients_than_branches_warns_about_contention_and_percentiles_print() {
    let _alone = common::alone();
    let db = fresh_db("contention");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-n", "-c", "3", "-t", "20", "--percentiles"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("3 clients on scale 1"),
        "{}",
        out.stderr
    );
    let line = line_value(&out.stdout, "latency percentiles: ").expect("percentile line");
    for p in ["p50 = ", "p90 = ", "p95 = ", "p99 = ", "p99.9 = ", "max = "] {
        assert!(line.contains(p), "{line}");
    }
    // without the option the report is pgbench's, with no extra line
    let plain = pgrig_bench(&db, &["-n", "-S", "-t", "5"]);
    assert!(!plain.stdout.contains("percentiles"), "{}", plain.stdout);
    assert!(
        !plain.stderr.contains("clients on scale"),
        "select-only has no contention warning"
    );
}

#[test]
fn invoked_as_pgbench_the_self_check_warnings_go_to_the_json_only() {
    let _alone = common::alone();
    let db = fresh_db("contention_pgbench");
    pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = ["-n", "-c", "3", "-t", "20"];
    let theirs = pgbench(&db, &args);
    let mut c = pgbench_link(&db, dir.path());
    c.args(args).arg("--json").arg(&json);
    let ours = pgrig_testkit::run(c);
    assert_eq!(ours.code, Some(0), "{}", ours.stderr);
    // pgbench's stderr contract: exactly what pgbench prints (nothing, for this run)
    assert_eq!(ours.stderr, theirs.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let warnings = doc["self_check"]["warnings"]
        .as_array()
        .expect("self_check.warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("3 clients on scale 1")),
        "{doc}"
    );
}
