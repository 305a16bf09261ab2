//! bulk_insert's figures through the `sysbench` link, recomputed from the tables and against
//! the real sysbench 1.0.20: an event is a row (events = `count(*)` of the tables after the
//! run, for pgrig and for sysbench), and "queries" are the multi-row INSERTs (the same number
//! as sysbench's for the same events).

use crate::sysbench_common;

use pgrig_testkit::{fresh_db, CmdOutput, TestDb};
use sysbench_common::{pgrig, sysbench};

/// The number after `label` in a report.
fn figure(out: &CmdOutput, label: &str) -> u64 {
    let line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{}", out.stdout));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

/// Rows in `sbtest1..=threads`.
fn rows(db: &TestDb, threads: u32) -> u64 {
    let sum: Vec<String> = (1..=threads)
        .map(|t| format!("(SELECT count(*) FROM sbtest{t})"))
        .collect();
    db.psql(&format!("SELECT {}", sum.join(" + ")))
        .parse()
        .expect("count")
}

/// Prepares, runs `args` and returns the report and the rows in the tables afterwards.
fn bulk_run(
    db: &TestDb,
    program: fn(&TestDb, &[&str]) -> CmdOutput,
    threads: u32,
    args: &[&str],
) -> (CmdOutput, u64) {
    let t = format!("--threads={threads}");
    let prepared = program(db, &[&t, "bulk_insert", "prepare"]);
    assert!(prepared.success(), "{}", prepared.stdout);
    let mut all = vec![t.as_str(), "bulk_insert"];
    all.extend_from_slice(args);
    all.push("run");
    let out = program(db, &all);
    assert_eq!(out.code, Some(0), "{all:?}: {}{}", out.stdout, out.stderr);
    (out, rows(db, threads))
}

#[test]
fn events_are_the_rows_inserted() {
    // A timed run on two threads: every event is a row in the tables, as with sysbench.
    for (name, program) in [
        ("pgrig", pgrig as fn(&TestDb, &[&str]) -> CmdOutput),
        ("sysbench", sysbench),
    ] {
        let db = fresh_db(&format!("sb_bulk_time_{name}"));
        let (out, rows) = bulk_run(&db, program, 2, &["--time=2"]);
        let events = figure(&out, "total number of events:");
        assert_eq!(events, figure(&out, "transactions:"), "{name}");
        assert_eq!(events, rows, "{name}: events vs count(*)\n{}", out.stdout);
        assert!(
            events > 39_033,
            "{name}: {events} rows in 2 s fill a buffer"
        );
        let inserts = figure(&out, "write:");
        assert_eq!(inserts, figure(&out, "queries:"), "{name}");
        // at least one INSERT per thread, at most one per full buffer (over 29,000 rows of ids
        // below 10^7) and a last one each
        assert!(
            (2..=events / 29_000 + 2).contains(&inserts),
            "{name}: {inserts} INSERTs for {events} rows"
        );
    }
}

#[test]
fn an_events_limit_inserts_as_many_rows_and_statements_as_sysbench() {
    let args = ["--events=100000", "--time=0"];
    let ours_db = fresh_db("sb_bulk_events_pgrig");
    let theirs_db = fresh_db("sb_bulk_events_sysbench");
    let (ours, our_rows) = bulk_run(&ours_db, pgrig, 1, &args);
    let (theirs, their_rows) = bulk_run(&theirs_db, sysbench, 1, &args);
    for (out, rows) in [(&ours, our_rows), (&theirs, their_rows)] {
        assert_eq!(figure(out, "total number of events:"), 100_000);
        assert_eq!(rows, 100_000);
    }
    // sysbench's batches: 1..39033, 39034..76480, the rest when the thread ends
    assert_eq!(figure(&theirs, "write:"), 3);
    assert_eq!(figure(&ours, "write:"), figure(&theirs, "write:"));
    let q = "SELECT min(id), max(id), bool_and(id = k) FROM sbtest1";
    assert_eq!(ours_db.psql(q), theirs_db.psql(q));
}
