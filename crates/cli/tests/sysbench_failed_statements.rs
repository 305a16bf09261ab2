//! A failed statement whose error is ignored (duplicate key, deadlock, serialization failure)
//! counts as sysbench 1.0.20's pgsql driver counts it: one ignored error, and in no query
//! class — read, write and other are the statements that succeeded, as the server's own
//! `pg_stat_statements` counts them — on the Lua path and on the native path (a bundled test
//! name), with the same figures as sysbench's on the same run.

use crate::sysbench_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pgrig_testkit::{fresh_db_on, run, CmdOutput, TestDb};
use sysbench_common::{command, link, oracle, reset_statements, statements_cluster};

/// The first number after `label` on the report's line.
fn figure(report: &str, label: &str) -> u64 {
    let line = (report.lines())
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{report}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

/// read, write, other, ignored errors, transactions of a report.
fn figures(report: &str) -> [u64; 5] {
    [
        figure(report, "read:"),
        figure(report, "write:"),
        figure(report, "other:"),
        figure(report, "ignored errors:"),
        figure(report, "transactions:"),
    ]
}

/// `pg_stat_statements` calls of `db` by the statement's first word, upper-cased (the reset's
/// own call left out).
fn calls(db: &TestDb) -> BTreeMap<String, u64> {
    let rows = db.psql(
        "SELECT upper(split_part(query, ' ', 1)), calls FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND query NOT LIKE '%pg_stat_statements%'",
    );
    let mut out = BTreeMap::new();
    for l in rows.lines().filter(|l| !l.is_empty()) {
        let (word, n) = l.split_once('|').expect("two columns");
        *out.entry(word.to_string()).or_insert(0) += n.parse::<u64>().expect("calls");
    }
    out
}

fn script_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-sb-failed-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("script dir");
    dir
}

fn run_in(program: &Path, db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = command(program, db, args);
    c.current_dir(dir);
    run(c)
}

/// `oltp_insert` on a table whose id sequence restarts below its rows: the first 10 inserts
/// fail on a duplicate key (ignored, the event restarts), the next 20 succeed.
fn duplicate_key_run(program: &Path, dir: &Path, test: &str, name: &str) -> (String, TestDb) {
    let db = fresh_db_on(statements_cluster(), name);
    db.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    let p = run_in(
        &oracle(),
        &db,
        dir,
        &["oltp_insert", "--table-size=10", "prepare"],
    );
    assert_eq!(p.code, Some(0), "{}{}", p.stdout, p.stderr);
    db.psql("ALTER SEQUENCE sbtest1_id_seq RESTART WITH 1");
    reset_statements(&db);
    let args = [
        test,
        "--table-size=10",
        "--threads=2",
        "--events=20",
        "--time=0",
        "run",
    ];
    let out = run_in(program, &db, dir, &args);
    assert_eq!(out.code, Some(0), "{name}: {}{}", out.stdout, out.stderr);
    (out.stdout, db)
}

#[test]
fn duplicate_keys_count_as_ignored_errors_only_on_the_native_and_lua_paths() {
    let dir = script_dir("dup");
    // a copy under another name runs through Lua (its `require("oltp_common")` still resolves
    // to sysbench's directory); the bundled name runs natively
    let src = std::fs::read("/usr/share/sysbench/oltp_insert.lua").expect("sysbench's script");
    std::fs::write(dir.join("insert_copy.lua"), src).unwrap();
    let runs = [
        (oracle(), "oltp_insert", "sysbench"),
        (link().to_path_buf(), "oltp_insert", "pgrig native"),
        (link().to_path_buf(), "insert_copy.lua", "pgrig lua"),
    ];
    let mut seen = Vec::new();
    for (i, (program, test, name)) in runs.iter().enumerate() {
        let (report, db) = duplicate_key_run(program, &dir, test, &format!("sb_failed_dup{i}"));
        let f = figures(&report);
        assert_eq!(
            f,
            [0, 20, 0, 10, 20],
            "{name}: r/w/o/errors/events\n{report}"
        );
        let server = calls(&db);
        assert_eq!(
            server.get("INSERT").copied(),
            Some(f[1]),
            "{name}: the server's successful INSERTs are the writes: {server:?}"
        );
        seen.push((name, f));
    }
    assert!(seen.windows(2).all(|w| w[0].1 == w[1].1), "{seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Per event: BEGIN, a SELECT, an INSERT of the thread's next key (every third one already
/// there: the INSERT fails, the transaction rolls back, the event restarts with the next key),
/// COMMIT.
const MIDWAY: &str = r#"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE taken (id int PRIMARY KEY)")
  con:query("INSERT INTO taken SELECT 1000 + 3 * g FROM generate_series(1, 100) g")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  k = 0
end
function event()
  k = k + 1
  con:query("BEGIN")
  con:query_row("SELECT count(*) FROM taken")
  con:query(string.format("INSERT INTO taken VALUES (%d)", 1000 + k))
  con:query("COMMIT")
end
"#;

#[test]
fn a_transaction_failing_midway_counts_its_earlier_statements_and_one_error() {
    let dir = script_dir("midway");
    std::fs::write(dir.join("midway.lua"), MIDWAY).unwrap();
    let mut seen = Vec::new();
    for (i, program) in [oracle(), link().to_path_buf()].iter().enumerate() {
        let db = fresh_db_on(statements_cluster(), &format!("sb_failed_midway{i}"));
        db.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        let p = run_in(program, &db, &dir, &["midway.lua", "prepare"]);
        assert_eq!(p.code, Some(0), "{}{}", p.stdout, p.stderr);
        reset_statements(&db);
        let args = [
            "midway.lua",
            "--threads=1",
            "--events=20",
            "--time=0",
            "run",
        ];
        let out = run_in(program, &db, &dir, &args);
        assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
        let f = figures(&out.stdout);
        // 29 attempts (keys 1..29, 9 of them taken): 29 BEGINs and SELECTs, 20 INSERTs and
        // COMMITs succeed
        assert_eq!(
            f,
            [29, 20, 49, 9, 20],
            "r/w/o/errors/events\n{}",
            out.stdout
        );
        let server = calls(&db);
        let get = |w: &str| server.get(w).copied().unwrap_or(0);
        assert_eq!(get("SELECT"), f[0], "{server:?}");
        assert_eq!(get("INSERT"), f[1], "{server:?}");
        assert_eq!(get("BEGIN") + get("COMMIT"), f[2], "{server:?}");
        seen.push(f);
    }
    assert_eq!(seen[0], seen[1], "sysbench, pgrig");
    let _ = std::fs::remove_dir_all(&dir);
}
