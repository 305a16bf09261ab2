//! How SQL errors end (or do not end) a run: `--exit-on-abort` stops everyone at the first
//! aborted client, `--continue-on-error` counts failures and goes on, `--max-tries` with
//! `--failures-detailed` and `--verbose-errors` reports serialization failures like pgbench.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use pgrig_testkit::{fresh_db, TestDb};

fn script(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn exit_on_abort_stops_every_client_at_the_first_abort() {
    let db = fresh_db("exit_on_abort");
    let dir = tempfile::tempdir().unwrap();
    // client 0 fails at once; client 1 would run for the whole 600 s
    let f = script(
        &dir,
        "abort.sql",
        "\\if :client_id = 0\nselect 1/0;\n\\else\nselect pg_sleep(0.01);\n\\endif\n",
    );
    let args = [
        "-n",
        "-c",
        "2",
        "-j",
        "2",
        "-T",
        "600",
        "--exit-on-abort",
        "-f",
        &f,
    ];
    let t = Instant::now();
    let ours = pgrig_bench(&db, &args);
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t.elapsed()
    );
    // pgbench 15 has no --exit-on-abort (PG 16 added it): checked against its documented
    // behaviour instead.
    assert_eq!(ours.code, Some(2), "{}", ours.stderr);
    assert!(
        ours.stderr
            .contains("client 0 script 0 aborted in command 1 query 0: ERROR:  division by zero"),
        "{}",
        ours.stderr
    );
    assert!(
        ours.stderr
            .contains("error: Run was aborted due to an error in thread 0"),
        "{}",
        ours.stderr
    );
}

#[test]
fn continue_on_error_counts_other_failures_and_finishes() {
    let db = fresh_db("continue");
    let dir = tempfile::tempdir().unwrap();
    let f = script(&dir, "div0.sql", "select 1/(:client_id - :client_id);\n");
    let out = pgrig_bench(
        &db,
        &["-n", "-c", "2", "-t", "5", "--continue-on-error", "-f", &f],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        line_value(&out.stdout, "number of failed transactions: "),
        Some("10 (100.000%)"),
        "{}",
        out.stdout
    );
    assert_eq!(
        line_value(&out.stdout, "number of transactions actually processed: "),
        Some("0/10")
    );
}

fn hot_row(db: &TestDb, dir: &tempfile::TempDir) -> String {
    db.psql("create table hot (id int primary key, n int); insert into hot values (1, 0)");
    script(
        dir,
        "hot.sql",
        "begin isolation level repeatable read;\nselect n from hot where id = 1;\nselect pg_sleep(0.002);\nupdate hot set n = n + 1 where id = 1;\ncommit;\n",
    )
}

#[test]
fn failures_detailed_and_verbose_errors_report_serialization_failures_like_pgbench() {
    let db = fresh_db("detailed");
    let dir = tempfile::tempdir().unwrap();
    let f = hot_row(&db, &dir);
    let args = [
        "-n",
        "-c",
        "4",
        "-t",
        "20",
        "--max-tries=2",
        "--failures-detailed",
        "--verbose-errors",
        "-f",
        &f,
    ];
    let (ours, theirs) = assert_same_report_shape(&db, &args);
    let kinds = |s: &str| {
        let mut k: Vec<String> = s
            .lines()
            .filter(|l| l.contains("client "))
            .map(|l| {
                let l = l.replacen("pgrig:", "pgbench:", 1);
                // "pgbench: client 3 repeats the transaction after the error (try 1/2)" -> shape
                without_numbers(&l)
            })
            .collect();
        k.sort();
        k.dedup();
        k
    };
    // the same kinds of lines (which ones occur depends on timing, so compare the union shape)
    let (a, b) = (kinds(&ours), kinds(&theirs));
    assert!(!a.is_empty(), "no verbose error lines:\n{ours}");
    for line in &a {
        assert!(
            b.contains(line) || line.contains("repeats") || line.contains("ends the failed"),
            "unexpected line shape {line:?}\npgbench's: {b:?}"
        );
    }
}
