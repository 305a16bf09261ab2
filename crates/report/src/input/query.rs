//! Query runs (`workload = "query"`, a `query` section per run): each query's plan from its
//! representative execution (`nodes`), and a study's per-point figures — speedup and efficiency
//! come from `pgrig_results::query_summary::figures`, the one definition of them.

use serde_json::Value;

use crate::model::{PlanNode, QueryPlan, QueryPoint};

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The successful execution with server figures whose client time is the median (else the
/// plan execution): the one whose plan is shown.
fn representative(q: &Value) -> Option<&Value> {
    let mut with: Vec<&Value> = list(&q["executions"])
        .iter()
        .filter(|e| e["ok"] == true && e["server"]["nodes"].is_array())
        .collect();
    with.sort_by(|a, b| {
        let x = a["client_ms"].as_f64().unwrap_or(0.0);
        x.total_cmp(&b["client_ms"].as_f64().unwrap_or(0.0))
    });
    match with.len() {
        0 => Some(&q["plan_execution"]).filter(|p| p["server"]["nodes"].is_array()),
        n => Some(with[(n - 1) / 2]),
    }
}

fn node(n: &Value) -> PlanNode {
    // as EXPLAIN's text format names it: `Parallel Seq Scan`
    let kind = match (n["node_type"].as_str().unwrap_or("?"), &n["parallel_aware"]) {
        (k, Value::Bool(true)) => format!("Parallel {k}"),
        (k, _) => k.to_string(),
    };
    let label = match n["relation"].as_str() {
        Some(r) => format!("{kind} on {r}"),
        None => kind,
    };
    let f = |k: &str| n[k].as_f64().unwrap_or(0.0);
    PlanNode {
        id: n["id"].as_u64().unwrap_or(0),
        depth: n["depth"].as_u64().unwrap_or(0) as u32,
        label,
        inclusive_ms: f("inclusive_ms"),
        self_ms: f("self_ms"),
        rows: f("rows_total"),
        loops: f("loops"),
    }
}

/// Each query of a run document with its representative plan (empty for script runs).
pub fn plans(v: &Value) -> Vec<QueryPlan> {
    list(&v["query"]["queries"])
        .iter()
        .map(|q| {
            let rep = representative(q);
            QueryPlan {
                name: q["name"].as_str().unwrap_or("query").to_string(),
                client_ms: rep.and_then(|e| e["client_ms"].as_f64()),
                nodes: rep
                    .map(|e| list(&e["server"]["nodes"]).iter().map(node).collect())
                    .unwrap_or_default(),
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
        let p = plans(&v);
        assert_eq!((p[0].client_ms, p[0].nodes[0].self_ms), (Some(20.0), 2.0));
        assert_eq!(p[0].nodes[0].label, "Seq Scan on public.t");
        assert_eq!(p[1].nodes[0].inclusive_ms, 4.0);
        assert_eq!(p[1].nodes[0].label, "Parallel Seq Scan");
        assert!(p[2].nodes.is_empty());
        assert!(plans(&json!({"tps": 1.0})).is_empty());
    }
}
