//! Query runs (`workload = "query"`, a `query` section per run): each query's plan from its
//! representative execution (`nodes`), and a study's per-point figures — speedup and efficiency
//! come from `pgrig_results::query_summary::figures`, the one definition of them.

use pgrig_results::view::{PlanNodeView, QueryView};
use serde_json::Value;

use crate::model::{PlanNode, QueryPlan, QueryPoint};

use pgrig_results::plans::representative;

fn node(n: &PlanNodeView) -> PlanNode {
    // as EXPLAIN's text format names it: `Parallel Seq Scan`
    let kind = match (n.node_type.as_deref().unwrap_or("?"), n.parallel_aware) {
        (k, Some(true)) => format!("Parallel {k}"),
        (k, _) => k.to_string(),
    };
    let label = match &n.relation {
        Some(r) => format!("{kind} on {r}"),
        None => kind,
    };
    PlanNode {
        id: n.id.unwrap_or(0),
        depth: n.depth.unwrap_or(0) as u32,
        label,
        inclusive_ms: n.inclusive_ms.unwrap_or(0.0),
        self_ms: n.self_ms.unwrap_or(0.0),
        rows: n.rows_total.unwrap_or(0.0),
        loops: n.loops.unwrap_or(0.0),
        est_rows: n.plan_rows.unwrap_or(0.0),
        q_error: n.q_error,
    }
}

/// Each query of a run with its representative plan (empty for script runs).
pub fn plans(queries: &[QueryView]) -> Vec<QueryPlan> {
    queries
        .iter()
        .map(|q| {
            let rep = representative(q);
            QueryPlan {
                name: q.name.clone().unwrap_or_else(|| "query".into()),
                client_ms: rep.as_ref().and_then(|(e, _)| e.client_ms),
                fingerprint: rep
                    .as_ref()
                    .filter(|(_, nodes)| !nodes.is_empty())
                    .map(|(_, nodes)| pgrig_results::plans::fingerprint(nodes))
                    .unwrap_or_default(),
                text: rep
                    .as_ref()
                    .map(|(_, nodes)| pgrig_results::plans::plan_text(nodes))
                    .unwrap_or_default(),
                nodes: rep
                    .map(|(_, nodes)| nodes.iter().map(node).collect())
                    .unwrap_or_default(),
                client_times: pgrig_results::plans::client_times(q),
                planning_times: pgrig_results::plans::planning_times(q),
            }
        })
        .collect()
}

/// The per-point figures of a study's run documents (empty without query runs).
pub fn points(docs: &[Value]) -> Vec<QueryPoint> {
    pgrig_results::query_summary::figures(docs)
        .into_iter()
        .map(|f| QueryPoint {
            query: f.query,
            target: f.target,
            rest: f.rest,
            degree: f.degree.map(|d| d as f64),
            median_ms: f.median_ms,
            speedup: f.speedup,
            ideal: f.ideal,
            efficiency: f.efficiency,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exec(ms: f64, ok: bool, scan_ms: f64) -> Value {
        json!({"ok": ok, "client_ms": ms, "server": {"nodes": [
            {"id": 0, "depth": 0, "node_type": "Seq Scan", "relation": "public.t",
             "inclusive_ms": scan_ms, "self_ms": scan_ms, "rows_total": 5, "loops": 1}]}})
    }

    #[test]
    fn the_plan_shown_is_the_median_successful_execution_else_the_plan_execution() {
        let v = json!({"query": {"queries": [
            {"name": "q1", "executions": [exec(30.0, true, 3.0), exec(10.0, true, 1.0),
                exec(20.0, true, 2.0), exec(1.0, false, 9.0)]},
            {"name": "q2", "executions": [{"ok": true, "client_ms": 5.0, "server": null}],
             "plan_execution": {"server": {"nodes": [{"node_type": "Seq Scan",
                 "parallel_aware": true, "inclusive_ms": 4.0}]}}},
            {"name": "q3", "executions": []}]}});
        let p = plans(&pgrig_results::RunView::of(&v).queries);
        assert_eq!((p[0].client_ms, p[0].nodes[0].self_ms), (Some(20.0), 2.0));
        assert_eq!(p[0].nodes[0].label, "Seq Scan on public.t");
        assert_eq!(p[1].nodes[0].inclusive_ms, 4.0);
        assert_eq!(p[1].nodes[0].label, "Parallel Seq Scan");
        assert!(p[2].nodes.is_empty());
        assert!(plans(&pgrig_results::RunView::of(&json!({"tps": 1.0})).queries).is_empty());
    }
}
