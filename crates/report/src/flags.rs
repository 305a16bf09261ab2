//! Validity flags of a group of runs (the repetitions of a point), with the thresholds
//! `pgrig study`'s table uses: client-saturated (a client thread ≥ 90 % busy), high-spread (TPS
//! coefficient of variation > 10 %), failures (failed transactions or aborted clients),
//! contention (retries, or > 20 % of wait-event samples on locks).

use crate::model::Run;

/// Median, min, max and population coefficient of variation (%) of `xs`.
pub fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    pgrig_study::summary::spread(xs)
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
    if runs.iter().any(|r| r.client_cpu.unwrap_or(0.0) > 0.9) {
        out.push("client-saturated");
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
        "client-saturated" => "a client thread was ≥ 90 % busy: the figure may measure the client, not the server",
        "high-spread" => "repetitions differ by more than 10 % (coefficient of variation): the median is uncertain",
        "failures" => "transactions failed or clients aborted: the figure covers only what succeeded",
        "contention" => "serialization/deadlock retries or > 20 % of sampled sessions waiting on locks",
        _ => "",
    }
}
