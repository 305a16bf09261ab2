//! Validity flags of a group of runs (the repetitions of a point), with the thresholds
//! `pgrig study`'s table uses: client-saturated (a client thread's CPU time ≥ 90 % of the run),
//! host-contended (a client thread's run-queue wait ≥ 10 % of the run), high-spread (TPS
//! coefficient of variation > 10 %), failures (failed transactions or aborted clients),
//! contention (retries, or > 20 % of wait-event samples on locks).

use pgrig_results::client_cpu::{CLIENT_SATURATED, HOST_CONTENDED};

use crate::model::Run;

/// Every flag, in the order tables and legends show them.
pub const ALL: &[&str] = &[
    CLIENT_SATURATED,
    HOST_CONTENDED,
    "high-spread",
    "failures",
    "contention",
];

/// Median, min, max and population coefficient of variation (%) of `xs`.
pub fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    pgrig_results::summary::spread(xs)
}

fn lock_share(r: &Run) -> f64 {
    let total: f64 = r.server.wait_events.iter().map(|e| e.1).sum();
    let lock: f64 = r
        .server
        .wait_events
        .iter()
        .filter(|e| e.0.starts_with("Lock:"))
        .map(|e| e.1)
        .sum();
    if total > 0.0 {
        lock / total
    } else {
        0.0
    }
}

/// The flags that apply to these runs, in a fixed order.
pub fn of(runs: &[&Run]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let raised: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.client_cpu)
        .flat_map(|c| c.flags())
        .collect();
    for f in [CLIENT_SATURATED, HOST_CONTENDED] {
        if raised.contains(&f) {
            out.push(f);
        }
    }
    let tps: Vec<f64> = runs.iter().map(|r| r.tps).collect();
    if spread(&tps).3 > 10.0 {
        out.push("high-spread");
    }
    if runs
        .iter()
        .any(|r| r.failed > 0.0 || r.aborted_clients > 0.0)
    {
        out.push("failures");
    }
    if runs.iter().any(|r| r.retries > 0.0 || lock_share(r) > 0.2) {
        out.push("contention");
    }
    out
}

/// What a flag means, for the legend under a chart.
pub fn meaning(flag: &str) -> &'static str {
    match flag {
        "client-saturated" => "a client thread's CPU time was ≥ 90 % of the run: the figure may measure the client's own CPU, not the server",
        "host-contended" => "a client thread waited for a CPU (run-queue wait) ≥ 10 % of the run: other work on the client host took its CPU, so the figure may measure that contention",
        "high-spread" => "repetitions differ by more than 10 % (coefficient of variation): the median is uncertain",
        "failures" => "transactions failed or clients aborted: the figure covers only what succeeded",
        "contention" => "serialization/deadlock retries or > 20 % of sampled sessions waiting on locks",
        _ => "",
    }
}
