//! pgbench's final report (stdout), newest wording (PostgreSQL 18+ layout; the no-success case
//! as pgbench 15 prints it), from the run document; plus pgrig's opt-in percentile lines and the interruption line. Pure formatting:
//! returns the text.

use std::fmt::Write;

use pgrig_engine::document::{LatencyMs, RunDocument, ScriptDoc, Transactions};

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
fn outcome_lines(out: &mut String, r: &RunDocument, k: &Transactions, prefix: &str) {
    failure_lines(out, r, k, prefix);
    skipped_line(out, r, k, prefix);
}

/// The failed/detailed/retried lines: pgbench 15 prints them even when no transaction
/// succeeded (percentages `NaN`), before it stops the report.
fn failure_lines(out: &mut String, r: &RunDocument, k: &Transactions, prefix: &str) {
    let cfg = &r.options;
    let total = k.total();
    let _ = writeln!(
        out,
        "{prefix}number of failed transactions: {} ({}%)",
        k.failed,
        f3(pct(k.failed, total))
    );
    if cfg.failures_detailed {
        let _ = writeln!(
            out,
            "{prefix}number of serialization failures: {} ({}%)",
            k.failures.serialization,
            f3(pct(k.failures.serialization, total))
        );
        let _ = writeln!(
            out,
            "{prefix}number of deadlock failures: {} ({}%)",
            k.failures.deadlock,
            f3(pct(k.failures.deadlock, total))
        );
        if cfg.continue_on_error {
            let _ = writeln!(
                out,
                "{prefix}number of other failures: {} ({}%)",
                k.failures.other,
                f3(pct(k.failures.other, total))
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

fn skipped_line(out: &mut String, r: &RunDocument, k: &Transactions, prefix: &str) {
    let cfg = &r.options;
    let total = k.total();
    if cfg.rate.is_some() && cfg.latency_limit_ms.is_some() {
        let _ = writeln!(
            out,
            "{prefix}number of transactions skipped: {} ({}%)",
            k.skipped,
            f3(pct(k.skipped, total))
        );
    }
}

/// pgrig's percentile line (`--percentiles`).
pub fn percentile_line(l: &LatencyMs) -> String {
    format!(
        "latency percentiles: p50 = {:.3} ms, p90 = {:.3} ms, p95 = {:.3} ms, p99 = {:.3} ms, p99.9 = {:.3} ms, max = {:.3} ms",
        l.p50, l.p90, l.p95, l.p99, l.p99_9, l.max
    )
}

/// The whole report text (everything pgbench prints on stdout after the banner);
/// `percentiles`: pgrig's percentile lines too.
pub fn render(r: &RunDocument, percentiles: bool) -> String {
    let mut out = String::new();
    header(&mut out, r);
    incomplete_line(&mut out, r);
    let k = &r.transactions;
    let total = k.total();
    // pgbench 15: the failure lines, then nothing more when no transaction succeeded or was
    // skipped (the rest would be meaningless).
    failure_lines(&mut out, r, k, "");
    if k.ok + k.skipped == 0 {
        return out;
    }
    skipped_line(&mut out, r, k, "");
    totals(&mut out, r);
    if percentiles && k.ok > 0 {
        let _ = writeln!(out, "{}", percentile_line(&r.latency_ms));
    }
    let per_script = r.scripts.len() > 1;
    let total_weight: i64 = r.scripts.iter().map(|s| s.weight).sum();
    for (i, s) in r.scripts.iter().enumerate() {
        if per_script {
            script_block(&mut out, r, i, s, total, total_weight, percentiles);
        }
        if r.options.report_per_command {
            command_lines(&mut out, r, s, per_script);
        }
    }
    out
}

/// A segmented run that lost segments says so before its figures.
fn incomplete_line(out: &mut String, r: &RunDocument) {
    let Some(s) = r.segments.as_ref().filter(|s| !s.missing.is_empty()) else {
        return;
    };
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let _ = writeln!(
        out,
        "INCOMPLETE RUN: no result from segment(s) {} of {}; the figures below cover segment(s) {} only",
        list(&s.missing),
        s.count,
        list(&s.merged)
    );
}

/// The lines before any figure: what ran, how.
fn header(out: &mut String, r: &RunDocument) {
    let cfg = &r.options;
    let desc = if r.scripts.len() == 1 {
        r.scripts[0].desc.as_str()
    } else {
        "multiple scripts"
    };
    let _ = writeln!(out, "transaction type: {desc}");
    let _ = writeln!(out, "scaling factor: {}", cfg.scale);
    if let Some(p) = &r.partitions {
        let _ = writeln!(out, "partition method: {}", p.method);
        let _ = writeln!(out, "partitions: {}", p.count);
    }
    let _ = writeln!(out, "query mode: {}", cfg.protocol);
    let _ = writeln!(out, "number of clients: {}", cfg.clients);
    let _ = writeln!(out, "number of threads: {}", cfg.threads.max(1));
    if cfg.max_tries != 0 {
        let _ = writeln!(out, "maximum number of tries: {}", cfg.max_tries);
    }
    let ok = r.transactions.ok;
    match (cfg.transactions_per_client, cfg.duration_s) {
        (Some(t), _) => {
            let _ = writeln!(out, "number of transactions per client: {t}");
            let _ = writeln!(
                out,
                "number of transactions actually processed: {ok}/{}",
                t * cfg.clients as u64
            );
        }
        (None, s) => {
            let _ = writeln!(out, "duration: {} s", s.unwrap_or(0));
            let _ = writeln!(out, "number of transactions actually processed: {ok}");
        }
    }
}

/// Latency limit, latency, lag, connection time and tps of the whole run.
fn totals(out: &mut String, r: &RunDocument) {
    let cfg = &r.options;
    let k = &r.transactions;
    if let Some(l) = cfg.latency_limit_ms {
        let _ = writeln!(
            out,
            "number of transactions above the {l:.1} ms latency limit: {}/{} ({}%)",
            k.late,
            k.ok,
            f3(pct(k.late, k.ok))
        );
    }
    if cfg.progress_s.is_some() || cfg.rate.is_some() || cfg.latency_limit_ms.is_some() {
        let _ = writeln!(out, "latency average = {:.3} ms", r.latency_ms.mean);
        let _ = writeln!(out, "latency stddev = {:.3} ms", r.latency_ms.stddev);
    } else {
        let avg = 0.001 * r.duration_s * 1e6 * cfg.clients as f64 / k.total() as f64;
        let inc = if k.failed > 0 {
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
            r.schedule_lag_ms.mean, r.schedule_lag_ms.max
        );
    }
    if cfg.connect_per_transaction {
        let n = (k.ok + k.failed).max(1);
        let _ = writeln!(
            out,
            "average connection time = {:.3} ms",
            r.connection_time_ms / n as f64
        );
        let _ = writeln!(out, "tps = {:.6} (including reconnection times)", r.tps);
    } else {
        let _ = writeln!(
            out,
            "initial connection time = {:.3} ms",
            r.initial_connection_ms
        );
        let _ = writeln!(out, "tps = {:.6} (without initial connection time)", r.tps);
    }
}

/// `SQL script N: ...` and its figures (several scripts only).
fn script_block(
    out: &mut String,
    r: &RunDocument,
    i: usize,
    s: &ScriptDoc,
    total: u64,
    total_weight: i64,
    percentiles: bool,
) {
    let sk = &s.transactions;
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
    if stot == 0 {
        return;
    }
    let _ = writeln!(
        out,
        " - number of transactions actually processed: {} (tps = {:.6})",
        sk.ok, s.tps
    );
    outcome_lines(out, r, sk, " - ");
    if sk.ok > 0 {
        let _ = writeln!(out, " - latency average = {:.3} ms", s.latency_ms.mean);
        let _ = writeln!(out, " - latency stddev = {:.3} ms", s.latency_ms.stddev);
    }
    if percentiles && sk.ok > 0 {
        let _ = writeln!(out, " - {}", percentile_line(&s.latency_ms));
    }
}

/// `-r`: each command's average latency, failures (and retries).
fn command_lines(out: &mut String, r: &RunDocument, s: &ScriptDoc, per_script: bool) {
    let retries = r.options.max_tries != 1;
    let head = if retries {
        "statement latencies in milliseconds, failures and retries:"
    } else {
        "statement latencies in milliseconds and failures:"
    };
    let _ = writeln!(out, "{}{}", if per_script { " - " } else { "" }, head);
    for c in &s.commands {
        if retries {
            let _ = writeln!(
                out,
                "   {:11.3}  {:10} {:10} {}",
                c.latency_ms_mean, c.failures, c.retries, c.text
            );
        } else {
            let _ = writeln!(
                out,
                "   {:11.3}  {:10} {}",
                c.latency_ms_mean, c.failures, c.text
            );
        }
    }
}
