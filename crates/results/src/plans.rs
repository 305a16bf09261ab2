//! The optimizer's view of stored plans: a plan's fingerprint (its shape — node types, join
//! order and types, relations, index choices, parallelism; not costs, times or row counts), so
//! two executions with the same fingerprint ran the same plan, and the distribution of its
//! nodes' cardinality errors (q-error, 1 = the estimate was exact).

use crate::view::PlanNodeView;

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
    fn q_error_spread_is_median_p90_and_max() {
        let nodes: Vec<PlanNodeView> = (1..=10).map(|i| node(0, "x", None, i as f64)).collect();
        assert_eq!(q_error_spread(&nodes), Some((6.0, 9.0, 10.0)));
        assert_eq!(q_error_spread(&[]), None);
    }
}
