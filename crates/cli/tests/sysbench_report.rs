//! `run`, `prepare`, `cleanup` and `help` through the `sysbench` link against the real sysbench
//! 1.0.20 on the same database: the same lines apart from the numbers (digits normalised,
//! interval and histogram lines compared by shape, since their number depends on timing).

use crate::sysbench_common;

use pgrig_testkit::fresh_db;
use sysbench_common::{normalise, pgrig, sysbench};

/// The report's lines with consecutive lines of the same shape (interval lines, histogram
/// rows) kept once.
fn shape(stdout: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in normalise(stdout).lines() {
        let line = if line.contains(" |") && line.trim_start().starts_with('#') {
            "#.# |<bar> #".to_string()
        } else {
            line.to_string()
        };
        if out.last() != Some(&line) {
            out.push(line);
        }
    }
    out
}

fn run_matches(test: &str, extra: &[&str]) {
    let db = fresh_db(&format!("sb_{test}"));
    let prep = [test, "--tables=2", "--table-size=1000", "prepare"];
    let p = sysbench(&db, &prep);
    assert!(p.success(), "{}", p.stdout);
    let mut args = vec![test, "--tables=2", "--table-size=1000"];
    args.extend_from_slice(extra);
    args.push("run");
    let theirs = sysbench(&db, &args);
    let ours = pgrig(&db, &args);
    assert!(theirs.success(), "sysbench {args:?}: {}", theirs.stdout);
    assert_eq!(
        ours.code,
        Some(0),
        "pgrig {args:?}: {}{}",
        ours.stdout,
        ours.stderr
    );
    assert_eq!(
        shape(&ours.stdout),
        shape(&theirs.stdout),
        "{args:?}\n{}",
        ours.stdout
    );
    assert_eq!(ours.stderr, "");
}

#[test]
fn read_write_report_with_intervals_and_histogram_is_sysbenchs() {
    run_matches(
        "oltp_read_write",
        &[
            "--threads=2",
            "--time=2",
            "--report-interval=1",
            "--histogram",
            "--rand-seed=5",
        ],
    );
}

#[test]
fn reports_of_every_oltp_test_are_sysbenchs() {
    for test in [
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
    ] {
        run_matches(test, &["--events=50", "--time=0", "--percentile=99"]);
    }
}

#[test]
fn select_random_tests_report_as_sysbench() {
    for test in ["select_random_points", "select_random_ranges"] {
        let db = fresh_db(&format!("sb_{test}"));
        let prep = [test, "--table-size=1000", "prepare"];
        assert!(sysbench(&db, &prep).success());
        let args = [test, "--table-size=1000", "--events=30", "--time=0", "run"];
        let (theirs, ours) = (sysbench(&db, &args), pgrig(&db, &args));
        assert!(theirs.success());
        assert_eq!(
            shape(&ours.stdout),
            shape(&theirs.stdout),
            "{test}\n{}",
            ours.stdout
        );
    }
}

#[test]
fn prepare_and_cleanup_print_sysbenchs_lines() {
    for (i, case) in [
        &["oltp_read_write", "--tables=3", "--table-size=500"][..],
        &[
            "--threads=2",
            "oltp_read_write",
            "--tables=3",
            "--table-size=500",
        ],
        &["--threads=2", "bulk_insert"],
    ]
    .into_iter()
    .enumerate()
    {
        let db_theirs = fresh_db(&format!("sb_prep_theirs_{i}"));
        let db_ours = fresh_db(&format!("sb_prep_ours_{i}"));
        for cmd in ["prepare", "cleanup"] {
            let mut args = case.to_vec();
            args.push(cmd);
            let theirs = sysbench(&db_theirs, &args);
            let ours = pgrig(&db_ours, &args);
            assert!(
                theirs.success() && ours.success(),
                "{}{}",
                ours.stdout,
                ours.stderr
            );
            // pgrig creates every table, then loads them in parallel, then builds the
            // indexes: the same lines, in another order. sysbench's threads print at the same
            // time, so a line of theirs can lose its newline to another thread's: the messages
            // are split apart at their known starts, and blank lines are not compared.
            let sorted = |s: &str| {
                let mut text = normalise(s);
                for start in [
                    "Creating table '",
                    "Inserting ",
                    "Creating a secondary index",
                ] {
                    text = text.replace(start, &format!("\n{start}"));
                }
                let mut v: Vec<String> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(String::from)
                    .collect();
                v.sort();
                v
            };
            assert_eq!(
                sorted(&ours.stdout),
                sorted(&theirs.stdout),
                "{args:?}\n{}",
                ours.stdout
            );
        }
    }
}

#[test]
fn test_help_lists_sysbenchs_options() {
    let db = fresh_db("sb_help");
    for test in [
        "oltp_read_write",
        "select_random_points",
        "select_random_ranges",
    ] {
        let args = [test, "help"];
        let (theirs, ours) = (sysbench(&db, &args), pgrig(&db, &args));
        assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout), "{test}");
        assert_eq!(ours.code, theirs.code);
    }
}

#[test]
fn pgrig_sysbench_is_the_link() {
    let db = fresh_db("sb_subcommand");
    let args = ["oltp_read_write", "--tables=2", "help"];
    let mut cmd = db.command(env!("CARGO_BIN_EXE_pgrig"));
    cmd.arg("sysbench").args(args);
    let sub = pgrig_testkit::run(cmd);
    let linked = pgrig(&db, &args);
    assert_eq!(sub.code, Some(0));
    assert!(sub
        .stdout
        .contains("oltp_read_write options:\n  --auto_inc[=on|off]"));
    assert_eq!(sub.stdout, linked.stdout);
}
