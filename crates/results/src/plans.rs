//! The optimizer's view of stored plans: a plan's fingerprint (its shape — node types, join
//! order and types, relations, index choices, parallelism; not costs, times or row counts), so
//! two executions with the same fingerprint ran the same plan, and the distribution of its
//! nodes' cardinality errors (q-error, 1 = the estimate was exact).

use crate::view::{ExecutionView, PlanNodeView, QueryView};

/// The execution whose plan stands for a query in a run: the successful one with server
/// figures whose client time is the median, else the plan execution (`explain = "separate"`).
pub fn representative(q: &QueryView) -> Option<(ExecutionView, Vec<PlanNodeView>)> {
    let mut with: Vec<(ExecutionView, Vec<PlanNodeView>)> = q
        .executions()
        .into_iter()
        .filter(|e| e.ok == Some(true))
        .filter_map(|e| e.nodes().map(|n| (e, n)))
        .collect();
    with.sort_by(|a, b| {
        let x = a.0.client_ms.unwrap_or(0.0);
        x.total_cmp(&b.0.client_ms.unwrap_or(0.0))
    });
    match with.len() {
        0 => q.plan_execution().and_then(|p| p.nodes().map(|n| (p, n))),
        n => Some(with.swap_remove((n - 1) / 2)),
    }
}

/// The client times (ms) of a query's successful measured executions.
pub fn client_times(q: &QueryView) -> Vec<f64> {
    q.executions()
        .into_iter()
        .filter(|e| e.ok == Some(true))
        .filter_map(|e| e.client_ms)
        .collect()
}

/// The planning times (ms, EXPLAIN's "Planning Time") of a query's successful executions
/// that have server figures.
pub fn planning_times(q: &QueryView) -> Vec<f64> {
    q.executions()
        .into_iter()
        .filter(|e| e.ok == Some(true))
        .filter_map(|e| e.server?.get("planning_ms")?.as_f64())
        .collect()
}

/// A plan as indented text, one line per node, depth-first: node type (with its join type),
/// relation, index, then the planner's estimated rows against the actual rows (both over all
/// loops, as the q-error compares them).
pub fn plan_text(nodes: &[PlanNodeView]) -> Vec<String> {
    nodes.iter().map(node_line).collect()
}

fn node_line(n: &PlanNodeView) -> String {
    let depth = n.depth.unwrap_or(0) as usize;
    let mut kind = n.node_type.clone().unwrap_or_else(|| "?".into());
    if n.parallel_aware == Some(true) {
        kind = format!("Parallel {kind}");
    }
    let mut line = format!(
        "{}{kind}",
        if depth == 0 {
            String::new()
        } else {
            format!("{}-> ", "   ".repeat(depth - 1))
        }
    );
    if let Some(j) = n.join_type.as_deref().filter(|j| !j.is_empty()) {
        line.push_str(&format!(" ({j})"));
    }
    if let Some(r) = &n.relation {
        line.push_str(&format!(" on {r}"));
    }
    if let Some(i) = &n.index {
        line.push_str(&format!(" using {i}"));
    }
    let loops = n.loops.unwrap_or(1.0).max(1.0);
    let est = n.plan_rows.map(|r| format!("{:.0}", r * loops));
    let actual = n.rows_total.map(|r| format!("{r:.0}"));
    line.push_str(&format!(
        "  [est {} · actual {}{}]",
        est.as_deref().unwrap_or("?"),
        actual.as_deref().unwrap_or("?"),
        if loops > 1.0 {
            format!(" · loops {loops:.0}")
        } else {
            String::new()
        }
    ));
    line
}

/// FNV-1a (64 bits) of the plan's shape, as 16 hex digits: the same on every build and machine.
pub fn fingerprint(nodes: &[PlanNodeView]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for n in nodes {
        let shape = format!(
            "{}|{}|{}|{}|{}|{}\n",
            n.depth.unwrap_or(0),
            n.node_type.as_deref().unwrap_or("?"),
            n.relation.as_deref().unwrap_or(""),
            n.index.as_deref().unwrap_or(""),
            n.join_type.as_deref().unwrap_or(""),
            n.parallel_aware.unwrap_or(false)
        );
        for b in shape.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

/// Median, 90th percentile and maximum of the nodes' q-errors (nodes without one left out).
pub fn q_error_spread(nodes: &[PlanNodeView]) -> Option<(f64, f64, f64)> {
    let mut q: Vec<f64> = nodes.iter().filter_map(|n| n.q_error).collect();
    if q.is_empty() {
        return None;
    }
    q.sort_by(f64::total_cmp);
    let at = |p: f64| q[((p * (q.len() - 1) as f64).round() as usize).min(q.len() - 1)];
    Some((at(0.5), at(0.9), q[q.len() - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(depth: u64, t: &str, rel: Option<&str>, q: f64) -> PlanNodeView {
        PlanNodeView {
            depth: Some(depth),
            node_type: Some(t.into()),
            relation: rel.map(str::to_string),
            q_error: Some(q),
            ..PlanNodeView::default()
        }
    }

    #[test]
    fn the_fingerprint_follows_the_shape_not_the_figures() {
        let a = [
            node(0, "Hash Join", None, 3.0),
            node(1, "Seq Scan", Some("t"), 1.0),
        ];
        let mut b = a.clone();
        b[0].q_error = Some(90.0);
        b[1].self_ms = Some(5.0);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        b[0].node_type = Some("Nested Loop".into());
        assert_ne!(fingerprint(&a), fingerprint(&b));
        let mut c = a.clone();
        c[1].index = Some("t_pkey".into());
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }

    #[test]
    fn plan_text_indents_children_and_shows_estimates_against_actual_rows() {
        let mut join = node(0, "Nested Loop", None, 2.0);
        join.join_type = Some("Inner".into());
        join.plan_rows = Some(10.0);
        join.rows_total = Some(20.0);
        let mut scan = node(1, "Index Scan", Some("public.t"), 1.0);
        scan.index = Some("t_pkey".into());
        scan.plan_rows = Some(1.0);
        scan.loops = Some(20.0);
        scan.rows_total = Some(20.0);
        assert_eq!(
            plan_text(&[join, scan]),
            [
                "Nested Loop (Inner)  [est 10 · actual 20]",
                "-> Index Scan on public.t using t_pkey  [est 20 · actual 20 · loops 20]"
            ]
        );
    }

    #[test]
    fn q_error_spread_is_median_p90_and_max() {
        let nodes: Vec<PlanNodeView> = (1..=10).map(|i| node(0, "x", None, i as f64)).collect();
        assert_eq!(q_error_spread(&nodes), Some((6.0, 9.0, 10.0)));
        assert_eq!(q_error_spread(&[]), None);
    }
}
