//! TPC-C's figures from a run document (a pure function): New-Orders per minute — called
//! tpmC-like in terminal mode and NOPM in no-wait mode, never tpmC (an unaudited kit's number)
//! — transactions per minute, each type's count, share, latency percentiles and the
//! 90th-percentile response-time limit of clause 5.2.5.3 (5 s; Stock-Level 20 s) marked
//! pass/fail, retries, and in terminal mode the efficiency against the ceiling of about
//! 12.86 tpmC per warehouse; with deferred Delivery the `delivery_deferred` transactions'
//! own figures (limit 80 s); the districts Delivery skipped. The headline is over the
//! steady-state window after the ramp-up (`figures_steady`). Rendered as text lines for
//! `pgrig run`.

use pgrig_engine::document::RunDocument;

use super::sql::{DELIVERY, DELIVERY_DEFERRED, TX_NAMES};
use super::Mode;

/// The most New-Orders a warehouse's ten terminals can enter per minute with the
/// specification's keying and think times.
pub const MAX_TPMC_PER_WAREHOUSE: f64 = 12.86;

/// 90th-percentile response-time limits in seconds, by transaction type (Delivery's is its
/// queuing's when deferred; the deferred business transaction must complete within 80 s,
/// clause 2.7.2.2).
pub const P90_LIMIT_S: [f64; 6] = [5.0, 5.0, 5.0, 5.0, 20.0, 80.0];

/// One transaction type's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeFigures {
    pub name: &'static str,
    pub count: u64,
    /// share of all completed transactions, %
    pub percent: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub p90_limit_s: f64,
    pub p90_pass: bool,
    pub retries: u64,
    pub failed: u64,
}

/// A TPC-C run's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub mode: Mode,
    pub warehouses: i64,
    pub minutes: f64,
    /// committed New-Orders per minute (tpmC-like in terminal mode, NOPM in no-wait mode)
    pub new_orders_per_min: f64,
    /// all transactions per minute
    pub tpm: f64,
    pub types: Vec<TypeFigures>,
    /// New-Orders that ended on the unused item (their intended rollback)
    pub rollbacks: u64,
    pub retries: u64,
    pub failed: u64,
    /// districts Delivery found without an undelivered order (from the per-statement
    /// counts; `None` when Delivery ran as a function or not at all)
    pub skipped_districts: Option<u64>,
    /// terminal mode: new_orders_per_min / (12.86 × warehouses)
    pub efficiency: Option<f64>,
    /// the steady-state window after the ramp-up, when the run has one
    pub steady: Option<Steady>,
}

/// New-Orders and all transactions per minute over the seconds after the ramp-up. The
/// document's per-second series counts all transactions; New-Orders are that count times the
/// run's share of committed New-Orders (the card deck keeps the mix the same in every window
/// of a few seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    /// the window: seconds `from..=to` of the run (1 = the first)
    pub from: u64,
    pub to: u64,
    pub new_orders_per_min: f64,
    pub tpm: f64,
}

/// [`figures`] with the steady-state window after `rampup_s` seconds; the headline
/// (tpmC-like / NOPM, efficiency) is the window's. Without whole seconds after the ramp-up,
/// the whole run's.
pub fn figures_steady(doc: &RunDocument, mode: Mode, warehouses: i64, rampup_s: u64) -> Figures {
    let mut f = figures(doc, mode, warehouses);
    let window: Vec<_> = doc.series.iter().filter(|s| s.second > rampup_s).collect();
    let (Some(first), Some(last)) = (window.first(), window.last()) else {
        return f;
    };
    let all: u64 = window.iter().map(|s| s.tps).sum();
    let minutes = window.len() as f64 / 60.0;
    let share = if f.tpm > 0.0 {
        f.new_orders_per_min / f.tpm
    } else {
        0.0
    };
    let steady = Steady {
        from: first.second,
        to: last.second,
        new_orders_per_min: all as f64 * share / minutes,
        tpm: all as f64 / minutes,
    };
    if mode == Mode::Terminals && warehouses > 0 {
        f.efficiency =
            Some(steady.new_orders_per_min / (MAX_TPMC_PER_WAREHOUSE * warehouses as f64));
    }
    f.steady = Some(steady);
    f
}

/// The figures of `doc`, a run of TPC-C in `mode` on `warehouses` warehouses.
pub fn figures(doc: &RunDocument, mode: Mode, warehouses: i64) -> Figures {
    let minutes = doc.duration_s / 60.0;
    let per_min = |n: u64| {
        if minutes > 0.0 {
            n as f64 / minutes
        } else {
            0.0
        }
    };
    let total: u64 = doc.transactions.ok;
    // shares are of the terminals' transactions: a deferred Delivery is part of its queuing one
    let deferred = doc
        .scripts
        .iter()
        .find(|s| script_is(&s.desc, TX_NAMES[DELIVERY_DEFERRED]))
        .map_or(0, |s| s.transactions.ok);
    let terminal_total = total - deferred.min(total);
    let mut types = Vec::new();
    for (i, name) in TX_NAMES.iter().enumerate() {
        let Some(s) = doc.scripts.iter().find(|s| script_is(&s.desc, name)) else {
            continue;
        };
        let p90_limit_s = P90_LIMIT_S[i];
        types.push(TypeFigures {
            name,
            count: s.transactions.ok,
            percent: if terminal_total > 0 {
                100.0 * s.transactions.ok as f64 / terminal_total as f64
            } else {
                0.0
            },
            p50_ms: s.latency_ms.p50,
            p90_ms: s.latency_ms.p90,
            p99_ms: s.latency_ms.p99,
            max_ms: s.latency_ms.max,
            p90_limit_s,
            p90_pass: s.latency_ms.p90 <= p90_limit_s * 1000.0,
            retries: s.transactions.retries,
            failed: s.transactions.failed,
        });
    }
    // committed New-Orders: the intended rollbacks (all New-Orders) entered no order, as
    // HammerDB's NOPM (from D_NEXT_O_ID) does not count them either
    let new_orders = types
        .iter()
        .find(|t| t.name == "new_order")
        .map_or(0, |t| t.count)
        .saturating_sub(doc.transactions.rollbacks);
    let new_orders_per_min = per_min(new_orders);
    Figures {
        mode,
        warehouses,
        minutes,
        new_orders_per_min,
        tpm: per_min(total),
        types,
        rollbacks: doc.transactions.rollbacks,
        retries: doc.transactions.retries,
        failed: doc.transactions.failed,
        skipped_districts: skipped_districts(doc),
        efficiency: (mode == Mode::Terminals && warehouses > 0)
            .then(|| new_orders_per_min / (MAX_TPMC_PER_WAREHOUSE * warehouses as f64)),
        steady: None,
    }
}

/// Districts skipped by Delivery's business transactions: the executions of its NEW-ORDER
/// step minus those of its ORDER step (client-side SQL; `None` without those statements).
pub fn skipped_districts(doc: &RunDocument) -> Option<u64> {
    let s = doc.scripts.iter().find(|s| {
        script_is(&s.desc, TX_NAMES[DELIVERY_DEFERRED])
            || (script_is(&s.desc, TX_NAMES[DELIVERY]) && !s.commands.is_empty())
    })?;
    let runs = |prefix: &str| {
        s.commands
            .iter()
            .find(|c| c.text.starts_with(prefix))
            .map(|c| c.executions)
    };
    let tried = runs("DELETE FROM new_order")?;
    Some(tried.saturating_sub(runs("UPDATE orders SET o_carrier_id")?))
}

/// The report lines of a run document when it is a TPC-C run (`doc.workload` = `tpcc`), for
/// `pgrig run`: `options` are the workload options the run was given (mode, warehouses).
pub fn lines_for(doc: &RunDocument, options: &crate::Options) -> Option<Vec<String>> {
    if doc.workload.as_deref() != Some("tpcc") {
        return None;
    }
    let cfg = super::Config::from_options(options).ok()?;
    let rampup = cfg
        .rampup_s
        .unwrap_or_else(|| (doc.duration_s / 10.0).floor() as u64);
    Some(render(&figures_steady(
        doc,
        cfg.mode,
        cfg.warehouses,
        rampup,
    )))
}

/// Whether a script description names transaction type `name` (`new_order`, `tpcc:new_order`,
/// `<native: tpcc new_order>`).
fn script_is(desc: &str, name: &str) -> bool {
    desc == name
        || desc
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == name)
}

/// The figures as text lines.
pub fn render(f: &Figures) -> Vec<String> {
    let mut out = Vec::new();
    let label = match f.mode {
        Mode::Terminals => "tpmC-like (New-Orders/min, terminals with keying and think times)",
        Mode::NoWait => "NOPM (New-Orders/min, no-wait mode; not tpmC)",
    };
    match &f.steady {
        Some(s) => {
            out.push(format!(
                "{label}: {:.1} over seconds {}-{} (after a {} s ramp-up); whole run {:.1}",
                s.new_orders_per_min,
                s.from,
                s.to,
                s.from - 1,
                f.new_orders_per_min
            ));
            out.push(format!(
                "TPM (all transactions/min): {:.1} over seconds {}-{}; whole run {:.1} over {:.2} min, {} warehouses",
                s.tpm, s.from, s.to, f.tpm, f.minutes, f.warehouses
            ));
        }
        None => {
            out.push(format!("{label}: {:.1}", f.new_orders_per_min));
            out.push(format!(
                "TPM (all transactions/min): {:.1} over {:.2} min, {} warehouses",
                f.tpm, f.minutes, f.warehouses
            ));
        }
    }
    if let Some(e) = f.efficiency {
        out.push(format!(
            "efficiency: {:.1} % of {MAX_TPMC_PER_WAREHOUSE} per warehouse",
            100.0 * e
        ));
    }
    out.push(format!(
        "{:<17} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9}  90th-percentile limit",
        "transaction", "count", "%", "p50 ms", "p90 ms", "p99 ms", "max ms"
    ));
    for t in &f.types {
        out.push(format!(
            "{:<17} {:>9} {:>6.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  {} (≤ {} s)",
            t.name,
            t.count,
            t.percent,
            t.p50_ms,
            t.p90_ms,
            t.p99_ms,
            t.max_ms,
            if t.p90_pass { "pass" } else { "FAIL" },
            t.p90_limit_s
        ));
    }
    out.push(format!(
        "rollbacks (unused item): {}, retries: {}, failed: {}",
        f.rollbacks, f.retries, f.failed
    ));
    if let Some(n) = f.skipped_districts {
        out.push(format!(
            "districts skipped by Delivery (no undelivered order): {n}"
        ));
    }
    out
}
