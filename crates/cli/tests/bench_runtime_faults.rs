//! Faults while a benchmark runs: the server stopped (`pg_ctl stop -m immediate`), a backend
//! terminated, Ctrl-C (also on a long statement, which gets cancelled), a wrong password. Each
//! ends promptly with a clear message, the report for what ran and pgbench's exit status.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{finish_within as finish, interrupt, pgbench_init, spawn_piped as spawn};
use pgrig_testkit::{fresh_db, run, ServerOptions};

/// Polls `cond` until it holds (at most a minute, so a loaded machine only makes it slower).
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Counts the other sessions of the current database whose last query matches `pattern` in
/// `state`; `psql` runs the counting query.
fn sessions_sql(state: &str, pattern: &str) -> String {
    format!(
        "select count(*) from pg_stat_activity where datname = current_database() \
         and pid <> pg_backend_pid() and state = '{state}' and query like '{pattern}'"
    )
}

/// Waits until a `-S` run has finished a transaction (a session idle after `-S`'s select; the
/// pattern is that select's own text, so initialisation's backend, which may still be listed
/// for a moment after `pgbench -i` exits, never counts).
fn wait_for_a_transaction(mut psql: impl FnMut(&str) -> String) {
    let sql = sessions_sql(
        "idle",
        "SELECT abalance FROM pgbench_accounts WHERE aid = %",
    );
    wait_until("a transaction has finished", || {
        psql(&sql).trim().parse::<u32>().unwrap_or(0) > 0
    });
}

fn processed(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no processed line in:\n{stdout}"))
}

#[test]
fn server_stopped_immediately_ends_the_run_with_the_report_and_status_2() {
    let mut server = pgrig_testkit::custom_cluster(ServerOptions::default());
    let mut init = Command::new(pgrig_testkit::pgbench_oracle());
    init.envs(server.env("postgres"))
        .args(["-i", "-q", "-s", "1"]);
    assert!(run(init).success());
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.envs(server.env("postgres"))
        .args(["bench", "-c", "2", "-T", "30", "-n", "-S"]);
    let child = spawn(c);
    wait_for_a_transaction(|sql| server.psql("postgres", sql).unwrap_or_default());
    server.stop_immediate();
    let out = finish(child, Duration::from_secs(15));
    assert_eq!(out.code, Some(2), "stderr:\n{}", out.stderr);
    assert!(processed(&out.stdout) > 0, "{}", out.stdout);
    assert!(out.stderr.contains("aborted"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Run was aborted; the above results are incomplete."),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[test]
fn terminated_backends_abort_their_clients_and_the_run_reports_status_2() {
    let db = fresh_db("terminate");
    pgbench_init(&db, 1);
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-c", "2", "-T", "30", "-n", "-S"]);
    let child = spawn(c);
    wait_for_a_transaction(|sql| db.psql(sql));
    db.psql(
        "select count(pg_terminate_backend(pid)) from pg_stat_activity \
         where datname = current_database() and pid <> pg_backend_pid()",
    );
    let out = finish(child, Duration::from_secs(15));
    assert_eq!(out.code, Some(2), "stderr:\n{}", out.stderr);
    assert!(processed(&out.stdout) > 0);
    // pgbench 15: "client N script 0 aborted in command 1 query 0: FATAL:  terminating
    // connection due to administrator command" (or, when the send already fails, "client N
    // aborted in command 1 (SQL) of script 0; perhaps the backend died while processing").
    assert!(
        out.stderr.contains("aborted in command 1 query 0: FATAL:  terminating connection due to administrator command")
            || out.stderr.contains("perhaps the backend died while processing"),
        "{}",
        out.stderr
    );
}

#[test]
fn ctrl_c_stops_the_run_prints_the_report_and_exits_130() {
    let db = fresh_db("ctrlc");
    pgbench_init(&db, 1);
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-c", "2", "-T", "600", "-n", "-S"]);
    let child = spawn(c);
    wait_for_a_transaction(|sql| db.psql(sql));
    let t = Instant::now();
    interrupt(&child);
    let out = finish(child, Duration::from_secs(60));
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?} to stop",
        t.elapsed()
    );
    assert_eq!(out.code, Some(130), "stderr:\n{}", out.stderr);
    assert!(processed(&out.stdout) > 0);
    assert!(
        out.stderr.contains("interrupted (Ctrl-C)"),
        "{}",
        out.stderr
    );
}

#[test]
fn ctrl_c_cancels_a_long_statement() {
    let db = fresh_db("ctrlc_long");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("long.sql");
    std::fs::write(&script, "select pg_sleep(60);\n").unwrap();
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-c", "2", "-t", "1", "-n", "-f"])
        .arg(&script);
    let child = spawn(c);
    let sql = sessions_sql("active", "%pg_sleep(60)%");
    wait_until("both clients are sleeping", || db.psql(&sql).trim() == "2");
    let t = Instant::now();
    interrupt(&child);
    let out = finish(child, Duration::from_secs(50));
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?} to stop",
        t.elapsed()
    );
    assert_eq!(out.code, Some(130), "stderr:\n{}", out.stderr);
    assert!(
        out.stderr
            .contains("cancelling the statements still running"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("canceling statement due to user request"),
        "{}",
        out.stderr
    );
    assert_eq!(db.psql(&sql).trim(), "0", "a statement survived Ctrl-C");
}

#[test]
fn wrong_password_fails_like_pgbench() {
    let server = pgrig_testkit::custom_cluster(
        ServerOptions::default()
            .superuser_password("right")
            .tcp(true)
            .hba([
                "local all all scram-sha-256",
                "host all all 127.0.0.1/32 scram-sha-256",
            ]),
    );
    let env: Vec<(String, String)> = server
        .env("postgres")
        .into_iter()
        .filter(|(k, _)| k != "PGPASSWORD")
        .collect();
    let go = |prog: &str, args: &[&str]| {
        let mut c = Command::new(prog);
        c.envs(env.clone())
            .env("PGPASSWORD", "wrong")
            .env_remove("PGPASSFILE")
            .args(args);
        run(c)
    };
    let ours = go(env!("CARGO_BIN_EXE_pgrig"), &["bench", "-S", "-t", "1"]);
    let theirs = go(
        pgrig_testkit::pgbench_oracle().to_str().unwrap(),
        &["-S", "-t", "1"],
    );
    assert_eq!(ours.code, Some(1), "{}", ours.stderr);
    assert_eq!(ours.code, theirs.code);
    assert_eq!(ours.stderr.replace("pgrig:", "pgbench:"), theirs.stderr);
}
