//! Each of YCSB's workloads A–F loaded and run through the engine (`run_bench` with
//! `BenchConfig.native`) against a real PostgreSQL: every operation of the mix ran, in about
//! the workload's proportions; updates and inserts reached the table; the YCSB summary lines
//! rendered from the run document carry the document's per-operation counts; a workload whose
//! table is missing, or whose inserts would collide with an earlier run's, stops before it
//! starts with a message saying what to do.

mod ycsb_common;

use std::sync::{Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, SeedOption};
use pgrig_engine::document::RunDocument;
use pgrig_engine::sink::{Level, NullSink, Progress, Sink};
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;
use pgrig_testkit::TestDb;
use pgrig_workloads::ycsb::summary_lines;
use pgrig_workloads::Native;
use ycsb_common::build;

const RECORDS: i64 = 2000;

fn conn(db: &TestDb) -> ConnArgs {
    ConnArgs {
        dbname: Some(db.conninfo()),
        ..ConnArgs::default()
    }
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

fn loaded(db: &TestDb, name: &str) -> Native {
    let records = format!("recordcount={RECORDS}");
    let native = build(name, &[&records]);
    pgrig_init::generic::load(
        &conn(db),
        &native.load,
        2,
        &NullSink,
        &StopHandle::default(),
    )
    .expect("load");
    native
}

fn run(db: &TestDb, native: &Native, mode: QueryMode, duration: Duration) -> RunDocument {
    let cfg = BenchConfig {
        conn: conn(db),
        clients: 2,
        threads: 1,
        duration,
        mode,
        random_seed: Some(SeedOption::Value(11)),
        native: Some(NativeWorkload(native.workload.clone())),
        ..Default::default()
    };
    let sink = Arc::new(Errors::default());
    let r = run_bench(cfg, sink.clone(), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    assert_eq!(doc.aborted_clients, 0, "{:?}", sink.0.lock().unwrap());
    assert_eq!(doc.transactions.failed, 0);
    doc
}

fn ok_of(doc: &RunDocument, op: &str) -> u64 {
    doc.scripts
        .iter()
        .find(|s| s.desc == op)
        .map_or(0, |s| s.transactions.ok)
}

/// Rows updated in the table per the server's statistics, once they reach `at_least`.
fn updated_rows(db: &TestDb, at_least: u64) -> u64 {
    let deadline = Instant::now() + StdDuration::from_secs(10);
    loop {
        let n: u64 = db
            .psql("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'usertable'")
            .trim()
            .parse()
            .unwrap_or(0);
        if n >= at_least || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(StdDuration::from_millis(200));
    }
}

#[test]
fn workloads_a_to_f_run_their_mix_on_the_server() {
    let mixes: [(&str, &[(&str, f64)]); 6] = [
        ("ycsb-a", &[("READ", 0.5), ("UPDATE", 0.5)]),
        ("ycsb-b", &[("READ", 0.95), ("UPDATE", 0.05)]),
        ("ycsb-c", &[("READ", 1.0)]),
        ("ycsb-d", &[("READ", 0.95), ("INSERT", 0.05)]),
        ("ycsb-e", &[("INSERT", 0.05), ("SCAN", 0.95)]),
        ("ycsb-f", &[("READ", 0.5), ("READ-MODIFY-WRITE", 0.5)]),
    ];
    for (name, mix) in mixes {
        let db = pgrig_testkit::fresh_db(&name.replace('-', "_"));
        let native = loaded(&db, name);
        let doc = run(&db, &native, QueryMode::Prepared, Duration::Seconds(1));
        assert_eq!(doc.workload.as_deref(), Some(name));
        let total = doc.transactions.ok;
        assert!(total >= 200, "{name}: only {total} operations in a second");
        let names: Vec<&str> = doc.scripts.iter().map(|s| s.desc.as_str()).collect();
        let want: Vec<&str> = mix.iter().map(|m| m.0).collect();
        assert_eq!(names, want, "{name}");
        for (op, p) in mix {
            let n = ok_of(&doc, op);
            let sd = (total as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (n as f64 - total as f64 * p).abs() <= 5.0 * sd + 2.0,
                "{name}: {op} {n} of {total}, expected share {p}"
            );
        }
        // inserts are rows; updates (and read-modify-writes) are updated rows
        let inserts = ok_of(&doc, "INSERT");
        let rows: i64 = db
            .psql("SELECT count(*) FROM usertable")
            .trim()
            .parse()
            .unwrap();
        assert_eq!(rows, RECORDS + inserts as i64, "{name}: rows after the run");
        let writes = ok_of(&doc, "UPDATE") + ok_of(&doc, "READ-MODIFY-WRITE");
        let updated = updated_rows(&db, writes);
        assert_eq!(updated, writes, "{name}: rows updated on the server");
        // the summary carries the document's counts
        let lines = summary_lines(&doc);
        for (op, _) in mix {
            let n = ok_of(&doc, op);
            assert!(
                lines.contains(&format!("[{op}], Operations, {n}")),
                "{lines:?}"
            );
            assert!(
                lines.contains(&format!("[{op}], Return=OK, {n}")),
                "{lines:?}"
            );
        }
    }
}

#[test]
fn every_query_mode_sends_keys_and_random_values_intact() {
    // values hold quotes and backslashes: the simple protocol inlines them as literals
    let db = pgrig_testkit::fresh_db("ycsb_modes");
    let native = build(
        "ycsb-a",
        &[
            "recordcount=200",
            "writeallfields=true",
            "insertproportion=0.2",
        ],
    );
    pgrig_init::generic::load(
        &conn(&db),
        &native.load,
        2,
        &NullSink,
        &StopHandle::default(),
    )
    .expect("load");
    let mut inserted = 0;
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let doc = run(&db, &native, mode, Duration::Transactions(300));
        assert_eq!(doc.transactions.ok, 600, "{mode:?}");
        inserted += ok_of(&doc, "INSERT");
    }
    assert_eq!(
        db.psql("SELECT count(*), min(length(field7)), max(length(field7)) FROM usertable"),
        format!("{}|100|100", 200 + inserted)
    );
    assert_eq!(
        db.psql(
            "SELECT count(*) > 0 FROM usertable WHERE field1 LIKE '%''%' OR field1 LIKE '%\\%'"
        ),
        "t"
    );
}

#[test]
fn a_missing_table_or_an_earlier_runs_inserts_stop_the_run_before_it_starts() {
    let db = pgrig_testkit::fresh_db("ycsb_preflight");
    let native = build("ycsb-d", &["recordcount=300"]);
    let cfg = |native: &Native| BenchConfig {
        conn: conn(&db),
        clients: 1,
        threads: 1,
        duration: Duration::Transactions(200),
        native: Some(NativeWorkload(native.workload.clone())),
        ..Default::default()
    };
    let e = run_bench(cfg(&native), Arc::new(NullSink), &StopHandle::default()).unwrap_err();
    let text = format!("{e:?}");
    assert!(text.contains("usertable"), "{text}");
    pgrig_init::generic::load(
        &conn(&db),
        &native.load,
        2,
        &NullSink,
        &StopHandle::default(),
    )
    .expect("load");
    run_bench(cfg(&native), Arc::new(NullSink), &StopHandle::default()).expect("first run");
    // a new workload object (a new run) starts inserting at record 300 again
    let again = build("ycsb-d", &["recordcount=300"]);
    let e = run_bench(cfg(&again), Arc::new(NullSink), &StopHandle::default()).unwrap_err();
    let text = format!("{e:?}");
    assert!(
        text.contains("inserted by an earlier run: reload the dataset before running ycsb-d"),
        "{text}"
    );
    // a table with fewer records than the workload expects
    let bigger = build("ycsb-c", &["recordcount=100000"]);
    let e = run_bench(cfg(&bigger), Arc::new(NullSink), &StopHandle::default()).unwrap_err();
    let text = format!("{e:?}");
    assert!(
        text.contains("load the ycsb-c dataset with recordcount=100000"),
        "{text}"
    );
}

#[test]
fn summary_lines_have_ycsbs_layout() {
    let db = pgrig_testkit::fresh_db("ycsb_summary");
    let native = loaded(&db, "ycsb-f");
    let mut doc = run(
        &db,
        &native,
        QueryMode::Prepared,
        Duration::Transactions(50),
    );
    assert_eq!(doc.scripts.len(), 2);
    // known figures in the document the run made
    doc.duration_s = 2.5;
    doc.transactions.ok = 1000;
    doc.transactions.failed = 3;
    let read = &mut doc.scripts[0];
    read.transactions.ok = 600;
    read.transactions.failed = 0;
    read.latency_ms.mean = 0.5125;
    read.latency_ms.min = 0.101;
    read.latency_ms.max = 9.871;
    read.latency_ms.p95 = 1.203;
    read.latency_ms.p99 = 3.4;
    let rmw = &mut doc.scripts[1];
    rmw.transactions.ok = 400;
    rmw.transactions.failed = 3;
    rmw.latency_ms.mean = 1.0;
    rmw.latency_ms.min = 0.2;
    rmw.latency_ms.max = 20.0;
    rmw.latency_ms.p95 = 2.0;
    rmw.latency_ms.p99 = 4.5;
    let want = [
        "[OVERALL], RunTime(ms), 2500",
        "[OVERALL], Throughput(ops/sec), 401.2",
        "[READ], Operations, 600",
        "[READ], AverageLatency(us), 512.5",
        "[READ], MinLatency(us), 101",
        "[READ], MaxLatency(us), 9871",
        "[READ], 95thPercentileLatency(us), 1203",
        "[READ], 99thPercentileLatency(us), 3400",
        "[READ], Return=OK, 600",
        "[READ-MODIFY-WRITE], Operations, 400",
        "[READ-MODIFY-WRITE], AverageLatency(us), 1000.0",
        "[READ-MODIFY-WRITE], MinLatency(us), 200",
        "[READ-MODIFY-WRITE], MaxLatency(us), 20000",
        "[READ-MODIFY-WRITE], 95thPercentileLatency(us), 2000",
        "[READ-MODIFY-WRITE], 99thPercentileLatency(us), 4500",
        "[READ-MODIFY-WRITE], Return=OK, 400",
        "[READ-MODIFY-WRITE-FAILED], Operations, 3",
        "[READ-MODIFY-WRITE-FAILED], Return=ERROR, 3",
    ];
    assert_eq!(summary_lines(&doc), want);
}
