//! One metric compared: each side's figures (median with its confidence interval, range,
//! spread), the change and the Mann–Whitney verdict — a row of compare's table, and the
//! latency verdict of each changed plan (`plan_changes`).

use serde::Serialize;

use crate::mann_whitney::{self, Method};
use crate::median_ci::{median, median_ci, Ci};
use crate::metric::Metric;

/// What `compare` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// p < alpha: the change is shown.
    Significant,
    /// p >= alpha: shown as `~` (no difference shown).
    NotSignificant,
    /// No outcome with these run counts could reach p < alpha.
    TooFewRuns,
}

/// One side's figures for one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub n: usize,
    pub median: f64,
    pub ci: Option<Ci>,
    pub min: f64,
    pub max: f64,
    /// coefficient of variation across the runs, % (population, as the study's table)
    pub cv_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub metric: Metric,
    pub a: Figures,
    pub b: Figures,
    /// (median B − median A) / median A, %; `None` when A's median is 0
    pub change_pct: Option<f64>,
    pub p_value: f64,
    pub u: f64,
    pub method: Method,
    pub verdict: Verdict,
    /// with [`Verdict::TooFewRuns`]: runs needed on each side
    pub runs_needed: Option<usize>,
}

fn figures(xs: &[f64], confidence: f64) -> Option<Figures> {
    let (_, min, max, cv_pct) = pgrig_results::summary::spread(xs);
    Some(Figures {
        n: xs.len(),
        median: median(xs)?,
        ci: median_ci(xs, confidence),
        min,
        max,
        cv_pct,
    })
}

/// The comparison of two samples of metric `m`'s values (a row of the table; also each changed
/// plan's client times in `plan_changes`).
pub fn row_of(m: &Metric, xa: &[f64], xb: &[f64], alpha: f64, confidence: f64) -> Option<Row> {
    let (xa, xb) = (xa.to_vec(), xb.to_vec());
    let test = mann_whitney::test(&xa, &xb)?;
    let (fa, fb) = (figures(&xa, confidence)?, figures(&xb, confidence)?);
    let change_pct = (fa.median != 0.0).then(|| 100.0 * (fb.median - fa.median) / fa.median);
    let too_few = mann_whitney::min_p(xa.len(), xb.len()) >= alpha;
    let verdict = if too_few {
        Verdict::TooFewRuns
    } else if test.p < alpha {
        Verdict::Significant
    } else {
        Verdict::NotSignificant
    };
    Some(Row {
        metric: *m,
        a: fa,
        b: fb,
        change_pct,
        p_value: test.p,
        u: test.u,
        method: test.method,
        verdict,
        runs_needed: too_few.then(|| mann_whitney::runs_needed(alpha)),
    })
}
