//! Each test run by the engine (`run_bench` with `BenchConfig.native`) for a few hundred
//! transactions against a server logging every statement, next to the real sysbench 1.0.20 run
//! for as many events with the same options on another database: the server receives the same
//! statements in the same order and number (numbers aside, as the values are random), every
//! event is one transaction of the run document, and the data changes as sysbench's do.

mod sysbench_common;

use std::sync::{Arc, Mutex, OnceLock};

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, SeedOption};
use pgrig_engine::document::RunDocument;
use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;
use pgrig_testkit::{custom_cluster, fresh_db_on, Server, ServerOptions, TestDb};
use pgrig_workloads::{sysbench, Options};
use sysbench_common::{logged_statements, pgrig_load, run_sysbench, shape};

fn logging_cluster() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        custom_cluster(
            ServerOptions::default()
                .setting("log_statement", "all")
                .setting("log_line_prefix", "'%d|%p|'"),
        )
    })
}

#[derive(Default)]
struct Errors(Mutex<Vec<String>>);

impl Sink for Errors {
    fn message(&self, level: Level, text: &str) {
        if level == Level::Error {
            self.0.lock().unwrap().push(text.to_string());
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

fn opts(args: &[&str]) -> Options {
    let mut o = Options::new();
    for a in args {
        let (k, v) = a.trim_start_matches('-').split_once('=').unwrap();
        o.set(k, v);
    }
    o
}

/// A new database on the logging cluster with `test`'s tables loaded by pgrig.
fn prepared(test: &str, args: &[&str]) -> TestDb {
    let db = fresh_db_on(logging_cluster(), &format!("sbrun_{test}"));
    pgrig_load(&db, &sysbench::build(test, &opts(args)).unwrap().load, 2).unwrap();
    db
}

/// The statements `db` receives while `f` runs.
fn statements_during(db: &TestDb, f: impl FnOnce()) -> Vec<String> {
    let path = db.server().log_path();
    let before = std::fs::metadata(path).unwrap().len() as usize;
    f();
    let log = std::fs::read(path).unwrap();
    logged_statements(&String::from_utf8_lossy(&log[before..]), &db.name)
}

/// Runs `test` with pgrig's engine (`clients` clients, `tx` transactions each) and returns the
/// run document and the statements the server received.
fn pgrig_run(test: &str, args: &[&str], clients: u32, tx: u64) -> (RunDocument, Vec<String>) {
    let db = prepared(test, args);
    let native = sysbench::build(test, &opts(args)).unwrap();
    let settings = sysbench::settings(test, &opts(args)).unwrap();
    let cfg = BenchConfig {
        conn: ConnArgs {
            dbname: Some(db.conninfo()),
            ..ConnArgs::default()
        },
        clients,
        threads: clients,
        duration: Duration::Transactions(tx),
        mode: if settings.ps_disabled {
            QueryMode::Simple
        } else {
            QueryMode::Prepared
        },
        random_seed: Some(SeedOption::Value(3)),
        max_tries: 0,
        native: Some(NativeWorkload(native.workload)),
        ..Default::default()
    };
    let sink = Arc::new(Errors::default());
    let mut doc = None;
    let stmts = statements_during(&db, || {
        let r = run_bench(cfg, sink.clone(), &StopHandle::default()).expect("run");
        doc = Some(pgrig_engine::document::of(&r));
    });
    let errors = sink.0.lock().unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    (doc.unwrap(), stmts)
}

/// Runs the real sysbench for `events` events with `threads` threads.
fn sysbench_run(test: &str, args: &[&str], threads: u32, events: u64) -> Vec<String> {
    let db = prepared(test, args);
    let mut full: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    full.extend([
        format!("--threads={threads}"),
        format!("--events={events}"),
        test.to_string(),
        "run".into(),
    ]);
    statements_during(&db, || {
        run_sysbench(&db, &full.iter().map(String::as_str).collect::<Vec<_>>());
    })
}

/// One client, `tx` transactions: the same statement shapes in the same order as sysbench.
fn same_run(test: &str, args: &[&str], tx: u64) {
    let (doc, ours) = pgrig_run(test, args, 1, tx);
    let theirs = sysbench_run(test, args, 1, tx);
    assert_eq!(doc.transactions.ok, tx, "{test}: one transaction per event");
    assert_eq!(doc.transactions.failed, 0);
    assert_eq!(doc.scripts[0].desc, test);
    let shapes = |v: &[String]| v.iter().map(|s| shape(s)).collect::<Vec<_>>();
    assert_eq!(ours.len(), theirs.len(), "{test} {args:?}: statements sent");
    assert_eq!(shapes(&ours), shapes(&theirs), "{test} {args:?}");
    let executions: u64 = doc.scripts[0].commands.iter().map(|c| c.executions).sum();
    assert_eq!(
        executions,
        ours.len() as u64,
        "{test}: per-statement figures count every statement"
    );
}

const SMALL: [&str; 2] = ["--tables=2", "--table-size=1000"];

#[test]
fn oltp_read_write_runs_as_sysbench_in_the_engine() {
    same_run("oltp_read_write", &SMALL, 200);
}

#[test]
fn oltp_read_write_with_ps_disabled_runs_as_sysbench_in_the_engine() {
    same_run(
        "oltp_read_write",
        &["--table-size=1000", "--db-ps-mode=disable"],
        150,
    );
}

#[test]
fn read_only_write_only_and_point_select_run_as_sysbench_in_the_engine() {
    same_run("oltp_read_only", &SMALL, 200);
    same_run(
        "oltp_write_only",
        &["--tables=2", "--table-size=1000", "--skip_trx=on"],
        200,
    );
    same_run("oltp_point_select", &SMALL, 300);
}

#[test]
fn update_delete_and_insert_tests_run_as_sysbench_in_the_engine() {
    same_run("oltp_update_index", &SMALL, 300);
    same_run("oltp_update_non_index", &SMALL, 300);
    same_run("oltp_delete", &SMALL, 300);
    same_run("oltp_insert", &SMALL, 300);
    same_run("oltp_insert", &["--table-size=1000", "--auto_inc=off"], 300);
}

#[test]
fn select_random_tests_run_as_sysbench_in_the_engine() {
    same_run("select_random_points", &["--table-size=1000"], 300);
    same_run(
        "select_random_ranges",
        &["--table-size=1000", "--db-ps-mode=disable"],
        300,
    );
}

#[test]
fn oltp_insert_adds_one_row_per_transaction() {
    let args = ["--table-size=100"];
    let db = prepared("oltp_insert", &args);
    let native = sysbench::build("oltp_insert", &opts(&args)).unwrap();
    let cfg = BenchConfig {
        conn: ConnArgs {
            dbname: Some(db.conninfo()),
            ..ConnArgs::default()
        },
        clients: 2,
        threads: 2,
        duration: Duration::Transactions(50),
        native: Some(NativeWorkload(native.workload)),
        ..Default::default()
    };
    run_bench(cfg, Arc::new(Errors::default()), &StopHandle::default()).expect("run");
    assert_eq!(db.psql("select count(*), max(id) from sbtest1"), "200|200");
}

#[test]
fn bulk_insert_appends_numbered_rows_to_each_clients_table() {
    let args = ["--threads=2"];
    let db = prepared("bulk_insert", &args);
    let native = sysbench::build("bulk_insert", &opts(&args)).unwrap();
    let cfg = BenchConfig {
        conn: ConnArgs {
            dbname: Some(db.conninfo()),
            ..ConnArgs::default()
        },
        clients: 2,
        threads: 2,
        duration: Duration::Transactions(80_000),
        mode: QueryMode::Prepared,
        native: Some(NativeWorkload(native.workload)),
        ..Default::default()
    };
    let result = run_bench(cfg, Arc::new(Errors::default()), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&result);
    // an event is a row: 80,000 per client, in sysbench's batches (1..39033, 39034..76480)
    // and the rest sent when the client ends
    assert_eq!(doc.transactions.ok, 160_000);
    let (_, end1) = sysbench::bulk::bulk_batch(1, 1);
    let (_, end2) = sysbench::bulk::bulk_batch(1, end1 + 1);
    assert_eq!((end1, end2), (39033, 76480));
    let inserts: u64 = doc.scripts[0].commands.iter().map(|c| c.executions).sum();
    assert_eq!(inserts, 6, "three INSERTs per client");
    for t in ["sbtest1", "sbtest2"] {
        let q = format!("select count(*), min(id), max(id), bool_and(id = k) from {t}");
        assert_eq!(db.psql(&q), "80000|1|80000|t", "{t}");
    }
}

#[test]
fn two_clients_send_sysbenchs_statement_mix() {
    let args = ["--tables=2", "--table-size=10000", "--rand-type=uniform"];
    let (doc, ours) = pgrig_run("oltp_read_write", &args, 2, 150);
    let theirs = sysbench_run("oltp_read_write", &args, 2, 300);
    assert_eq!(doc.transactions.ok, 300);
    let count = |v: &[String], f: &dyn Fn(&str) -> bool| v.iter().filter(|s| f(s)).count();
    for v in [&ours, &theirs] {
        let rollbacks = count(v, &|s| s == "ROLLBACK");
        assert_eq!(count(v, &|s| s == "COMMIT"), 300);
        // retried events resend their statements: at most a few
        let points = count(v, &|s| {
            s.starts_with("SELECT c FROM sbtest") && s.ends_with("WHERE id=$1")
        });
        assert!(
            (3000..=3000 + 10 * rollbacks).contains(&points),
            "{points} point selects"
        );
        let deletes = count(v, &|s| s.starts_with("DELETE FROM sbtest"));
        assert!((300..=300 + rollbacks).contains(&deletes));
        for t in ["sbtest1 ", "sbtest2 "] {
            assert!(count(v, &|s| s.contains(t)) > 1000, "both tables are used");
        }
    }
}
