//! `pgrig run`'s human-readable summary of a run document: workload, server, clients, outcomes,
//! throughput, latency percentiles and the client's CPU time and run-queue wait. Its snapshot
//! test is the cli's `run_document` (`pgrig_cli::run::summary` re-exports it).

use std::fmt::Write;

use crate::document::RunDocument;

/// The human-readable summary of `pgrig run`.
pub fn summary(r: &RunDocument) -> String {
    let k = &r.transactions;
    let l = &r.latency_ms;
    let mut s = String::new();
    let desc: Vec<&str> = r.scripts.iter().map(|s| s.desc.as_str()).collect();
    let _ = match &r.workload {
        Some(name) => writeln!(
            s,
            "workload:     {name} ({}; {} protocol)",
            desc.join(", "),
            r.options.protocol
        ),
        None => writeln!(
            s,
            "workload:     {} (scale {}, {} protocol)",
            desc.join(" + "),
            r.options.scale,
            r.options.protocol
        ),
    };
    let _ = writeln!(s, "server:       PostgreSQL {}", r.server_version);
    let _ = writeln!(
        s,
        "clients:      {} on {} thread(s), {:.1} s",
        r.options.clients, r.options.threads, r.duration_s
    );
    if r.interrupted {
        let _ = writeln!(
            s,
            "interrupted:  stopped by Ctrl-C; the figures cover the transactions completed before"
        );
    }
    let _ = writeln!(
        s,
        "transactions: {} ok, {} failed, {} retried ({} retries)",
        k.ok, k.failed, k.retried, k.retries
    );
    let _ = writeln!(s, "throughput:   {:.1} tps", r.tps);
    let _ = writeln!(
        s,
        "latency ms:   mean {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        l.mean, l.p50, l.p90, l.p99, l.p99_9, l.max
    );
    client_cpu_lines(&mut s, r);
    s
}

/// The client's two CPU figures: CPU time (seconds, the busiest thread's share of the run, per
/// transaction) and run-queue wait (seconds, the largest share a thread waited for a CPU).
fn client_cpu_lines(s: &mut String, r: &RunDocument) {
    let c = &r.client_cpu;
    let k = &r.transactions;
    let per_tx = if k.ok > 0 {
        c.cpu_time_s * 1e6 / k.ok as f64
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "client CPU time:       {:.2} s, busiest thread {:.0}% of the run, {:.1} µs per transaction",
        c.cpu_time_s,
        100.0 * c.cpu_time,
        per_tx
    );
    let _ = writeln!(
        s,
        "client run-queue wait: {:.2} s, longest thread {:.0}% of the run",
        c.run_queue_wait_s,
        100.0 * c.run_queue_wait
    );
}
