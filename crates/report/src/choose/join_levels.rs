//! The optimizer's errors by join level (the Join Order Benchmark's view): for every join node
//! of every query's plan, the number of base relations it joins (the relation scans below it)
//! and its q-error; per point, the median and worst q-error at each level. Estimates usually
//! get worse as joins stack up, because each join multiplies the errors below it.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Scale, Series, Table};
use crate::metric::Metric;
use crate::model::{PlanNode, Run};

use super::{by_point, representative, values_label};

fn is_join(n: &PlanNode) -> bool {
    ["Nested Loop", "Hash Join", "Merge Join"]
        .iter()
        .any(|k| n.label.contains(k))
}

/// A relation scan names its relation (`Seq Scan on public.t`).
fn is_scan(n: &PlanNode) -> bool {
    n.label.contains(" on ")
}

/// (relations joined, q-error) of each join node of a plan (nodes in pre-order with depths).
pub fn join_levels(nodes: &[PlanNode]) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let (true, Some(q)) = (is_join(n), n.q_error) else {
            continue;
        };
        let below = nodes[i + 1..]
            .iter()
            .take_while(|m| m.depth > n.depth)
            .filter(|m| is_scan(m))
            .count();
        if below >= 2 {
            out.push((below, q));
        }
    }
    out
}

fn median_max(mut q: Vec<f64>) -> (f64, f64) {
    q.sort_by(f64::total_cmp);
    (q[(q.len() - 1) / 2], q[q.len() - 1])
}

/// One line per point: the median q-error of its join nodes at each join level (with the worst
/// in the table). None when no plan has a join with an estimate.
pub fn by_join_level(id: &str, runs: &[Run], swept: &[String], metric: &Metric) -> Option<Chart> {
    let mut table = Table::new(
        "q-error of the join nodes by the number of relations they join, per point: joins, median, worst",
        &["point", "relations joined", "join nodes", "median q-error", "worst q-error"],
    );
    let mut series = Vec::new();
    let mut top = 0;
    for (_, group) in by_point(runs) {
        let r = representative(&group, metric);
        let label = values_label(r, swept);
        let mut levels: Vec<Vec<f64>> = Vec::new();
        for (level, q) in r.query.iter().flat_map(|q| join_levels(&q.nodes)) {
            if levels.len() <= level {
                levels.resize(level + 1, Vec::new());
            }
            levels[level].push(q);
        }
        let mut points = Vec::new();
        for (level, qs) in levels
            .into_iter()
            .enumerate()
            .filter(|(_, q)| !q.is_empty())
        {
            let n = qs.len();
            let (med, max) = median_max(qs);
            top = top.max(level);
            points.push(Pt::new(level as f64, med));
            let row = vec![
                label.clone(),
                level.to_string(),
                n.to_string(),
                fmt(med),
                fmt(max),
            ];
            table.push(level as f64, row);
        }
        if !points.is_empty() {
            series.push(Series {
                name: label,
                points,
            });
        }
    }
    if series.is_empty() || top < 2 {
        return None;
    }
    Some(Chart {
        id: format!("{id}-q-error-joins"),
        title: "Estimates as joins stack up".into(),
        desc: "median q-error of the join nodes against the number of base relations each joins (1 = exact; log scale), per point".into(),
        kind: Kind::Lines,
        x: Axis::linear("relations joined"),
        y: Axis {
            scale: Scale::Log,
            ..Axis::linear("median q-error (×)")
        },
        series,
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(depth: u32, label: &str, q: Option<f64>) -> PlanNode {
        PlanNode {
            depth,
            label: label.into(),
            q_error: q,
            ..PlanNode::default()
        }
    }

    #[test]
    fn a_join_counts_the_relation_scans_below_it() {
        // Hash Join (3 relations)
        //   Nested Loop (2)
        //     Seq Scan on a
        //     Index Scan on b
        //   Hash
        //     Seq Scan on c
        let plan = [
            n(0, "Hash Join", Some(40.0)),
            n(1, "Nested Loop", Some(2.0)),
            n(2, "Seq Scan on public.a", Some(1.0)),
            n(2, "Index Scan on public.b", Some(1.5)),
            n(1, "Hash", Some(1.0)),
            n(2, "Seq Scan on public.c", Some(1.0)),
        ];
        assert_eq!(join_levels(&plan), vec![(3, 40.0), (2, 2.0)]);
    }

    #[test]
    fn joins_without_an_estimate_or_two_relations_are_left_out() {
        let plan = [
            n(0, "Nested Loop", None),
            n(1, "Seq Scan on public.a", Some(1.0)),
            n(1, "Seq Scan on public.b", Some(1.0)),
            n(0, "Merge Join", Some(3.0)),
            n(1, "Function Scan", Some(1.0)),
            n(1, "Seq Scan on public.b", Some(1.0)),
        ];
        assert!(join_levels(&plan).is_empty());
    }
}
