//! The optimizer's view of a query study: how far the planner's row estimates were from the
//! truth at each point (the q-error of every plan node, 1 = exact: median, 90th percentile and
//! worst), the worst node with its plan context, and the queries whose plan changed from one
//! point to the next (the plan's fingerprint: its shape, not its figures).

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Scale, Series, Table};
use crate::metric::Metric;
use crate::model::{PlanNode, Run};

use super::{by_point, representative, values_label};

/// Median, 90th percentile and maximum of some q-errors.
fn spread(mut q: Vec<f64>) -> Option<(f64, f64, f64)> {
    if q.is_empty() {
        return None;
    }
    q.sort_by(f64::total_cmp);
    let at = |p: f64| q[((p * (q.len() - 1) as f64).round() as usize).min(q.len() - 1)];
    Some((at(0.5), at(0.9), q[q.len() - 1]))
}

/// The q-error chart of a query study (none when no plan recorded estimates).
pub fn cardinality(id: &str, runs: &[Run], swept: &[String], metric: &Metric) -> Option<Chart> {
    let points: Vec<(String, &Run)> = by_point(runs)
        .iter()
        .map(|(_, g)| representative(g, metric))
        .map(|r| (values_label(r, swept), r))
        .collect();
    let mut table = Table::new(
        "each query's worst-estimated plan node per point: estimated and actual rows (over all loops), q-error",
        &["point", "query", "worst node", "estimated", "actual", "q-error"],
    );
    let names = ["median", "p90", "worst"];
    let mut series: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: format!("{n} q-error"),
            points: Vec::new(),
        })
        .collect();
    let mut cats = Vec::new();
    for (label, r) in &points {
        let nodes: Vec<&PlanNode> = r.query.iter().flat_map(|q| &q.nodes).collect();
        let Some((med, p90, max)) = spread(nodes.iter().filter_map(|n| n.q_error).collect()) else {
            continue;
        };
        let x = cats.len() as f64;
        cats.push(label.clone());
        for (s, v) in series.iter_mut().zip([med, p90, max]) {
            s.points.push(Pt::new(x, v));
        }
        for q in &r.query {
            let worst = q
                .nodes
                .iter()
                .filter(|n| n.q_error.is_some())
                .max_by(|a, b| {
                    a.q_error
                        .unwrap_or(1.0)
                        .total_cmp(&b.q_error.unwrap_or(1.0))
                });
            if let Some(n) = worst {
                table.push(
                    x,
                    vec![
                        label.clone(),
                        q.name.clone(),
                        n.label.clone(),
                        fmt(n.est_rows * n.loops.max(1.0)),
                        fmt(n.rows),
                        fmt(n.q_error.unwrap_or(1.0)),
                    ],
                );
            }
        }
    }
    if cats.is_empty() {
        return None;
    }
    Some(Chart {
        id: format!("{id}-q-error"),
        title: "How far the planner's row estimates were from the truth".into(),
        desc: "q-error of every plan node at each point (max(estimated/actual, actual/estimated), 1 = exact; log scale): median, 90th percentile and worst".into(),
        kind: Kind::Bars,
        x: Axis::categories(if swept.is_empty() { "point".to_string() } else { swept.join(" · ") }, cats),
        y: Axis {
            scale: Scale::Log,
            ..Axis::linear("q-error (×)")
        },
        series,
        bands: Vec::new(),
        notes: plan_changes(&points),
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}

/// For each query, the points where its plan differs from the previous point's, with the
/// client time before and after.
fn plan_changes(points: &[(String, &Run)]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for q in points.iter().flat_map(|(_, r)| &r.query) {
        if !names.contains(&q.name.as_str()) {
            names.push(&q.name);
        }
    }
    for name in names {
        let mut prev: Option<(&str, &str, Option<f64>)> = None;
        for (label, r) in points {
            let Some(q) = r
                .query
                .iter()
                .find(|q| q.name == name && !q.fingerprint.is_empty())
            else {
                continue;
            };
            if let Some((pl, pf, pms)) = prev {
                if pf != q.fingerprint {
                    let ms =
                        |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{} ms", fmt(v)));
                    notes.push(format!(
                        "query {name}: the plan changed from {pl} to {label} ({} → {})",
                        ms(pms),
                        ms(q.client_ms)
                    ));
                }
            }
            prev = Some((label, &q.fingerprint, q.client_ms));
        }
    }
    notes
}
