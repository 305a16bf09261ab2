//! The fleet library on a real server (`pgrig-testkit`), without the binary: a run split into
//! segments (`share::segment_config`), each segment run by the engine, its result carried
//! through the wire format (`codec`) and the parts merged (`merge`), issues exactly the work
//! one host issues with the same seed — the same clients drawing the same random values, checked
//! row by row in a table the script fills — and counts what that single-host run counts.
//! Parts that ran other scripts are refused; the target fingerprint tells databases apart.

use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, ScriptSource, SeedOption};
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::{run_bench, StopHandle};
use pgrig_fleet::share::{segment_config, SegmentId};
use pgrig_fleet::{codec, merge, target};
use pgrig_testkit::{fresh_db, TestDb};

/// Each transaction records who ran it and what it drew.
const SCRIPT: &str = "\\set r random(1, 1000000000)\n\
                      INSERT INTO draws VALUES (:client_id, :r);\n";

struct PrintSink;

impl Sink for PrintSink {
    fn message(&self, level: Level, text: &str) {
        eprintln!("{level:?}: {text}");
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

fn conn(db: &TestDb) -> ConnArgs {
    ConnArgs {
        dbname: Some(db.conninfo()),
        ..ConnArgs::default()
    }
}

/// The whole run: `clients` clients, 25 transactions each, seed 7, the script above.
fn whole_run(db: &TestDb, clients: u32, script: &str) -> BenchConfig {
    BenchConfig {
        conn: conn(db),
        scripts: vec![ScriptSource::File {
            path: "draws.sql".into(),
            text: script.into(),
            weight: 1,
        }],
        clients,
        threads: 2,
        duration: Duration::Transactions(25),
        no_vacuum: true,
        random_seed: Some(SeedOption::Value(7)),
        ..BenchConfig::default()
    }
}

fn bench(cfg: BenchConfig) -> RunResult {
    run_bench(cfg, Arc::new(PrintSink), &StopHandle::default())
        .unwrap_or_else(|e| panic!("the run failed: {:?}", e.lines))
}

/// Segment `index` of `count` of `cfg`, run, and handed over through the codec.
fn segment(cfg: &BenchConfig, index: u32, count: u32) -> (u32, RunResult) {
    let seg = segment_config(cfg.clone(), SegmentId { index, count }).expect("a segment");
    let text = codec::encode(&bench(seg));
    (
        index,
        codec::decode(&text).expect("the codec reads what it wrote"),
    )
}

fn draws(db: &TestDb) -> String {
    db.psql(
        "SELECT count(*) || ':' || md5(string_agg(c || ',' || r, ';' ORDER BY c, r)) FROM draws",
    )
}

fn fresh(name: &str) -> TestDb {
    let db = fresh_db(name);
    db.psql("CREATE TABLE draws (c int, r bigint)");
    db
}

#[test]
fn three_segments_merged_issue_and_count_what_one_host_does() {
    let single = fresh("scale_single");
    let whole = bench(whole_run(&single, 5, SCRIPT));
    let split = fresh("scale_split");
    let cfg = whole_run(&split, 5, SCRIPT);
    let parts: Vec<(u32, RunResult)> = (0..3).map(|i| segment(&cfg, i, 3)).collect();
    // segments of 2, 2 and 1 clients: every client ran in exactly one segment
    let clients: Vec<usize> = parts.iter().map(|(_, r)| r.clients.len()).collect();
    assert_eq!(clients, [2, 2, 1]);
    let merged = merge::merge(cfg, parts).expect("the parts merge");

    // the same clients drew the same values, transaction for transaction
    assert_eq!(draws(&single), draws(&split));
    assert!(draws(&split).starts_with("125:"), "{}", draws(&split));
    let (one, all) = (
        pgrig_engine::document::of(&whole),
        pgrig_engine::document::of(&merged),
    );
    assert_eq!(all.transactions.ok, 125);
    assert_eq!(all.transactions.ok, one.transactions.ok);
    assert_eq!(all.transactions.failed, 0);
    assert_eq!(all.aborted_clients, 0);
    // the merged histogram holds every transaction's latency
    let h = &merged.stats.scripts[0].histogram;
    assert_eq!(h.len(), 125);
    assert_eq!(merged.clients.len(), 5);
}

#[test]
fn a_part_that_ran_other_scripts_is_refused_naming_its_segment() {
    let db = fresh("scale_other");
    let cfg = whole_run(&db, 2, SCRIPT);
    let first = segment(&cfg, 0, 2);
    let other_cfg = whole_run(&db, 2, "INSERT INTO draws VALUES (:client_id, 0);\n");
    let other = segment(&other_cfg, 1, 2);
    let e = merge::merge(cfg, vec![first, other]).expect_err("other scripts");
    assert_eq!(
        e.to_string(),
        "refused the result of segment 1: it ran other scripts than segment 0 did"
    );
}

#[test]
fn more_segments_than_clients_is_refused() {
    let db = fresh("scale_few");
    let e = segment_config(whole_run(&db, 2, SCRIPT), SegmentId { index: 0, count: 3 })
        .expect_err("3 segments of 2 clients");
    assert_eq!(e.to_string(), "3 segments need at least 3 clients (-c 2)");
}

#[test]
fn the_target_fingerprint_tells_databases_of_one_server_apart() {
    let a = fresh("scale_fp_a");
    let b = fresh("scale_fp_b");
    let fa = target::fingerprint(&conn(&a)).expect("a fingerprint");
    let fa_again = target::fingerprint(&conn(&a)).unwrap();
    let fb = target::fingerprint(&conn(&b)).unwrap();
    assert_eq!(fa, fa_again);
    assert_eq!(fa.system_identifier, fb.system_identifier, "one cluster");
    assert_eq!(fa.database, a.name);
    assert_ne!(fa, fb);
    let (ta, tb) = (fa.to_string(), fb.to_string());
    let d = target::differing(&[(0, "h0".into(), ta.clone()), (1, "h1".into(), tb.clone())]);
    assert_eq!(
        d,
        Some(format!("segment 0 on h0: {ta}; segment 1 on h1: {tb}"))
    );
    // the data counts: pgbench's tables give their scale
    b.psql("CREATE TABLE pgbench_branches (bid int); INSERT INTO pgbench_branches VALUES (1), (2)");
    let fb = target::fingerprint(&conn(&b)).unwrap();
    assert_eq!(fb.dataset, "pgbench scale 2");
}
