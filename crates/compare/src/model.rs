//! The comparison as data: per metric the median of each side with its confidence interval,
//! the spread, the change and the Mann–Whitney verdict; per side the runs and their flags.
//! Built from plain samples (no store), so the HTML report can build the same tables.

use serde::Serialize;

use crate::metric::Metric;
use crate::record::{self, Sample};

pub use crate::row::{row_of, Figures, Row, Verdict};

/// A side as the tables introduce it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideInfo {
    /// the selection as written
    pub selection: String,
    pub run_ids: Vec<i64>,
    /// `study: point` of each distinct point among the runs
    pub points: Vec<String>,
    /// the invalid-run flags on this side
    pub flags: Vec<Flag>,
}

/// A flag and the runs (ids) carrying it; `high-spread` is the side's and lists all its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    pub flag: String,
    pub runs: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub alpha: f64,
    /// the confidence level asked of the median intervals
    pub confidence: f64,
    pub a: SideInfo,
    pub b: SideInfo,
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
    /// query runs: the queries whose plan differs between A and B, regressions first
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_changes: Vec<crate::plan_changes::PlanChange>,
    /// query runs: how many queries both sides ran (whose plans were compared)
    #[serde(skip_serializing_if = "is_zero")]
    pub plan_queries: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One side's input: its selection, the points its runs come from, and the runs.
pub struct Input<'a> {
    pub selection: &'a str,
    pub points: Vec<String>,
    pub samples: &'a [Sample],
}

/// Compares `a` with `b` on `metrics` (each must be recorded by at least one run per side).
pub fn compare(
    a: &Input,
    b: &Input,
    metrics: &[&Metric],
    alpha: f64,
    confidence: f64,
) -> Comparison {
    let rows: Vec<Row> = metrics
        .iter()
        .filter_map(|m| row(m, a.samples, b.samples, alpha, confidence))
        .collect();
    Comparison {
        alpha,
        confidence,
        a: side_info(a),
        b: side_info(b),
        rows,
        warnings: Vec::new(),
        plan_changes: Vec::new(),
        plan_queries: 0,
    }
}

fn values(samples: &[Sample], m: &Metric) -> Vec<f64> {
    samples
        .iter()
        .filter_map(|s| s.values.get(m.name).copied())
        .collect()
}

fn row(m: &Metric, a: &[Sample], b: &[Sample], alpha: f64, confidence: f64) -> Option<Row> {
    row_of(m, &values(a, m), &values(b, m), alpha, confidence)
}

fn side_info(input: &Input) -> SideInfo {
    let mut flags: Vec<Flag> = Vec::new();
    for s in input.samples {
        for f in &s.flags {
            match flags.iter_mut().find(|g| g.flag == *f) {
                Some(g) => g.runs.push(s.run_id),
                None => flags.push(Flag {
                    flag: f.to_string(),
                    runs: vec![s.run_id],
                }),
            }
        }
    }
    let tps: Vec<f64> = input
        .samples
        .iter()
        .filter_map(|s| s.values.get("tps").copied())
        .collect();
    if tps.len() > 1 && pgrig_results::summary::spread(&tps).3 > record::HIGH_CV_PCT {
        let ids = input.samples.iter().map(|s| s.run_id).collect();
        flags.push(Flag {
            flag: record::HIGH_SPREAD.to_string(),
            runs: ids,
        });
    }
    SideInfo {
        selection: input.selection.to_string(),
        run_ids: input.samples.iter().map(|s| s.run_id).collect(),
        points: input.points.clone(),
        flags,
    }
}
