//! Plan changes between two sides of a query study: per query whose plan fingerprint differs
//! (`pgrig_results::plans::fingerprint`), both plans as indented text and the change of its
//! client time with the same verdict as compare's metrics ([`crate::row::row_of`]: medians
//! with confidence intervals, Mann–Whitney), queries sorted by regression first. `pgrig compare`
//! lists them under its table (`render::plans`); the report (`pgrig-report`'s plan-change
//! section) draws them.

use serde::Serialize;

use pgrig_results::plans::{client_times, fingerprint, plan_text, planning_times, representative};
use pgrig_results::view::QueryView;

use crate::median_ci::median;
use crate::metric::{self, Metric};
use crate::row::{row_of, Row, Verdict};

/// One query's plan and timings on one side (one run, or a side's runs pooled).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QuerySide {
    pub name: String,
    /// the plan's shape; empty when no execution had a plan
    pub fingerprint: String,
    /// the plan as indented text
    pub plan: Vec<String>,
    /// client time (ms) of each successful measured execution
    pub client_ms: Vec<f64>,
    /// planning time (ms) of each successful execution with server figures
    pub planning_ms: Vec<f64>,
}

impl QuerySide {
    /// A stored query of one run: the plan of its representative execution.
    pub fn of(q: &QueryView) -> QuerySide {
        let rep = representative(q);
        let nodes = rep.map(|(_, n)| n).unwrap_or_default();
        QuerySide {
            name: q.name.clone().unwrap_or_else(|| "query".into()),
            fingerprint: if nodes.is_empty() {
                String::new()
            } else {
                fingerprint(&nodes)
            },
            plan: plan_text(&nodes),
            client_ms: client_times(q),
            planning_ms: planning_times(q),
        }
    }
}

/// One query whose plan differs between A and B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanChange {
    pub query: String,
    pub a: QuerySide,
    pub b: QuerySide,
    /// the client time's comparison (metric `p50`: medians of the executions' client times);
    /// `None` when a side has no successful execution
    pub latency: Option<Row>,
}

impl PlanChange {
    /// `+` slower (a regression), `-` faster, `~` no difference shown, `?` too few executions.
    pub fn sign(&self) -> char {
        match &self.latency {
            Some(r) if r.verdict == Verdict::Significant => {
                if r.b.median > r.a.median {
                    '+'
                } else {
                    '-'
                }
            }
            Some(r) if r.verdict == Verdict::NotSignificant => '~',
            _ => '?',
        }
    }

    /// Sort key, larger first: significant slowdowns by size, then the undecided, then speedups.
    fn rank(&self) -> f64 {
        match &self.latency {
            Some(r) if r.verdict == Verdict::Significant => r.change_pct.unwrap_or(0.0),
            _ => 0.0,
        }
    }
}

/// The queries of several runs pooled per name (first-seen order): every execution's times,
/// and the plan most runs had (ties: the first run's).
pub fn pool(runs: &[Vec<QuerySide>]) -> Vec<QuerySide> {
    let mut names: Vec<&str> = Vec::new();
    for q in runs.iter().flatten() {
        if !names.contains(&q.name.as_str()) {
            names.push(&q.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let all: Vec<&QuerySide> = runs.iter().flatten().filter(|q| q.name == name).collect();
            let count = |f: &str| all.iter().filter(|q| q.fingerprint == f).count();
            let mut plan: Option<&QuerySide> = None;
            for q in all.iter().filter(|q| !q.fingerprint.is_empty()) {
                if plan.is_none_or(|p| count(&q.fingerprint) > count(&p.fingerprint)) {
                    plan = Some(q);
                }
            }
            let mut out = plan.or(all.first().copied()).cloned().unwrap_or_default();
            out.client_ms = all.iter().flat_map(|q| q.client_ms.clone()).collect();
            out.planning_ms = all.iter().flat_map(|q| q.planning_ms.clone()).collect();
            out
        })
        .collect()
}

/// The queries whose plan changed from `a` to `b` (pooled sides), regressions first.
pub fn changes(a: &[QuerySide], b: &[QuerySide], alpha: f64, confidence: f64) -> Vec<PlanChange> {
    let p50: &Metric = metric::find("p50").expect("the catalogue has p50");
    let mut out: Vec<PlanChange> = a
        .iter()
        .filter_map(|qa| {
            let qb = b.iter().find(|q| q.name == qa.name)?;
            let differ = !qa.fingerprint.is_empty()
                && !qb.fingerprint.is_empty()
                && qa.fingerprint != qb.fingerprint;
            differ.then(|| PlanChange {
                query: qa.name.clone(),
                latency: row_of(p50, &qa.client_ms, &qb.client_ms, alpha, confidence),
                a: qa.clone(),
                b: qb.clone(),
            })
        })
        .collect();
    out.sort_by(|x, y| y.rank().total_cmp(&x.rank()).then(x.query.cmp(&y.query)));
    out
}

/// Median planning time of a side, ms.
pub fn median_planning(q: &QuerySide) -> Option<f64> {
    median(&q.planning_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, fp: &str, ms: &[f64]) -> QuerySide {
        QuerySide {
            name: name.into(),
            fingerprint: fp.into(),
            plan: vec![format!("{fp} plan")],
            client_ms: ms.to_vec(),
            planning_ms: vec![0.1],
        }
    }

    #[test]
    fn changed_plans_only_regressions_first() {
        let fast: Vec<f64> = (0..10).map(|i| 1.0 + i as f64 * 0.01).collect();
        let slow: Vec<f64> = fast.iter().map(|x| x * 3.0).collect();
        let a = [
            side("q1", "x", &fast),
            side("q2", "y", &slow),
            side("q3", "z", &fast),
        ];
        let b = [
            side("q1", "x2", &slow),
            side("q2", "y2", &fast),
            side("q3", "z", &slow),
        ];
        let c = changes(&a, &b, 0.05, 0.95);
        let names: Vec<&str> = c.iter().map(|c| c.query.as_str()).collect();
        assert_eq!(names, ["q1", "q2"]);
        assert_eq!((c[0].sign(), c[1].sign()), ('+', '-'));
        let text = crate::render::plans::render_text(&c, 3);
        assert!(text.starts_with("Plan changes (2 of 3 queries;"), "{text}");
        assert!(crate::render::plans::render_text(&[], 3)
            .contains("each of the 3 queries ran the same plan"));
        assert!(text.contains("+ q1: median client time"), "{text}");
        assert!(
            text.contains("x plan") && text.contains("| x2 plan"),
            "{text}"
        );
    }

    #[test]
    fn pooling_keeps_the_plan_most_runs_had_and_every_execution() {
        let runs = vec![
            vec![side("q", "a", &[1.0])],
            vec![side("q", "b", &[2.0])],
            vec![side("q", "b", &[3.0])],
        ];
        let p = pool(&runs);
        assert_eq!(p[0].fingerprint, "b");
        assert_eq!(p[0].client_ms, [1.0, 2.0, 3.0]);
    }
}
