//! The engine in-process against the test cluster: initialisation and a benchmark run through
//! `run_init_with` / `run_bench`, the run document built from the result, and the stop handle
//! (a stop requested before a run or an initialisation ends it at once, marked interrupted).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, InitConfig, ScriptSource, SeedOption};
use pgrig_engine::document::SCHEMA_VERSION;
use pgrig_engine::sink::NullSink;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_init::{run_init_with, InitOptions};
use pgrig_script::QueryMode;
use pgrig_testkit::TestDb;

fn conn(db: &TestDb) -> ConnArgs {
    let env: std::collections::HashMap<String, String> = db.env().into_iter().collect();
    ConnArgs {
        host: env.get("PGHOST").cloned(),
        port: env.get("PGPORT").cloned(),
        user: env.get("PGUSER").cloned(),
        dbname: Some(db.name.clone()),
    }
}

fn init(db: &TestDb) {
    let cfg = InitConfig {
        conn: conn(db),
        quiet: true,
        ..Default::default()
    };
    run_init_with(&cfg, &NullSink, &InitOptions::default()).expect("init");
}

fn select_only(db: &TestDb, duration: Duration) -> BenchConfig {
    BenchConfig {
        conn: conn(db),
        scripts: vec![ScriptSource::Builtin {
            name: "select-only".into(),
            weight: 1,
        }],
        clients: 2,
        threads: 2,
        duration,
        mode: QueryMode::Prepared,
        no_vacuum: true,
        random_seed: Some(SeedOption::Value(11)),
        ..Default::default()
    }
}

#[test]
fn the_document_of_an_in_process_run_counts_every_transaction_once() {
    let db = pgrig_testkit::fresh_db("engine_doc");
    init(&db);
    let mut cfg = select_only(&db, Duration::Transactions(25));
    cfg.report_per_command = true;
    let r = run_bench(cfg, Arc::new(NullSink), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    assert_eq!(doc.schema_version, SCHEMA_VERSION);
    assert!(!doc.interrupted);
    assert_eq!(doc.transactions.ok, 50);
    assert_eq!(doc.transactions.failed, 0);
    assert_eq!(doc.options.random_seed, 11);
    assert_eq!(doc.options.threads, 2);
    assert_eq!(doc.scripts.len(), 1);
    assert_eq!(doc.scripts[0].transactions, doc.transactions);
    // `\set aid` and the SELECT, each once per transaction
    let executions: Vec<u64> = doc.scripts[0]
        .commands
        .iter()
        .map(|c| c.executions)
        .collect();
    assert_eq!(executions, vec![50, 50]);
    let recorded: u64 = doc.latency_histogram.buckets.iter().map(|b| b.1).sum();
    assert_eq!(
        recorded, 50,
        "the histogram holds every successful transaction"
    );
    let l = doc.latency_ms;
    assert!(
        l.min > 0.0 && l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max,
        "{l:?}"
    );
    assert!(doc.tps > 0.0);
    assert_eq!(doc.client_cpu.threads.len(), 2);
}

#[test]
fn a_stop_requested_before_the_run_ends_it_at_once_marked_interrupted() {
    let db = pgrig_testkit::fresh_db("engine_stop");
    init(&db);
    let stop = StopHandle::default();
    stop.stop();
    let t = Instant::now();
    let cfg = select_only(&db, Duration::Seconds(60));
    let r = run_bench(cfg, Arc::new(NullSink), &stop).expect("run");
    assert!(t.elapsed() < StdDuration::from_secs(20), "ran on");
    let doc = pgrig_engine::document::of(&r);
    assert!(doc.interrupted);
}

#[test]
fn a_stop_requested_before_initialisation_cancels_it() {
    let db = pgrig_testkit::fresh_db("engine_init_stop");
    let opts = InitOptions::default();
    opts.stop.stop();
    let cfg = InitConfig {
        conn: conn(&db),
        scale: 20,
        ..Default::default()
    };
    let e = run_init_with(&cfg, &NullSink, &opts).expect_err("cancelled");
    assert_eq!(e.exit_code, 1);
    assert!(
        e.to_string().contains("initialization canceled by Ctrl-C"),
        "{e}"
    );
}
