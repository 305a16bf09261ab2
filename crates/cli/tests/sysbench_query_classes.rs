//! The native path's query classes and `--events`, recomputed from the table's contents and
//! checked against sysbench 1.0.20 on the same database: a statement's class follows its reply
//! (a DELETE that finds no row is "other", as sysbench's pgsql driver counts it), in the final
//! report and in every `--report-interval` line; `--events` is the run's total over all
//! threads, not a per-thread quota.

use crate::sysbench_common;

use pgrig_testkit::{fresh_db, CmdOutput, TestDb};
use sysbench_common::{pgrig, sysbench};

/// The number after `label` on the report's line.
fn figure(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{report}"));
    line[line.find(label).unwrap() + label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

fn rows(db: &TestDb) -> u64 {
    db.psql("select count(*) from sbtest1")
        .trim()
        .parse()
        .unwrap()
}

/// Runs `args` with `tool` on a table of `size` rows (prepared by sysbench), and returns the
/// output and the rows the run removed.
fn deleting_run(
    db: &TestDb,
    tool: fn(&TestDb, &[&str]) -> CmdOutput,
    args: &[&str],
) -> (String, u64) {
    let p = sysbench(db, &["oltp_delete", "--table-size=30", "prepare"]);
    assert!(p.success(), "{}", p.stdout);
    let before = rows(db);
    let out = tool(db, args);
    assert_eq!(out.code, Some(0), "{args:?}: {}{}", out.stdout, out.stderr);
    let gone = before - rows(db);
    let c = sysbench(db, &["oltp_delete", "cleanup"]);
    assert!(c.success());
    (out.stdout, gone)
}

#[test]
fn a_delete_that_finds_no_row_counts_as_other_as_sysbenchs_driver_counts_it() {
    let db = fresh_db("sb_classes_delete");
    // 90 random deletes on 30 rows: most find nothing
    let args = [
        "oltp_delete",
        "--table-size=30",
        "--events=90",
        "--time=0",
        "--threads=2",
        "run",
    ];
    for (tool, name) in [
        (pgrig as fn(&TestDb, &[&str]) -> CmdOutput, "pgrig"),
        (sysbench, "sysbench"),
    ] {
        let (report, gone) = deleting_run(&db, tool, &args);
        let (w, o) = (figure(&report, "write:"), figure(&report, "other:"));
        assert!(gone > 0 && gone < 90, "{name}: {gone} rows deleted");
        assert_eq!(
            w, gone,
            "{name}: writes are the deletes that found a row\n{report}"
        );
        assert_eq!(w + o, 90, "{name}: one query per event\n{report}");
        assert_eq!(figure(&report, "read:"), 0);
        assert_eq!(figure(&report, "total number of events:"), 90);
    }
}

/// `(writes, other)` of each interval line: `[ 1s ] ... qps: Q (r/w/o: R/W/O) ...`
fn interval_classes(report: &str) -> Vec<(f64, f64)> {
    report
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("r/w/o:"))
        .map(|l| {
            let rwo = l.split("r/w/o: ").nth(1).unwrap();
            let nums: Vec<f64> = rwo
                .split(['/', ')'])
                .take(3)
                .map(|v| v.trim().parse().unwrap())
                .collect();
            (nums[1], nums[2])
        })
        .collect()
}

#[test]
fn interval_lines_count_writes_by_reply_not_by_statement() {
    let db = fresh_db("sb_classes_intervals");
    let args = [
        "oltp_delete",
        "--table-size=30",
        "--time=2",
        "--report-interval=1",
        "--threads=1",
        "run",
    ];
    let (report, gone) = deleting_run(&db, pgrig, &args);
    let lines = interval_classes(&report);
    assert!(!lines.is_empty(), "{report}");
    let writes: f64 = lines.iter().map(|l| l.0).sum();
    // 30 rows, thousands of deletes a second: the intervals' writes are rows that existed
    assert!(
        writes <= gone as f64,
        "{writes} writes > {gone} rows deleted\n{report}"
    );
    assert!(lines.iter().any(|l| l.1 > 0.0), "no 'other' in\n{report}");
    assert_eq!(figure(&report, "write:"), gone, "{report}");
}

#[test]
fn events_limit_the_run_over_all_threads_as_sysbench_does() {
    let db = fresh_db("sb_classes_events");
    let p = sysbench(&db, &["oltp_insert", "--table-size=10", "prepare"]);
    assert!(p.success(), "{}", p.stdout);
    for (tool, name) in [
        (pgrig as fn(&TestDb, &[&str]) -> CmdOutput, "pgrig"),
        (sysbench, "sysbench"),
    ] {
        for threads in ["1", "3", "7"] {
            let before = rows(&db);
            let t = format!("--threads={threads}");
            let args = [
                "oltp_insert",
                "--table-size=10",
                "--events=10",
                "--time=0",
                &t,
                "run",
            ];
            let out = tool(&db, &args);
            assert_eq!(
                out.code,
                Some(0),
                "{name} {args:?}: {}{}",
                out.stdout,
                out.stderr
            );
            assert_eq!(
                rows(&db) - before,
                10,
                "{name} {t}: rows inserted\n{}",
                out.stdout
            );
            assert_eq!(
                figure(&out.stdout, "total number of events:"),
                10,
                "{name} {t}"
            );
            assert_eq!(figure(&out.stdout, "write:"), 10, "{name} {t}");
        }
    }
}
