//! pgbench's final report (stdout), newest wording (PostgreSQL 18+ layout; the no-success case as
//! pgbench 15 prints it), from a [`RunResult`]; plus pgrig's opt-in percentile lines. Pure formatting.

use std::fmt::Write;

use hdrhistogram::Histogram;
use pgrig_engine::config::Duration;
use pgrig_engine::result::RunResult;
use pgrig_engine::stats::{Counts, Snapshot};

fn pct(x: u64, total: u64) -> f64 {
    if total == 0 {
        f64::NAN
    } else {
        100.0 * x as f64 / total as f64
    }
}

/// `%.3f` as pgbench prints it: PostgreSQL's own `snprintf` writes NaN as `NaN` (an all-aborted
/// run reports `number of failed transactions: 0 (NaN%)`).
fn f3(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else {
        format!("{x:.3}")
    }
}

/// The failure/retry/skip lines shared by the main and per-script blocks.
fn outcome_lines(out: &mut String, r: &RunResult, k: &Counts, prefix: &str) {
    failure_lines(out, r, k, prefix);
    skipped_line(out, r, k, prefix);
}

/// The failed/detailed/retried lines: pgbench 15 prints them even when no transaction
/// succeeded (percentages `NaN`), before it stops the report.
fn failure_lines(out: &mut String, r: &RunResult, k: &Counts, prefix: &str) {
    let cfg = &r.config;
    let total = k.total();
    let _ = writeln!(
        out,
        "{prefix}number of failed transactions: {} ({}%)",
        k.failed(),
        f3(pct(k.failed(), total))
    );
    if cfg.failures_detailed {
        let _ = writeln!(
            out,
            "{prefix}number of serialization failures: {} ({}%)",
            k.serialization_failures,
            f3(pct(k.serialization_failures, total))
        );
        let _ = writeln!(
            out,
            "{prefix}number of deadlock failures: {} ({}%)",
            k.deadlock_failures,
            f3(pct(k.deadlock_failures, total))
        );
        if cfg.continue_on_error {
            let _ = writeln!(
                out,
                "{prefix}number of other failures: {} ({}%)",
                k.other_failures,
                f3(pct(k.other_failures, total))
            );
        }
    }
    if cfg.max_tries != 1 {
        let _ = writeln!(
            out,
            "{prefix}number of transactions retried: {} ({}%)",
            k.retried,
            f3(pct(k.retried, total))
        );
        let _ = writeln!(out, "{prefix}total number of retries: {}", k.retries);
    }
}

fn skipped_line(out: &mut String, r: &RunResult, k: &Counts, prefix: &str) {
    let cfg = &r.config;
    let total = k.total();
    if cfg.rate.is_some() && cfg.latency_limit_us.is_some() {
        let _ = writeln!(
            out,
            "{prefix}number of transactions skipped: {} ({}%)",
            k.skipped,
            f3(pct(k.skipped, total))
        );
    }
}

pub fn percentile_line(h: &Histogram<u64>) -> String {
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
    format!(
        "latency percentiles: p50 = {:.3} ms, p90 = {:.3} ms, p95 = {:.3} ms, p99 = {:.3} ms, p99.9 = {:.3} ms, max = {:.3} ms",
        q(0.5),
        q(0.9),
        q(0.95),
        q(0.99),
        q(0.999),
        h.max() as f64 / 1000.0
    )
}

/// The whole report text (everything pgbench prints on stdout after the banner).
pub fn render(r: &RunResult) -> String {
    let cfg = &r.config;
    let mut out = String::new();
    let snap: &Snapshot = &r.stats.total();
    let k = &snap.counts;
    let nclients = cfg.clients as u64;
    let nthreads = r.threads_cpu.len().max(1);
    let desc = if r.scripts.len() == 1 {
        r.scripts[0].desc.as_str()
    } else {
        "multiple scripts"
    };
    let _ = writeln!(out, "transaction type: {desc}");
    let _ = writeln!(out, "scaling factor: {}", r.scale);
    if let Some((method, n)) = &r.partitions {
        let _ = writeln!(out, "partition method: {method}");
        let _ = writeln!(out, "partitions: {n}");
    }
    let _ = writeln!(out, "query mode: {}", cfg.mode.name());
    let _ = writeln!(out, "number of clients: {}", cfg.clients);
    let _ = writeln!(out, "number of threads: {nthreads}");
    if cfg.max_tries != 0 {
        let _ = writeln!(out, "maximum number of tries: {}", cfg.max_tries);
    }
    match cfg.duration {
        Duration::Transactions(t) => {
            let _ = writeln!(out, "number of transactions per client: {t}");
            let _ = writeln!(
                out,
                "number of transactions actually processed: {}/{}",
                k.ok,
                t * nclients
            );
        }
        Duration::Seconds(s) => {
            let _ = writeln!(out, "duration: {s} s");
            let _ = writeln!(out, "number of transactions actually processed: {}", k.ok);
        }
    }
    let total = k.total();
    // pgbench 15: the failure lines, then nothing more when no transaction succeeded or was
    // skipped (the rest would be meaningless).
    failure_lines(&mut out, r, k, "");
    if k.ok + k.skipped == 0 {
        return out;
    }
    skipped_line(&mut out, r, k, "");
    if let Some(l) = cfg.latency_limit_us {
        let _ = writeln!(
            out,
            "number of transactions above the {:.1} ms latency limit: {}/{} ({}%)",
            l as f64 / 1000.0,
            k.late,
            k.ok,
            f3(pct(k.late, k.ok))
        );
    }
    let bench_us = r.bench_duration_s * 1e6;
    if cfg.progress.is_some() || cfg.rate.is_some() || cfg.latency_limit_us.is_some() {
        let _ = writeln!(
            out,
            "latency average = {:.3} ms",
            snap.latency.mean() / 1000.0
        );
        let _ = writeln!(
            out,
            "latency stddev = {:.3} ms",
            snap.latency.stddev() / 1000.0
        );
    } else {
        let avg = 0.001 * bench_us * nclients as f64 / total as f64;
        let inc = if k.failed() > 0 {
            " (including failures)"
        } else {
            ""
        };
        let _ = writeln!(out, "latency average = {avg:.3} ms{inc}");
    }
    if cfg.rate.is_some() {
        let _ = writeln!(
            out,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            snap.lag.mean() / 1000.0,
            snap.lag.max / 1000.0
        );
    }
    let tps = if r.bench_duration_s > 0.0 {
        k.ok as f64 / r.bench_duration_s
    } else {
        0.0
    };
    if cfg.connect_per_tx {
        let n = (k.ok + k.failed()).max(1);
        let _ = writeln!(
            out,
            "average connection time = {:.3} ms",
            0.001 * r.stats.conn_time_us / n as f64
        );
        let _ = writeln!(out, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(out, "initial connection time = {:.3} ms", r.initial_conn_ms);
        let _ = writeln!(out, "tps = {tps:.6} (without initial connection time)");
    }
    let histogram = r.stats.histogram();
    if cfg.percentiles && !histogram.is_empty() {
        let _ = writeln!(out, "{}", percentile_line(&histogram));
    }

    let per_script = r.scripts.len() > 1;
    let total_weight: i64 = r.scripts.iter().map(|s| s.weight).sum();
    for (i, s) in r.scripts.iter().enumerate() {
        let ss = &r.stats.scripts[i];
        if per_script {
            let sk = &ss.snap.counts;
            let stot = sk.total();
            let _ = writeln!(out, "SQL script {}: {}", i + 1, s.desc);
            let _ = writeln!(
                out,
                " - weight: {} (targets {:.1}% of total)",
                s.weight,
                100.0 * s.weight as f64 / total_weight.max(1) as f64
            );
            let _ = writeln!(
                out,
                " - {} transactions ({:.1}% of total)",
                stot,
                pct(stot, total)
            );
            if stot > 0 {
                let stps = if r.bench_duration_s > 0.0 {
                    sk.ok as f64 / r.bench_duration_s
                } else {
                    0.0
                };
                let _ = writeln!(
                    out,
                    " - number of transactions actually processed: {} (tps = {:.6})",
                    sk.ok, stps
                );
                outcome_lines(&mut out, r, sk, " - ");
                if sk.ok > 0 {
                    let _ = writeln!(
                        out,
                        " - latency average = {:.3} ms",
                        ss.snap.latency.mean() / 1000.0
                    );
                    let _ = writeln!(
                        out,
                        " - latency stddev = {:.3} ms",
                        ss.snap.latency.stddev() / 1000.0
                    );
                }
                if cfg.percentiles && !ss.histogram.is_empty() {
                    let _ = writeln!(out, " - {}", percentile_line(&ss.histogram));
                }
            }
        }
        if cfg.report_per_command {
            let head = if cfg.max_tries == 1 {
                "statement latencies in milliseconds and failures:"
            } else {
                "statement latencies in milliseconds, failures and retries:"
            };
            let _ = writeln!(out, "{}{}", if per_script { " - " } else { "" }, head);
            for (c, text) in s.command_texts.iter().enumerate() {
                let cs = &ss.commands[c];
                let avg = if cs.latency.count > 0 {
                    cs.latency.mean() / 1000.0
                } else {
                    0.0
                };
                if cfg.max_tries == 1 {
                    let _ = writeln!(out, "   {:11.3}  {:10} {}", avg, cs.failures, text);
                } else {
                    let _ = writeln!(
                        out,
                        "   {:11.3}  {:10} {:10} {}",
                        avg, cs.failures, cs.retries, text
                    );
                }
            }
        }
    }
    out
}
