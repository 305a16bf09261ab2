//! Option families compared with pgbench 15 on the same database: throttling with a latency
//! limit (`-R -L`), a connection per transaction (`-C`), progress with timestamps, and the
//! transaction logs (`-l`, `--log-prefix`, `--aggregate-interval`, `--sampling-rate`).

use crate::common;

use std::path::Path;

use common::*;
use pgrig_testkit::{fresh_db, run, TestDb};

#[test]
fn throttled_run_with_latency_limit_reports_like_pgbench() {
    let db = fresh_db("throttle");
    pgbench_init(&db, 1);
    assert_same_report_shape(
        &db,
        &["-S", "-R", "300", "-L", "2", "-T", "2", "-c", "2", "-n"],
    );
}

#[test]
fn connection_per_transaction_reports_like_pgbench() {
    let db = fresh_db("connect_each");
    pgbench_init(&db, 1);
    assert_same_report_shape(&db, &["-S", "-C", "-t", "10", "-c", "2", "-n"]);
}

#[test]
fn progress_with_timestamps_prints_epoch_stamped_lines() {
    let db = fresh_db("progress_ts");
    pgbench_init(&db, 1);
    let (ours, theirs) = assert_same_report_shape(
        &db,
        &["-S", "-T", "2", "-P", "1", "--progress-timestamp", "-n"],
    );
    let stamped = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("progress: "))
            .map(|l| {
                let t: f64 = l["progress: ".len()..]
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(t > 1.6e9, "not an epoch stamp: {l}");
                without_numbers(l)
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (stamped(&ours), stamped(&theirs));
    assert!(!a.is_empty());
    assert_eq!(a.first(), b.first());
}

/// Lines of every log file in `dir` whose name starts with `prefix`, with the number of files.
fn log_lines(dir: &Path, prefix: &str) -> (usize, Vec<String>) {
    let mut files = 0;
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(&format!("{prefix}.")) {
            files += 1;
            lines.extend(
                std::fs::read_to_string(&p)
                    .unwrap()
                    .lines()
                    .map(str::to_owned),
            );
        }
    }
    (files, lines)
}

fn run_logged(db: &TestDb, prog: Option<&str>, dir: &Path, args: &[&str]) {
    let mut c = match prog {
        None => {
            let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
            c.arg("bench");
            c
        }
        Some(p) => db.command(p),
    };
    c.current_dir(dir).args(args);
    let out = run(c);
    assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
}

fn field_counts(lines: &[String]) -> Vec<usize> {
    let mut v: Vec<usize> = lines.iter().map(|l| l.split(' ').count()).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn transaction_logs_have_pgbench_files_and_fields() {
    let db = fresh_db("txlog");
    pgbench_init(&db, 1);
    let pgbench = pgrig_testkit::pgbench_oracle();
    let pgbench = pgbench.to_str().unwrap();
    let cases: [&[&str]; 3] = [
        &[
            "-S",
            "-t",
            "25",
            "-c",
            "2",
            "-j",
            "2",
            "-n",
            "-l",
            "--log-prefix=tx",
        ],
        &[
            "-S",
            "-R",
            "500",
            "-t",
            "25",
            "-c",
            "2",
            "-n",
            "-l",
            "--log-prefix=tx",
        ],
        &[
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "-n",
            "-l",
            "--aggregate-interval=1",
            "--log-prefix=tx",
        ],
    ];
    for args in cases {
        let ours = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        run_logged(&db, None, ours.path(), args);
        run_logged(&db, Some(pgbench), theirs.path(), args);
        let (of, ol) = log_lines(ours.path(), "tx");
        let (tf, tl) = log_lines(theirs.path(), "tx");
        assert_eq!(of, tf, "{args:?}: number of log files");
        // pgbench 15-18's formats (bench_log_formats covers each option)
        assert_eq!(
            field_counts(&ol),
            field_counts(&tl),
            "{args:?}: fields per line"
        );
        if !args.contains(&"--aggregate-interval=1") {
            assert_eq!(ol.len(), tl.len(), "{args:?}: one line per transaction");
            assert_eq!(ol.len(), 50);
        }
    }
}

#[test]
fn sampling_rate_logs_about_that_fraction() {
    let db = fresh_db("sampling");
    pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    run_logged(
        &db,
        None,
        dir.path(),
        &[
            "-S",
            "-t",
            "400",
            "-n",
            "-l",
            "--sampling-rate=0.25",
            "--log-prefix=s",
        ],
    );
    let (files, lines) = log_lines(dir.path(), "s");
    assert_eq!(files, 1);
    assert!(
        (40..=170).contains(&lines.len()),
        "{} of 400 logged",
        lines.len()
    );
}
