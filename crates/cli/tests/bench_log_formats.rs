//! `pgrig bench -l` writes pgbench 15-18's log formats (docs/figures.md, "pgbench's `-l` logs"):
//! with each option that shapes a line (`-l` alone, `--sampling-rate`, `-R`, `-R -L`,
//! `--max-tries`, `--aggregate-interval` with each of these) every line has as many fields as
//! pgbench 15's under the same options, the same fields carry figures (the lag columns with
//! `-R`, the retries column with `--max-tries`), and the parsers written for that format read
//! both tools' logs: pgbench-tools' own `log-to-csv`/`log-to-csv_rates` (third-party: never
//! copied here; read unmodified from the fetched repository, `PGRIG_PGBENCH_TOOLS_MIRROR` or
//! `/work/.mirror/gregs1104+pgbench-tools/repo`, at commit 50aaeff) for per-transaction logs, and a parser of the
//! aggregated line as PostgreSQL 15's documentation gives it (fifteen named fields, unpacked
//! exactly). The sixteenth aggregated column, pgbench 19's other failures, appears only with
//! pgbench 19's `--continue-on-error`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::pgbench_init;
use pgrig_testkit::{fresh_db, run, TestDb};

/// Runs pgrig (`prog` None) or pgbench in `dir`; the log lines of files `tx.*`.
fn logged(db: &TestDb, prog: Option<&str>, dir: &Path, args: &[&str]) -> Vec<String> {
    let mut c = match prog {
        None => {
            let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
            c.arg("bench");
            c
        }
        Some(p) => db.command(p),
    };
    c.current_dir(dir)
        .args(args)
        .args(["-n", "-l", "--log-prefix=tx"]);
    let out = run(c);
    assert_eq!(out.code, Some(0), "{prog:?} {args:?}: {}", out.stderr);
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("tx.") {
            let text = std::fs::read_to_string(&p).unwrap();
            lines.extend(text.lines().map(str::to_owned));
        }
    }
    assert!(!lines.is_empty(), "{prog:?} {args:?}: no log lines");
    lines
}

/// The distinct numbers of fields per line.
fn field_counts(lines: &[String]) -> Vec<usize> {
    let mut v: Vec<usize> = lines.iter().map(|l| l.split(' ').count()).collect();
    v.sort();
    v.dedup();
    v
}

/// Which columns of aggregated lines hold a figure other than 0 in some line.
fn figure_columns(lines: &[String]) -> Vec<bool> {
    let width = lines
        .iter()
        .map(|l| l.split(' ').count())
        .max()
        .unwrap_or(0);
    (0..width)
        .map(|i| {
            lines
                .iter()
                .any(|l| l.split(' ').nth(i).is_some_and(|f| f != "0"))
        })
        .collect()
}

fn python() -> Command {
    Command::new("python3")
}

/// Runs a parser (a script file, or `-c CODE`) on the lines as stdin; its stdout.
fn parse_with(script: &[&str], lines: &[String]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pgbench.log");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = python()
        .args(script)
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .expect("python3, the parsers' interpreter: install it");
    assert!(
        out.status.success(),
        "python3 {script:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The pgbench-tools commit whose parsers the tests run (BSD-3-Clause; fetched code is read
/// where it lives, never committed).
const PGBENCH_TOOLS_COMMIT: &str = "50aaeff3441e6b52b9df07fe8857cdcb49a2de6c";

/// pgbench-tools' script `name`, written unchanged into a scratch directory from the fetched
/// repository; `None` (reported by `pgrig_testkit::skip`) where this machine has no copy.
fn tools_script(name: &str, scratch: &Path) -> Option<PathBuf> {
    let git = std::env::var_os("PGRIG_PGBENCH_TOOLS_MIRROR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/work/.mirror/gregs1104+pgbench-tools/repo".into());
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&git)
        .args(["show", &format!("{PGBENCH_TOOLS_COMMIT}:{name}")])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let path = scratch.join(name);
            std::fs::write(&path, o.stdout).unwrap();
            Some(path)
        }
        _ => {
            pgrig_testkit::skip(&format!(
                "pgbench-tools is not fetched at {} (fetch github:gregs1104/pgbench-tools)",
                git.display()
            ));
            None
        }
    }
}

/// pgbench-tools' parser of per-transaction logs (`log-to-csv_rates` when the run had `-R`):
/// one CSV row per line.
fn assert_pgbench_tools_reads(lines: &[String], rates: bool, what: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let name = if rates {
        "log-to-csv_rates"
    } else {
        "log-to-csv"
    };
    let Some(script) = tools_script(name, scratch.path()) else {
        return;
    };
    let csv = parse_with(&[script.to_str().unwrap(), "1", "pgrig-test"], lines);
    assert_eq!(csv.lines().count(), lines.len(), "{what}: {csv}");
}

/// PostgreSQL 15's documented aggregated line, unpacked exactly: `lines transactions lag_sum`.
const AGGREGATE_PARSER: &str = r#"
import sys
lines = tx = lag = 0
for l in sys.stdin:
    (interval_start, num_transactions, sum_latency, sum_latency_2, min_latency, max_latency,
     sum_lag, sum_lag_2, min_lag, max_lag, skipped, retried, retries,
     serialization_failures, deadlock_failures) = l.strip().split(" ")
    lines += 1
    tx += int(num_transactions)
    lag += float(sum_lag)
print(lines, tx, lag)
"#;

fn aggregate_totals(lines: &[String]) -> (usize, u64, f64) {
    let out = parse_with(&["-c", AGGREGATE_PARSER], lines);
    let v: Vec<&str> = out.split_whitespace().collect();
    (
        v[0].parse().unwrap(),
        v[1].parse().unwrap(),
        v[2].parse().unwrap(),
    )
}

#[test]
fn transaction_logs_have_pgbench_15s_fields_and_its_parsers_read_them() {
    let db = fresh_db("log_formats");
    pgbench_init(&db, 1);
    let pgbench = pgrig_testkit::pgbench_oracle();
    let pgbench = pgbench.to_str().unwrap();
    let per_tx: [&[&str]; 5] = [
        &["-S", "-t", "25", "-c", "2"],
        &["-S", "-t", "200", "-c", "2", "--sampling-rate=0.5"],
        &["-S", "-R", "500", "-t", "25", "-c", "2"],
        &["-S", "-R", "2000", "-L", "1", "-t", "50", "-c", "2"],
        &["-S", "-t", "25", "-c", "2", "--max-tries=3"],
    ];
    for args in per_tx {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ours = logged(&db, None, a.path(), args);
        let theirs = logged(&db, Some(pgbench), b.path(), args);
        let (ours_n, theirs_n) = (field_counts(&ours), field_counts(&theirs));
        assert_eq!(ours_n, theirs_n, "{args:?}: fields per line");
        let throttled = args.contains(&"-R");
        let want = 6 + usize::from(throttled) + usize::from(args.contains(&"--max-tries=3"));
        assert_eq!(ours_n, vec![want], "{args:?}");
        if !args.contains(&"-L") && !args.contains(&"--max-tries=3") {
            // (a skipped line's `skipped` latency, and a retries column read as lag, are
            // pgbench-tools' own limits: pgbench's logs trip them the same way)
            assert_pgbench_tools_reads(&ours, throttled, &format!("pgrig {args:?}"));
            assert_pgbench_tools_reads(&theirs, throttled, &format!("pgbench {args:?}"));
        }
    }
    let aggregated: [&[&str]; 4] = [
        &["-S", "-T", "2", "-c", "2", "--aggregate-interval=1"],
        &[
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "-R",
            "500",
            "--aggregate-interval=1",
        ],
        &[
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "-R",
            "2000",
            "-L",
            "1",
            "--aggregate-interval=1",
        ],
        &[
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "--max-tries=3",
            "--failures-detailed",
            "--aggregate-interval=1",
        ],
    ];
    for args in aggregated {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ours = logged(&db, None, a.path(), args);
        let theirs = logged(&db, Some(pgbench), b.path(), args);
        assert_eq!(field_counts(&theirs), vec![15], "pgbench 15 {args:?}");
        assert_eq!(field_counts(&ours), vec![15], "pgrig {args:?}: {ours:?}");
        // the same columns carry figures: latencies always, the lag sums and maximum with -R
        // (the least lag may be 0 for either)
        let (o, t) = (figure_columns(&ours), figure_columns(&theirs));
        for i in [0, 1, 2, 3, 4, 5, 6, 7, 9] {
            assert_eq!(o[i], t[i], "{args:?} column {i}: {ours:?} vs {theirs:?}");
        }
        for (who, lines) in [("pgrig", &ours), ("pgbench", &theirs)] {
            let (n, tx, lag) = aggregate_totals(lines);
            assert_eq!(n, lines.len(), "{who} {args:?}");
            assert!(tx > 0, "{who} {args:?}: {lines:?}");
            assert_eq!(lag > 0.0, args.contains(&"-R"), "{who} {args:?}: {lines:?}");
        }
    }
}

#[test]
fn continue_on_error_adds_pgbench_19s_other_failures_column() {
    let db = fresh_db("log_formats_19");
    pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-S",
        "-T",
        "2",
        "--continue-on-error",
        "--failures-detailed",
        "--aggregate-interval=1",
    ];
    let lines = logged(&db, None, dir.path(), &args);
    assert_eq!(field_counts(&lines), vec![16], "{lines:?}");
    // pgbench 15 does not know the option: the format goes with pgbench 19
    let pgbench = pgrig_testkit::pgbench_oracle();
    let mut c = db.command(pgbench);
    c.current_dir(dir.path()).args(args).args(["-n", "-l"]);
    let out = run(c);
    assert_eq!(out.code, Some(1), "{out:?}");
}
