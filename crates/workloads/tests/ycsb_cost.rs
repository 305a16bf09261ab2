//! The client's CPU cost per YCSB operation (run by `bench/ycsb.sh`, ignored in the normal
//! test run): each of A–F loaded on the test cluster and run for a few seconds by several
//! clients; prints, per workload, operations per second and the client CPU per operation —
//! the engine's worker threads (from the run document) and the whole process (`/proc/self/stat`
//! user + system time, which adds the runtime's other threads) — as markdown table rows.
//!
//! Env: `YCSB_COST_SECONDS` (5), `YCSB_COST_RECORDS` (100000), `YCSB_COST_CLIENTS` (8),
//! `YCSB_COST_THREADS` (2), `YCSB_COST_WORKLOADS` ("ycsb-a ... ycsb-f").

mod ycsb_common;

use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, SeedOption};
use pgrig_engine::sink::NullSink;
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// User + system CPU seconds of this process so far (clock ticks of 1/100 s).
fn process_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // the fields after the command name's closing parenthesis: utime and stime are 14 and 15
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
#[ignore = "a benchmark: bench/ycsb.sh runs it"]
fn client_cpu_per_operation() {
    let seconds = env_u64("YCSB_COST_SECONDS", 5);
    let records = env_u64("YCSB_COST_RECORDS", 100_000);
    let clients = env_u64("YCSB_COST_CLIENTS", 8) as u32;
    let threads = env_u64("YCSB_COST_THREADS", 2) as u32;
    let names = std::env::var("YCSB_COST_WORKLOADS")
        .unwrap_or_else(|_| "ycsb-a ycsb-b ycsb-c ycsb-d ycsb-e ycsb-f".into());
    println!("| workload | ops/s | worker CPU µs/op | process CPU µs/op | ops |");
    println!("|---|---:|---:|---:|---:|");
    for name in names.split_whitespace() {
        let db = pgrig_testkit::fresh_db(&name.replace('-', "_"));
        let conn = ConnArgs {
            dbname: Some(db.conninfo()),
            ..ConnArgs::default()
        };
        let native = ycsb_common::build(name, &[&format!("recordcount={records}")]);
        pgrig_init::generic::load(&conn, &native.load, 2, &NullSink, &StopHandle::default())
            .expect("load");
        let cfg = BenchConfig {
            conn,
            clients,
            threads,
            duration: Duration::Seconds(seconds),
            mode: QueryMode::Prepared,
            random_seed: Some(SeedOption::Value(1)),
            native: Some(NativeWorkload(native.workload.clone())),
            ..Default::default()
        };
        let before = process_cpu_s();
        let r = run_bench(cfg, Arc::new(NullSink), &StopHandle::default()).expect("run");
        let process = process_cpu_s() - before;
        let doc = pgrig_engine::document::of(&r);
        let ops = doc.transactions.ok as f64;
        let workers: f64 = doc
            .client_cpu
            .threads
            .iter()
            .map(|t| t.user_s + t.sys_s)
            .sum();
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} | {} |",
            doc.tps,
            workers * 1e6 / ops,
            process * 1e6 / ops,
            doc.transactions.ok
        );
        assert_eq!(doc.aborted_clients, 0);
    }
}
