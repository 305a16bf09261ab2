//! Fills a results store for the report benchmark (`bench/report.sh`): one study of N runs
//! (default 1,000: 50 points of clients × isolation × synchronous_commit, 20 repetitions), each
//! with a 60-second series, a latency histogram, wait events, relation sizes and provenance like
//! `pgrig study` stores them. Usage: `bench_store PATH [RUNS]`.

use pgrig_results::store::RunRecord;
use pgrig_results::Store;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: bench_store PATH [RUNS]");
    let n: usize = args
        .get(2)
        .map(|s| s.parse().expect("RUNS"))
        .unwrap_or(1000);
    let _ = std::fs::remove_file(path);
    let mut s = Store::open(path).expect("store");
    let text = "name = \"bench\"\n[matrix]\nclients = [1, 2, 4, 8, 16]\nisolation = [\"read committed\", \"repeatable read\", \"serializable\", \"read uncommitted\", \"serializable\"]\n\"settings.synchronous_commit\" = [\"on\", \"off\"]\nrepetitions = 20\n";
    let id = s.study_id("bench", "bench.toml", text).expect("study");
    let levels = [
        "read committed",
        "repeatable read",
        "serializable",
        "read uncommitted",
        "snapshot",
    ];
    for i in 0..n {
        let point_i = i / 20;
        let clients = [1, 2, 4, 8, 16][point_i % 5];
        let iso = levels[(point_i / 5) % 5];
        let sc = if (point_i / 25) % 2 == 0 { "on" } else { "off" };
        let rep = (i % 20) as u32 + 1;
        let tps = 800.0 * (clients as f64).sqrt() * (1.0 + 0.01 * ((i * 37) % 11) as f64);
        let point =
            json!({"clients": clients, "isolation": iso, "settings.synchronous_commit": sc});
        let series: Vec<_> = (1..=60)
            .map(|t| json!({"second": t, "tps": (tps * (1.0 + 0.02 * ((t * 13 + i) % 7) as f64)).round(),
                            "failed": 0, "retries": (t + i) % 3, "latency_ms_mean": 1000.0 * clients as f64 / tps}))
            .collect();
        let buckets: Vec<_> = (0..120)
            .map(|b| json!([200 + b * b * 7, 1000 / (b + 1)]))
            .collect();
        let result = json!({
            "study": "bench", "target": "local", "point": point, "point_index": point_i, "run_index": i,
            "repetition": rep, "round": 1, "tps": tps, "duration_s": 60.0,
            "transactions": {"ok": (tps * 60.0) as u64, "failed": 0, "skipped": 0, "retried": 3, "retries": 4, "late": 0,
                             "failures": {"serialization": 0, "deadlock": 0, "other": 0}},
            "aborted_clients": 0,
            "latency_ms": {"mean": 1.2, "stddev": 0.4, "min": 0.2, "p50": 1.0, "p90": 1.9, "p95": 2.4, "p99": 4.0, "p99_9": 9.0, "max": 30.0},
            "client_cpu_time": 0.35, "client_run_queue_wait": 0.02, "clients": clients, "threads": 1, "protocol": "prepared",
            "server_stats": {"wal": {"wal_bytes": (tps * 60.0 * 700.0) as u64}, "checkpointer": {"checkpoints_timed": 1, "checkpoints_requested": 0}},
            "wait_events": {"samples": 300, "events": {"CPU:running": 120, "Client:ClientRead": 100, "IO:WALSync": 50, "Lock:transactionid": 30}},
            "server_processes": {"cpus_busy": 0.9},
            "relation_sizes": {"pgbench_accounts": {"heap": 13_000_000, "indexes": 2_200_000, "total": 15_200_000}},
            "per_statement": [{"script": "tpcb", "text": "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;", "executions": 1000, "latency_ms_mean": 0.3, "failures": 0, "retries": 0}],
        });
        let provenance = json!({"pgrig_version": "0.1.0", "server_version": "PostgreSQL 15.18", "seed": 1000 + i,
            "host": {"cpus": 2, "cpu_model": "bench", "memory_bytes": 8_000_000_000u64},
            "server_settings": {"shared_buffers": "128MB", "synchronous_commit": sc, "max_connections": "100"},
            "point": point, "repetition": rep, "workload": {"clients": clients, "duration": "60s", "protocol": "prepared"}});
        s.save_run(
            id,
            &RunRecord {
                run_index: i,
                point,
                repetition: rep,
                round: 1,
                target: "local".into(),
                started_unix: 1.7e9 + i as f64 * 61.0,
                finished_unix: 1.7e9 + i as f64 * 61.0 + 60.0,
                tps,
                result,
                provenance,
                series: json!(series),
                histogram: json!({"unit": "us", "buckets": buckets}),
            },
        )
        .expect("save");
    }
    eprintln!("bench_store: {n} runs in {path}");
}
