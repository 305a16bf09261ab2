//! `pgrig compare A B`: is the difference between two selections of stored runs real or noise?
//! A selection ([`selector`]) names runs by id, a study, or a point of a study; [`select`]
//! resolves it in the results store and [`record`] turns each stored run into metric values
//! and flags. [`model`] compares the sides per metric — medians with order-statistic
//! confidence intervals ([`median_ci`]) and the Mann–Whitney U test ([`mann_whitney`]) — into
//! a plain [`Comparison`] that [`render`] writes as a terminal table, markdown, JSON or an HTML
//! table fragment (for the report). Metrics and their names: [`metric`]. `--flame`: [`flame`],
//! a differential flame graph of the two sides' stored profiles.
//!
//! Embedding (the report): build each side with [`select::Side::from_docs`] from stored run
//! documents, call [`compare_sides`], and write the result with [`render::render`].

pub mod error;
pub mod flame;
pub mod mann_whitney;
pub mod median_ci;
pub use pgrig_results::metric;
pub mod model;
pub mod plan_changes;
pub mod record;
pub mod render;
pub mod row;
pub mod select;
pub mod selector;
pub mod statements;
mod time_order;

pub use error::CompareError;
pub use model::{Comparison, Verdict};

use metric::Metric;
use pgrig_results::Store;
use select::Side;

/// Significance level of the test.
pub const ALPHA: f64 = 0.05;
/// Confidence asked of the median intervals.
pub const CONFIDENCE: f64 = 0.95;

/// What `pgrig compare` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// the results store: a SQLite file or a `postgresql://` URL
    pub store: String,
    pub a: String,
    pub b: String,
    /// `--metric` names; `None`: the default metrics the runs record
    pub metrics: Option<Vec<String>>,
    /// compare runs of different workloads anyway (with a warning)
    pub force: bool,
}

/// Reads both selections from the store and compares them.
pub fn run(o: &Options) -> Result<Comparison, CompareError> {
    let (sa, sb) = (selector::parse("A", &o.a)?, selector::parse("B", &o.b)?);
    let metrics = requested(o.metrics.as_deref())?;
    let mut store = Store::open_existing(&o.store)?;
    // a postgresql:// store's password never appears in a message
    let shown = pgrig_text::mask_passwords(&o.store);
    let a = select::resolve(&mut store, &shown, "A", &o.a, &sa)?;
    let b = select::resolve(&mut store, &shown, "B", &o.b, &sb)?;
    compare_sides(&a, &b, &metrics, o.metrics.is_some(), o.force)
}

/// The metrics `--metric` names (comma-separated lists allowed), or the defaults.
fn requested(names: Option<&[String]>) -> Result<Vec<&'static Metric>, CompareError> {
    let Some(names) = names else {
        return Ok(metric::DEFAULT
            .iter()
            .filter_map(|n| metric::find(n))
            .collect());
    };
    let mut out: Vec<&'static Metric> = Vec::new();
    for name in names
        .iter()
        .flat_map(|n| n.split(','))
        .filter(|n| !n.trim().is_empty())
    {
        let m =
            metric::find(name).ok_or_else(|| CompareError::UnknownMetric(name.trim().into()))?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    if out.is_empty() {
        return Err(CompareError::UnknownMetric(String::new()));
    }
    Ok(out)
}

/// Compares two resolved sides: refuses what cannot be compared, keeps the metrics both
/// record, and notes what a reader must know.
pub fn compare_sides(
    a: &Side,
    b: &Side,
    metrics: &[&'static Metric],
    explicit: bool,
    force: bool,
) -> Result<Comparison, CompareError> {
    let needed = mann_whitney::runs_needed(ALPHA);
    // query runs compare their plans over executions: one run per side is enough for that
    let queries = [a, b]
        .iter()
        .all(|s| !s.samples.is_empty() && s.samples.iter().all(|r| !r.queries.is_empty()));
    for s in [a, b] {
        if s.samples.len() < 2 && !queries {
            return Err(CompareError::TooFewRuns {
                which: s.which.clone(),
                text: s.text.clone(),
                n: s.samples.len(),
                needed,
                alpha: ALPHA,
            });
        }
    }
    let mut warnings = workload_check(a, b, force)?;
    let mut kept = Vec::new();
    for m in metrics {
        match coverage_of(m, a, b, explicit)? {
            Some(mut w) => {
                warnings.append(&mut w);
                kept.push(*m);
            }
            None => continue,
        }
    }
    warnings.extend(mixing(a).into_iter().chain(mixing(b)));
    warnings.extend(time_order::warning(a, b));
    let shared: Vec<String> = a
        .samples
        .iter()
        .filter(|s| b.samples.iter().any(|t| t.run_id == s.run_id))
        .map(|s| s.run_id.to_string())
        .collect();
    if !shared.is_empty() {
        warnings.push(format!("A and B share runs {}", shared.join(", ")));
    }
    let (ia, ib) = (input(a), input(b));
    let mut c = model::compare(&ia, &ib, &kept, ALPHA, CONFIDENCE);
    c.warnings = warnings;
    let pooled = |s: &Side| {
        let runs: Vec<_> = s.samples.iter().map(|r| r.queries.clone()).collect();
        plan_changes::pool(&runs)
    };
    let (qa, qb) = (pooled(a), pooled(b));
    c.plan_queries = qa
        .iter()
        .filter(|q| qb.iter().any(|o| o.name == q.name))
        .count();
    c.plan_changes = plan_changes::changes(&qa, &qb, ALPHA, CONFIDENCE);
    Ok(c)
}

fn input(s: &Side) -> model::Input<'_> {
    model::Input {
        selection: &s.text,
        points: select::points(s),
        samples: &s.samples,
    }
}

/// Whether `m` is recorded on both sides: `None` to leave a default metric out, warnings when
/// only some runs record it, an error when an explicitly asked metric is missing on a side.
fn coverage_of(
    m: &Metric,
    a: &Side,
    b: &Side,
    explicit: bool,
) -> Result<Option<Vec<String>>, CompareError> {
    let mut warnings = Vec::new();
    for s in [a, b] {
        let have = s
            .samples
            .iter()
            .filter(|r| r.values.contains_key(m.name))
            .count();
        if have == 0 && !explicit {
            return Ok(None);
        }
        if have == 0 {
            return Err(CompareError::MetricMissing {
                metric: m.name.to_string(),
                which: format!("{} ({})", s.which, s.text),
                hint: collect_hint(m.name).to_string(),
            });
        }
        if have < s.samples.len() {
            warnings.push(format!(
                "{}: recorded by {have} of the {} runs of {}",
                m.name,
                s.samples.len(),
                s.which
            ));
        }
    }
    Ok(Some(warnings))
}

fn collect_hint(metric: &str) -> &'static str {
    match metric {
        "server_cpu" => {
            " (it needs `server_processes = true` under [collect] and a throwaway server)"
        }
        "wal_bytes_per_tx" | "wal_fpi_per_tx" | "blocks_read_per_tx" => {
            " (it needs `server_stats = true` under [collect])"
        }
        _ => "",
    }
}

/// Refuses (or with `force`, warns about) sides that ran different workloads, unless their
/// study sweeps the workload on purpose.
fn workload_check(a: &Side, b: &Side, force: bool) -> Result<Vec<String>, CompareError> {
    let mut warnings = Vec::new();
    let of = |s: &Side| -> Vec<String> {
        let mut w: Vec<String> = s
            .samples
            .iter()
            .filter_map(|r| r.workload.clone())
            .collect();
        w.sort();
        w.dedup();
        w
    };
    let (wa, wb) = (of(a), of(b));
    for (s, w) in [(a, &wa), (b, &wb)] {
        if w.len() > 1 {
            warnings.push(format!("{} mixes workloads: {}", s.which, w.join("; ")));
        }
    }
    if !wa.is_empty() && !wb.is_empty() && wa != wb {
        if swept_workload(a, b) {
            warnings.push(format!(
                "A and B ran different workloads, as their study sweeps them: A ran {}, B ran {}",
                wa.join("; "),
                wb.join("; ")
            ));
            return Ok(warnings);
        }
        if !force {
            return Err(CompareError::DifferentWorkloads {
                a: wa.join("; "),
                b: wb.join("; "),
            });
        }
        warnings.push(format!(
            "different workloads compared (--force): A ran {}, B ran {}",
            wa.join("; "),
            wb.join("; ")
        ));
    }
    Ok(warnings)
}

/// Matrix keys that change what runs (the scripts or their `-D` values).
const WORKLOAD_KEYS: &[&str] = &["scripts", "builtin", "defines"];

/// Whether both sides come from one study whose matrix sweeps the workload: a comparison its
/// author designed (single- against multi-row inserts), not an accident.
fn swept_workload(a: &Side, b: &Side) -> bool {
    let mut all = a.samples.iter().chain(&b.samples);
    let Some(first) = all.next() else {
        return false;
    };
    let sweeps = |p: &serde_json::Value| WORKLOAD_KEYS.iter().any(|k| p.get(*k).is_some());
    sweeps(&first.point) && all.all(|s| s.study == first.study && sweeps(&s.point))
}

/// A side whose runs come from several points treats them as one configuration: say so.
fn mixing(s: &Side) -> Option<String> {
    let points = select::points(s);
    (points.len() > 1).then(|| {
        format!(
            "{} mixes {} points ({}); its runs are taken as repetitions of one configuration",
            s.which,
            points.len(),
            points.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn side(which: &str, study: &str, script: &str, swept: bool) -> Side {
        let samples = (0..4)
            .map(|i| {
                let point = if swept {
                    json!({"scripts": [script]})
                } else {
                    json!({"clients": 1})
                };
                record::Sample::from_doc(&json!({
                    "run_id": i, "study": study, "point": point, "tps": 100.0 + i as f64,
                    "provenance": {"scripts": [{"file": script, "text": script, "weight": 1}]}}))
            })
            .collect();
        Side {
            which: which.into(),
            text: which.into(),
            samples,
        }
    }

    fn tps() -> Vec<&'static Metric> {
        vec![metric::find("tps").unwrap()]
    }

    #[test]
    fn metric_lists_are_split_deduplicated_and_never_empty() {
        let names =
            |v: &[&str]| requested(Some(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()));
        let got: Vec<&str> = names(&["tps,p99", "tps", "avg"])
            .unwrap()
            .iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(got, ["tps", "p99", "latency_avg"]);
        assert!(names(&[""]).is_err());
        assert!(names(&["tps,nope"])
            .unwrap_err()
            .to_string()
            .contains("unknown metric \"nope\""));
        assert_eq!(requested(None).unwrap().len(), metric::DEFAULT.len());
    }

    #[test]
    fn different_workloads_refused_across_studies_allowed_when_swept() {
        let (a, b) = (
            side("A", "s", "a.sql", false),
            side("B", "t", "b.sql", false),
        );
        let e = compare_sides(&a, &b, &tps(), true, false).unwrap_err();
        assert!(matches!(e, CompareError::DifferentWorkloads { .. }), "{e}");
        let c = compare_sides(&a, &b, &tps(), true, true).unwrap();
        assert!(c.warnings[0].contains("--force"), "{:?}", c.warnings);
        let (a, b) = (side("A", "s", "a.sql", true), side("B", "s", "b.sql", true));
        let c = compare_sides(&a, &b, &tps(), true, false).unwrap();
        assert!(
            c.warnings[0].contains("as their study sweeps them"),
            "{:?}",
            c.warnings
        );
        let b = side("B", "other", "b.sql", true);
        assert!(compare_sides(&a, &b, &tps(), true, false).is_err());
    }
}
