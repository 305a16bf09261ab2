//! TPC-C's figures ([`super::metrics`]) as `pgrig run` shows them: text lines after pgrig's
//! summary (the headline, HammerDB's `System achieved N NOPM from M PostgreSQL TPM` when the
//! server's counters were sampled, the efficiency against the deck's ceiling, the per-type
//! table with its response-time limits, the warnings), and the same as JSON for the run
//! document's `workload_figures`.

use pgrig_engine::document::RunDocument;
use serde_json::{json, Value};

use super::metrics::rampup_s as default_rampup_s;
use super::metrics::{
    ceiling_per_warehouse, committed_ceiling_per_warehouse, figures_steady, Figures,
};
use super::{Config, Mode};
use crate::Options;

/// The figures of a TPC-C document (`doc.workload` = `tpcc`) run with `options`.
pub fn figures_for(doc: &RunDocument, options: &Options) -> Option<(Config, Figures)> {
    if doc.workload.as_deref() != Some("tpcc") {
        return None;
    }
    let cfg = Config::from_options(options).ok()?;
    let f = figures_steady(doc, &cfg, rampup_s(doc, &cfg));
    Some((cfg, f))
}

/// The ramp-up left out of the headline ([`super::metrics::rampup_s`]).
pub fn rampup_s(doc: &RunDocument, cfg: &Config) -> u64 {
    default_rampup_s(cfg, doc.duration_s)
}

/// The report lines of a TPC-C run, for `pgrig run`.
pub fn lines_for(doc: &RunDocument, options: &Options) -> Option<Vec<String>> {
    figures_for(doc, options).map(|(_, f)| render(&f))
}

/// HammerDB's one-line result, when the server's transactions were sampled.
pub fn headline(f: &Figures) -> Option<String> {
    let server = f.server_tpm?;
    Some(format!(
        "System achieved {:.0} NOPM from {:.0} PostgreSQL TPM",
        f.headline(),
        server.tpm
    ))
}

/// Why there is no efficiency, or against what it is.
fn efficiency_line(f: &Figures) -> Option<String> {
    if f.mode != Mode::Terminals {
        return None;
    }
    let ceiling = format!(
        "the card deck's ceiling of {:.2} committed New-Orders/min per warehouse ({:.2} with the 1 % that roll back; the 12.86 often quoted assumes 45 % New-Orders)",
        committed_ceiling_per_warehouse(),
        ceiling_per_warehouse()
    );
    Some(match f.efficiency {
        Some(e) => format!("efficiency: {:.1} % of {ceiling}", 100.0 * e),
        None => format!(
            "efficiency: not comparable (think_scale={} ≠ 1; the ceiling, {:.2} committed New-Orders/min per warehouse from the card deck, assumes the specification's keying and think times)",
            f.think_scale,
            committed_ceiling_per_warehouse()
        ),
    })
}

/// The figures as text lines.
pub fn render(f: &Figures) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(headline(f));
    let label = match f.mode {
        Mode::Terminals => "tpmC-like (New-Orders/min, terminals with keying and think times)",
        Mode::NoWait => "NOPM (New-Orders/min, no-wait mode; not tpmC)",
    };
    match &f.steady {
        Some(s) => {
            out.push(format!(
                "{label}: {:.1} committed over seconds {}-{} (after a {} s ramp-up{}); whole run {:.1}",
                s.new_orders_per_min,
                s.from,
                s.to,
                s.from - 1,
                if s.estimated { "; estimated from the run's New-Order share" } else { "" },
                f.new_orders_per_min
            ));
            out.push(format!(
                "TPM (database transactions/min): {:.1} over seconds {}-{}; whole run {:.1} over {:.2} min, {} warehouses",
                s.tpm, s.from, s.to, f.tpm, f.minutes, f.warehouses
            ));
        }
        None => {
            out.push(format!("{label}: {:.1}", f.new_orders_per_min));
            out.push(format!(
                "TPM (database transactions/min): {:.1} over {:.2} min, {} warehouses",
                f.tpm, f.minutes, f.warehouses
            ));
        }
    }
    if let Some(s) = f.server_tpm {
        let what = match s.pgrig_readings {
            Some(n) => format!("the run database's commits + rollbacks in pg_stat_database, less pgrig's own {n} readings"),
            None => "pg_stat_database commits + rollbacks, all databases".to_string(),
        };
        out.push(format!(
            "PostgreSQL TPM ({what}): {:.1} from {:.1} s to {:.1} s",
            s.tpm, s.from_s, s.to_s
        ));
    }
    out.extend(efficiency_line(f));
    out.extend(f.efficiency_note.clone());
    out.push(format!(
        "{:<17} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9}  90th-percentile limit",
        "transaction", "count", "%", "p50 ms", "p90 ms", "p99 ms", "max ms"
    ));
    for t in &f.types {
        let verdict = match t.p90_pass {
            Some(true) => "pass",
            Some(false) => "FAIL",
            None => "n/a, none ran",
        };
        out.push(format!(
            "{:<17} {:>9} {:>6.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  {verdict} (≤ {} s)",
            t.name, t.count, t.percent, t.p50_ms, t.p90_ms, t.p99_ms, t.max_ms, t.p90_limit_s
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
    for w in &f.warnings {
        out.push(format!("warning: {w}"));
    }
    out
}

/// The figures as the run document's `workload_figures`.
pub fn json_for(doc: &RunDocument, options: &Options) -> Option<Value> {
    let (cfg, f) = figures_for(doc, options)?;
    let types: Vec<Value> = (f.types.iter())
        .map(|t| {
            json!({
                "name": t.name, "count": t.count, "percent": t.percent,
                "p50_ms": t.p50_ms, "p90_ms": t.p90_ms, "p99_ms": t.p99_ms, "max_ms": t.max_ms,
                "p90_limit_s": t.p90_limit_s, "p90_pass": t.p90_pass,
                "retries": t.retries, "failed": t.failed,
            })
        })
        .collect();
    let steady = f.steady.as_ref().map(|s| {
        json!({
            "from_second": s.from, "to_second": s.to, "nopm": s.new_orders_per_min, "tpm": s.tpm,
            "estimated": s.estimated,
        })
    });
    let server = f
        .server_tpm
        .map(|s| json!({"from_s": s.from_s, "to_s": s.to_s, "tpm": s.tpm, "pgrig_readings": s.pgrig_readings}));
    Some(json!({
        "warehouses": f.warehouses,
        "mode": f.mode.name(),
        "label": if f.mode == Mode::Terminals { "tpmC-like" } else { "NOPM" },
        "clients": f.clients,
        "think_scale": f.think_scale,
        "rampup_s": rampup_s(doc, &cfg),
        "procedures": cfg.procedures,
        "deferred_delivery": cfg.deferred_delivery,
        "partitions": cfg.partitions,
        "nopm": f.headline(),
        "nopm_whole_run": f.new_orders_per_min,
        "tpm": f.steady.as_ref().map_or(f.tpm, |s| s.tpm),
        "tpm_whole_run": f.tpm,
        "steady": steady,
        "server_tpm": server,
        "headline": headline(&f),
        "efficiency": f.efficiency,
        "efficiency_note": f.efficiency_note,
        "ceiling_per_warehouse": committed_ceiling_per_warehouse(),
        "types": types,
        "rollbacks": f.rollbacks,
        "retries": f.retries,
        "failed": f.failed,
        "skipped_districts": f.skipped_districts,
        "warnings": f.warnings,
    }))
}
