//! pgbench's headline figures, as `pgrig bench` prints them, recomputed from independent
//! sources: the transactions from the rows they inserted (`pgbench_history`), from the `-l`
//! per-transaction log and from the server's own commit counter (`pg_stat_database`); the
//! latency average and percentiles from the `-l` log's latencies; tps from the log's count over
//! the run's duration.

use crate::common;

use pgrig_testkit::fresh_db;
use serde_json::Value;

/// Per-transaction latencies (µs) of the `-l` logs in `dir` (pgbench's format: the third field).
fn logged_latencies_us(dir: &std::path::Path) -> Vec<f64> {
    let mut all = Vec::new();
    for f in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        for line in text.lines() {
            let v: f64 = line
                .split(' ')
                .nth(2)
                .expect("a latency field")
                .parse()
                .unwrap();
            all.push(v);
        }
    }
    all.sort_by(f64::total_cmp);
    all
}

fn commits(db: &pgrig_testkit::TestDb) -> u64 {
    db.psql("select pg_stat_force_next_flush()");
    db.psql("select xact_commit from pg_stat_database where datname = current_database()")
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn processed_tps_latency_and_percentiles_agree_with_the_log_the_rows_and_the_server() {
    let db = fresh_db("figures");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("--log-prefix={}/tx", dir.path().display());
    let before = commits(&db);
    let out = common::pgrig_bench(
        &db,
        &["-n", "-c", "2", "-T", "3", "-l", &prefix, "--json", "-"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let ok = doc["transactions"]["ok"].as_u64().unwrap();
    assert!(ok > 50, "{ok} transactions");
    // the rows: one history row per TPC-B-like transaction
    let rows: u64 = db
        .psql("select count(*) from pgbench_history")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(rows, ok, "transactions vs pgbench_history rows");
    // the log: one line per transaction
    let lat = logged_latencies_us(dir.path());
    assert_eq!(lat.len() as u64, ok, "transactions vs -l log lines");
    // the server: one commit per transaction, plus a few of pgrig's own setup queries and the
    // counter reads here
    let server = commits(&db) - before;
    assert!(
        (ok..=ok + 20).contains(&server),
        "server commits {server} vs {ok} transactions"
    );
    // latency average: the log's mean (µs in the log, ms in the document)
    let mean_ms = lat.iter().sum::<f64>() / lat.len() as f64 / 1000.0;
    let doc_mean = doc["latency_ms"]["mean"].as_f64().unwrap();
    assert!(
        (doc_mean - mean_ms).abs() <= 0.002 + mean_ms * 1e-6,
        "latency average {doc_mean} vs the log's {mean_ms}"
    );
    // percentiles: HDR with 3 significant digits against the log's nearest-rank values
    for (key, q) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)] {
        let exact_ms = lat[((q * lat.len() as f64).ceil() as usize).max(1) - 1] / 1000.0;
        let got = doc["latency_ms"][key].as_f64().unwrap();
        assert!(
            (got - exact_ms).abs() <= exact_ms * 0.01 + 0.002,
            "{key}: {got} ms vs the log's {exact_ms} ms"
        );
    }
    // tps: the processed transactions over the run's duration
    let tps = doc["tps"].as_f64().unwrap();
    let duration = doc["duration_s"].as_f64().unwrap();
    assert!(
        (2.9..=4.0).contains(&duration),
        "duration {duration} s for -T 3"
    );
    let recomputed = ok as f64 / duration;
    assert!(
        (tps - recomputed).abs() <= recomputed * 0.05,
        "tps {tps} vs {ok} / {duration} s = {recomputed}"
    );
}
