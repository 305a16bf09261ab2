//! Bad input and faults under `pgrig bench`: a clear message, pgbench's exit status, the report
//! for what did run, no panic, no hang.

use crate::common;

use common::*;
use pgrig_testkit::{fresh_db, run};

#[test]
fn unreachable_host_exits_1_naming_the_socket() {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args([
        "bench",
        "-h",
        "/nonexistent-dir",
        "-p",
        "5999",
        "-S",
        "-t",
        "1",
        "postgres",
    ]);
    let out = run(c);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("/nonexistent-dir/.s.PGSQL.5999"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("pgrig: error: could not create connection for setup"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn missing_tables_exit_1_with_init_hint() {
    let db = fresh_db("no_tables");
    let out = pgrig_bench(&db, &["-S", "-t", "1"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("could not count number of branches"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("Perhaps you need to do initialization (\"pgbench -i\")"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_database_exits_1() {
    let db = fresh_db("missing_db");
    let out = pgrig_bench(&db, &["-S", "-t", "1", "no_such_database_here"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains("database \"no_such_database_here\" does not exist"),
        "{}",
        out.stderr
    );
}

#[test]
fn sql_error_aborts_the_client_prints_the_report_and_exits_2() {
    let db = fresh_db("sql_error");
    let dir = std::env::temp_dir().join(format!("pgrig-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.sql");
    std::fs::write(&f, "select 1/0;\n").unwrap();
    let out = pgrig_bench(
        &db,
        &["-n", "-t", "3", "-c", "2", "-f", f.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("client 0 script 0 aborted in command 0 query 0: ERROR:  division by zero"),
        "{}",
        out.stderr
    );
    assert!(out
        .stderr
        .contains("Run was aborted; the above results are incomplete."));
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 0/6"),
        "{}",
        out.stdout
    );
}

#[test]
fn script_syntax_error_exits_1_with_caret() {
    let db = fresh_db("syntax_error");
    let dir = std::env::temp_dir().join(format!("pgrig-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("e1.sql");
    std::fs::write(&f, "\\set i 1 +\n").unwrap();
    let out = pgrig_bench(&db, &["-n", "-t", "1", "-f", f.to_str().unwrap()]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains(
            "e1.sql:1: syntax error in command \"set\"\n\\set i 1 +\n          ^ error found here"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn serialization_failures_are_retried_and_counted() {
    let db = fresh_db("retries");
    db.psql("create table hot (id int primary key, n int); insert into hot values (1, 0)");
    let dir = std::env::temp_dir().join(format!("pgrig-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("hot.sql");
    std::fs::write(
        &f,
        "begin isolation level repeatable read;\nselect n from hot where id = 1;\nselect pg_sleep(0.002);\nupdate hot set n = n + 1 where id = 1;\ncommit;\n",
    )
    .unwrap();
    let out = pgrig_bench(
        &db,
        &[
            "-n",
            "-c",
            "4",
            "-t",
            "25",
            "--max-tries=1000",
            "-f",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        line_value(&out.stdout, "number of transactions actually processed: "),
        Some("100/100")
    );
    assert_eq!(db.psql("select n from hot"), "100");
    let retried = line_value(&out.stdout, "total number of retries: ").expect("retries line");
    assert!(retried.parse::<u64>().unwrap() > 0, "{}", out.stdout);
}

#[test]
fn invoked_through_a_pgbench_link_it_calls_itself_pgbench() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("pgbench");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &link).unwrap();
    let mut c = std::process::Command::new(&link);
    c.args(["-c", "0"]);
    let out = run(c);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("pgbench: error: "), "{}", out.stderr);
}
