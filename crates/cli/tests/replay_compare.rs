//! `pgrig replay --compare`: a log recorded from a real PostgreSQL with
//! `log_min_duration_statement = 0` (pgbench running a script of two statements, through the
//! simple protocol, so every execution has its own constants) replayed onto another server
//! holding the same data — unchanged, with an index dropped, with a table renamed. The
//! per-statement figures are checked against the log's count and the replay server's
//! `pg_stat_statements`; the document is kept in a store and drawn by `pgrig report`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pgrig_lab::{Server, ServerOptions};
use pgrig_results::replay_doc::{ReplayDocument, StatementChange};

use crate::common;

/// Executions of each statement in the log: pgbench's clients × transactions.
const CLIENTS: u64 = 2;
const TRANSACTIONS: u64 = 100;

/// The statement the index serves (10 000 of `big`'s 200 000 rows counted through `big_k`) and
/// one it does not touch (a scan of `small`). Each also sleeps 30 ms on the server: the log's
/// durations are the server's time, the replayed latency adds the round trip and the client's
/// wake-up (milliseconds on a loaded 2-core machine), which must stay well under the 20 %
/// a change needs to be shown; a seq scan of `big` instead of the index adds far more.
const SCRIPT: &str = "\\set k random(1, 100000)\n\
SELECT pg_sleep(0.03), count(*) FROM big WHERE k BETWEEN :k AND :k + 5000;\n\
SELECT pg_sleep(0.03), sum(v) FROM small WHERE id > 0;\n";

const SCHEMA: &str = "CREATE TABLE big (id int PRIMARY KEY, k int, pad text);\n\
INSERT INTO big SELECT i, i / 2, repeat('x', 40) FROM generate_series(1, 200000) i;\n\
CREATE INDEX big_k ON big (k);\n\
CREATE TABLE small (id int, v int);\n\
INSERT INTO small SELECT i, i FROM generate_series(1, 10000) i;\n\
VACUUM ANALYZE;\n\
SELECT count(*) FROM big WHERE k > 0; SELECT sum(v) FROM small WHERE id > 0;";

struct Recording {
    /// the log, copied out of the recording server
    log: PathBuf,
    /// the server replays go to (pg_stat_statements loaded) and the database's name there
    target: &'static Server,
    db: String,
}

fn psql(server: &Server, db: &str, sql: &str) -> String {
    server
        .psql(db, sql)
        .unwrap_or_else(|e| panic!("psql on {db}: {e}"))
}

/// Waits until the log collector has written `needle` to `path`.
fn wait_for_log(path: &Path, needle: &str) {
    for _ in 0..100 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} never showed {needle:?}", path.display());
}

fn recording() -> &'static Recording {
    static REC: OnceLock<Recording> = OnceLock::new();
    REC.get_or_init(|| {
        let rec: &'static Server = Box::leak(Box::new(pgrig_testkit::custom_cluster(
            ServerOptions::default()
                .setting("logging_collector", "on")
                .setting("log_directory", "log")
                .setting("log_filename", "rec.log")
                .setting("log_connections", "on")
                .setting("log_disconnections", "on")
                .setting("log_line_prefix", "%m|%u|%d|%c|")
                .setting("lc_messages", "C")
                .setting("log_min_messages", "warning"),
        )));
        let target: &'static Server = Box::leak(Box::new(pgrig_testkit::custom_cluster(
            ServerOptions::default().setting("shared_preload_libraries", "pg_stat_statements"),
        )));
        // the same database name on both: the replay connects to the recorded one
        // (kept: dropping it drops the database)
        let db = Box::leak(Box::new(pgrig_testkit::fresh_db_on(target, "rcmp")))
            .name
            .clone();
        psql(rec, "postgres", &format!("CREATE DATABASE {db}"));
        for s in [rec, target] {
            psql(s, &db, SCHEMA);
        }
        psql(target, &db, "CREATE EXTENSION pg_stat_statements");
        psql(
            rec,
            "postgres",
            &format!("ALTER DATABASE {db} SET log_min_duration_statement = 0"),
        );
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("two.sql");
        std::fs::write(&script, SCRIPT).unwrap();
        let mut cmd = Command::new(pgrig_testkit::pgbench_oracle());
        cmd.envs(rec.env(&db)).args([
            "-n",
            "-M",
            "simple",
            "-c",
            &CLIENTS.to_string(),
            "-t",
            &TRANSACTIONS.to_string(),
            "-f",
        ]);
        cmd.arg(&script).arg(&db);
        let out = pgrig_testkit::run(cmd);
        assert!(out.success(), "pgbench: {}", out.stderr);
        psql(rec, &db, "SELECT 'recording done'");
        let log = rec.data_dir().join("log").join("rec.log");
        wait_for_log(&log, "SELECT 'recording done'");
        let copy = target.root_dir().join("compare.log");
        std::fs::copy(&log, &copy).unwrap();
        Recording {
            log: copy,
            target,
            db,
        }
    })
}

/// `pgrig replay --compare` of the recording onto its target (at the recorded pace) after `change`
/// (on a target as recorded otherwise); the output and the document `--json` wrote.
fn replay_after(dir: &Path, change: &str, extra: &[&str]) -> (String, ReplayDocument) {
    let r = recording();
    // as recorded, whatever an earlier failed test left
    psql(
        r.target,
        &r.db,
        "CREATE INDEX IF NOT EXISTS big_k ON big (k); ALTER TABLE IF EXISTS small_gone RENAME TO small",
    );
    psql(r.target, &r.db, change);
    let json = dir.join("replay.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    cmd.envs(r.target.env(&r.db))
        .args(["replay", "--compare", "--json"])
        .arg(&json)
        .args(extra)
        .arg(&r.log)
        .current_dir(dir);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let doc = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (stdout, doc)
}

fn statement<'a>(doc: &'a ReplayDocument, table: &str) -> &'a StatementChange {
    doc.replay
        .statements
        .iter()
        .find(|s| s.statement.contains(&format!("FROM {table} ")))
        .unwrap_or_else(|| panic!("no statement on {table}: {:?}", doc.replay.statements))
}

/// `pg_stat_statements`' calls of the statement reading `table`.
fn server_calls(table: &str) -> u64 {
    let r = recording();
    let n = psql(
        r.target,
        &r.db,
        &format!(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
             WHERE query LIKE 'SELECT % FROM {table} %'"
        ),
    );
    n.trim().parse().unwrap()
}

#[test]
fn an_identical_copy_shows_no_change_and_the_counts_match_the_log_and_the_server() {
    let _turn = common::alone();
    let r = recording();
    let dir = tempfile::tempdir().unwrap();
    let (out, doc) = replay_after(dir.path(), "SELECT pg_stat_statements_reset()", &[]);
    assert!(out.contains("What changed"), "{out}");
    // the two statements and the recording's closing `SELECT 'recording done'`
    assert_eq!(doc.replay.statements.len(), 3, "{out}");
    let log = std::fs::read_to_string(&r.log).unwrap();
    for table in ["big", "small"] {
        let s = statement(&doc, table);
        assert_eq!(s.verdict, "~", "{table}: {out}");
        // the log's own count of the statement's durations
        let in_log = log
            .lines()
            .filter(|l| l.contains("duration: ") && l.contains(&format!("FROM {table} ")))
            .count() as u64;
        assert_eq!(s.recorded.count, CLIENTS * TRANSACTIONS, "{table}");
        assert_eq!(s.recorded.count, in_log, "{table}");
        assert_eq!(s.replayed.count, server_calls(table), "{table}: {out}");
        assert!(s.errors.is_empty(), "{table}: {:?}", s.errors);
    }
}

#[test]
fn a_dropped_index_slows_only_the_statements_it_served_and_the_report_draws_it() {
    let _turn = common::alone();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    let store = store.to_str().unwrap();
    let (out, doc) = replay_after(dir.path(), "DROP INDEX big_k", &["--store", store]);
    let big = statement(&doc, "big");
    assert_eq!(big.verdict, "+", "{out}");
    // "+" needs a change of 20 % or more (the scan without the index adds ~10 ms to a statement
    // of ~31 ms, less when the replaying client is slowed down by other work)
    assert!(big.change_pct.unwrap() >= 20.0, "{out}");
    assert_eq!(statement(&doc, "small").verdict, "~", "{out}");
    // slowest-getting first, in the table too
    assert!(
        doc.replay.statements[0].statement.contains("FROM big "),
        "{out}"
    );
    let table = &out[out.find("What changed").unwrap()..];
    assert!(
        table.find("FROM big ").unwrap() < table.find("FROM small ").unwrap(),
        "{table}"
    );
    // the stored run reads back, typed, and the report draws the section
    let stored = pgrig_results::Store::open_existing(store)
        .unwrap()
        .export(None)
        .unwrap();
    let view = pgrig_results::RunView::of(&stored[0]);
    let replay = view.replay.expect("the stored run has its replay part");
    assert_eq!(replay.statements, doc.replay.statements);
    let page = dir.path().join("report.html");
    let rep = Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args(["report", "--store", store, "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("recorded against replayed"),
        "no replay section"
    );
    assert!(
        html.contains("SELECT pg_sleep(?), count(*) FROM big WHERE k BETWEEN ? AND ? + ?"),
        "no statement"
    );
}

#[test]
fn errors_only_in_the_replay_are_listed_with_their_sqlstate() {
    let _turn = common::alone();
    let dir = tempfile::tempdir().unwrap();
    let (out, doc) = replay_after(dir.path(), "ALTER TABLE small RENAME TO small_gone", &[]);
    let s = statement(&doc, "small");
    assert_eq!(s.errors.len(), 1, "{out}");
    let e = &s.errors[0];
    assert_eq!(e.sqlstate, "42P01");
    assert_eq!((e.recorded, e.replayed), (0, CLIENTS * TRANSACTIONS));
    assert!(
        e.message.contains("\"small\" does not exist"),
        "{}",
        e.message
    );
    assert!(
        out.contains("error only in the replay: 42P01 relation \"small\" does not exist"),
        "{out}"
    );
    assert_eq!(statement(&doc, "big").verdict, "~", "{out}");
}

#[test]
fn compare_without_durations_in_the_log_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = "2010-12-31 10:00:00.000 UTC|u|d|4d1db7a8.4236|LOG:  connection authorized: user=u\n\
               2010-12-31 10:00:00.100 UTC|u|d|4d1db7a8.4236|LOG:  statement: SELECT 1\n";
    std::fs::write(dir.path().join("a.log"), log).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args(["replay", "--compare", "-h", "/nonexistent", "a.log"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("Error: --compare: a.log holds no statement durations"),
        "{stderr}"
    );
    for (args, says) in [
        (
            &["replay", "--compare", "-r", "a.rf"][..],
            "a replay file (-r) has none",
        ),
        (&["replay", "--compare"][..], "name the log file(s)"),
        (&["replay", "--json"][..], "--json needs a file name"),
        (
            &["replay", "-f", "--store", "s.db", "a.log"][..],
            "-f does not replay",
        ),
        (
            &["replay", "--replayed-log", "a.log", "a.log"][..],
            "--replayed-log is the replayed side of --compare",
        ),
        (
            &["replay", "--compare", "--replayed-log", "gone.log", "a.log"][..],
            "Error: --replayed-log: cannot open gone.log",
        ),
        (
            &["replay", "--order", "fifo", "a.log"][..],
            "Error: option --order takes strict, log or sessions, not \"fifo\"",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pgrig"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// A pgbench TPC-B-like recording (`log_min_duration_statement = 0`, 2 clients × 300
/// transactions, simple protocol) and a replay server logging its own durations with pgreplay's
/// prefix, holding the same starting data in `{db}_start`.
struct Tpcb {
    log: PathBuf,
    target: &'static Server,
    db: String,
}

fn tpcb() -> &'static Tpcb {
    static REC: OnceLock<Tpcb> = OnceLock::new();
    REC.get_or_init(|| {
        let logging = || {
            ServerOptions::default()
                .setting("logging_collector", "on")
                .setting("log_directory", "log")
                .setting("log_filename", "rec.log")
                .setting("log_line_prefix", "%m|%u|%d|%c|")
                .setting("lc_messages", "C")
                .setting("log_min_messages", "warning")
        };
        let rec: &'static Server = Box::leak(Box::new(pgrig_testkit::custom_cluster(logging())));
        let target: &'static Server = Box::leak(Box::new(pgrig_testkit::custom_cluster(logging())));
        let db = format!("tpcb_cmp_{}", std::process::id());
        let pgbench = |s: &Server, args: &[&str]| {
            let mut cmd = Command::new(pgrig_testkit::pgbench_oracle());
            cmd.envs(s.env(&db)).args(args).arg(&db);
            let out = pgrig_testkit::run(cmd);
            assert!(out.success(), "pgbench {args:?}: {}", out.stderr);
        };
        for s in [rec, target] {
            psql(s, "postgres", &format!("CREATE DATABASE {db}"));
            pgbench(s, &["-i", "-q", "-s", "1"]);
        }
        psql(
            target,
            "postgres",
            &format!("CREATE DATABASE {db}_start TEMPLATE {db}"),
        );
        psql(
            rec,
            "postgres",
            &format!("ALTER DATABASE {db} SET log_min_duration_statement = 0"),
        );
        pgbench(rec, &["-n", "-M", "simple", "-c", "2", "-t", "300"]);
        psql(rec, &db, "SELECT 'recording done'");
        let log = rec.data_dir().join("log").join("rec.log");
        wait_for_log(&log, "SELECT 'recording done'");
        let copy = target.root_dir().join("tpcb.log");
        std::fs::copy(&log, &copy).unwrap();
        Tpcb {
            log: copy,
            target,
            db,
        }
    })
}

/// `pgrig replay --compare --replayed-log` of the TPC-B-like recording onto a fresh copy of the
/// starting data after `change`; the output and the document.
fn tpcb_replay(dir: &Path, change: &str) -> (String, ReplayDocument) {
    let t = tpcb();
    let db = &t.db;
    psql(
        t.target,
        "postgres",
        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    );
    psql(
        t.target,
        "postgres",
        &format!("CREATE DATABASE {db} TEMPLATE {db}_start"),
    );
    psql(
        t.target,
        "postgres",
        &format!("ALTER DATABASE {db} SET log_min_duration_statement = 0"),
    );
    psql(t.target, db, change);
    let json = dir.join("replay.json");
    let served = t.target.data_dir().join("log").join("rec.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    cmd.envs(t.target.env(db))
        .args(["replay", "--compare", "--json"])
        .arg(&json)
        .arg("--replayed-log")
        .arg(&served)
        .arg(&t.log)
        .current_dir(dir);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let doc = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (stdout, doc)
}

#[test]
fn replays_onto_an_identical_copy_compare_server_durations_and_stay_quiet() {
    let _turn = common::alone();
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let (out, doc) = tpcb_replay(dir.path(), "SELECT 1");
        assert!(
            out.contains("replayed: the replay server's logged durations"),
            "{out}"
        );
        let all = &doc.replay.statements;
        // pgbench's seven statements, each run 600 times on both sides
        let frequent: Vec<_> = all.iter().filter(|s| s.recorded.count == 600).collect();
        assert_eq!(frequent.len(), 7, "round {round}: {out}");
        for s in &frequent {
            assert_eq!(s.replayed.count, 600, "round {round}: {out}");
        }
        let flagged = all.iter().filter(|s| s.verdict == "+" || s.verdict == "-");
        assert!(
            flagged.count() * 20 <= all.len(),
            "round {round}: more than 5 % of the statements flagged\n{out}"
        );
    }
}

#[test]
fn a_dropped_primary_key_ranks_its_statements_first_on_server_durations() {
    // (the other statements may show `+` too: the scans slow the whole server down)
    let _turn = common::alone();
    let dir = tempfile::tempdir().unwrap();
    let (out, doc) = tpcb_replay(
        dir.path(),
        "ALTER TABLE pgbench_accounts DROP CONSTRAINT pgbench_accounts_pkey",
    );
    let first = &doc.replay.statements[0];
    assert_eq!(first.verdict, "+", "{out}");
    assert!(first.statement.contains("pgbench_accounts"), "{out}");
}
