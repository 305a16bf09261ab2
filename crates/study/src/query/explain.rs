//! `EXPLAIN (ANALYZE, BUFFERS, VERBOSE, SETTINGS, WAL, FORMAT JSON)` output turned into the
//! figures a query study stores ([`ServerFigures`]): execution and planning time, planned and
//! launched workers, buffers, temp I/O, WAL, JIT, and every plan node flattened with its
//! parent, inclusive and self time. Pure: JSON in, figures out. Keys follow PostgreSQL 13 to 18
//! (PostgreSQL 16 split the I/O timings per buffer kind, 17 gave JIT a deform time).

use serde::Serialize;
use serde_json::Value;

/// The EXPLAIN options for a server version (`server_version_num`): SETTINGS exists from 12,
/// WAL from 13.
pub fn options(version_num: i32) -> String {
    let mut o = vec!["ANALYZE", "BUFFERS", "VERBOSE"];
    if version_num >= 120000 {
        o.push("SETTINGS");
    }
    if version_num >= 130000 {
        o.push("WAL");
    }
    o.push("FORMAT JSON");
    format!("EXPLAIN ({}) ", o.join(", "))
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Blocks {
    pub hit: u64,
    pub read: u64,
    pub dirtied: u64,
    pub written: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Temp {
    pub read: u64,
    pub written: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Wal {
    pub records: u64,
    pub fpi: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Jit {
    pub functions: u64,
    pub generation_ms: f64,
    pub inlining_ms: f64,
    pub optimization_ms: f64,
    pub emission_ms: f64,
    pub total_ms: f64,
}

/// The q-error of an estimate: max(est/actual, actual/est), each side at least one row (a node
/// that never ran has 0 actual rows, counted as 1).
pub fn q_error(estimated: f64, actual: f64) -> f64 {
    let (e, a) = (estimated.max(1.0), actual.max(1.0));
    (e / a).max(a / e)
}

/// One plan node, in depth-first order.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Node {
    pub id: usize,
    pub parent: Option<usize>,
    pub depth: usize,
    pub node_type: String,
    /// `schema.table` for scans, else null.
    pub relation: Option<String>,
    pub parallel_aware: bool,
    /// As EXPLAIN reports them: per loop.
    pub startup_ms: f64,
    pub total_ms: f64,
    pub rows: f64,
    pub loops: f64,
    /// rows × loops
    pub rows_total: f64,
    /// the planner's estimate of rows per loop (`Plan Rows`)
    pub plan_rows: f64,
    /// cardinality error: max(estimated/actual, actual/estimated) over all loops, each at least
    /// one row (1 = exact)
    pub q_error: f64,
    /// the index a scan used (`Index Name`), else null
    pub index: Option<String>,
    /// a join's type (`Join Type`: Inner, Left, Semi, ...), else null
    pub join_type: Option<String>,
    pub rows_removed_by_filter: f64,
    /// Time in this node and below over the query: total_ms × loops, divided by the
    /// processes that ran the loops concurrently below a Gather.
    pub inclusive_ms: f64,
    /// inclusive_ms less the children's (never below 0).
    pub self_ms: f64,
    pub workers_planned: Option<u64>,
    pub workers_launched: Option<u64>,
    pub shared: Blocks,
    pub temp: Temp,
}

/// What the server says about one execution.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ServerFigures {
    pub execution_ms: f64,
    pub planning_ms: f64,
    /// Summed over the plan's Gather and Gather Merge nodes.
    pub workers_planned: u64,
    pub workers_launched: u64,
    /// The whole plan's buffers (the top node's, which include the workers').
    pub shared: Blocks,
    pub local: Blocks,
    pub temp: Temp,
    /// With track_io_timing on, else null.
    pub io_read_ms: Option<f64>,
    pub io_write_ms: Option<f64>,
    pub wal: Option<Wal>,
    pub jit: Option<Jit>,
    pub nodes: Vec<Node>,
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn blocks(v: &Value, kind: &str) -> Blocks {
    Blocks {
        hit: count(v, &format!("{kind} Hit Blocks")),
        read: count(v, &format!("{kind} Read Blocks")),
        dirtied: count(v, &format!("{kind} Dirtied Blocks")),
        written: count(v, &format!("{kind} Written Blocks")),
    }
}

fn temp(v: &Value) -> Temp {
    Temp {
        read: count(v, "Temp Read Blocks"),
        written: count(v, "Temp Written Blocks"),
    }
}

/// The sum of the keys that are present; None when none is.
fn sum_of(v: &Value, keys: &[&str]) -> Option<f64> {
    let found: Vec<f64> = keys
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_f64))
        .collect();
    (!found.is_empty()).then(|| found.iter().sum())
}

/// A JIT timing: a number, or (PostgreSQL 17's generation) an object with a `Total`.
fn jit_ms(v: &Value, key: &str) -> f64 {
    match v.get(key) {
        Some(Value::Object(o)) => o.get("Total").and_then(Value::as_f64).unwrap_or(0.0),
        Some(x) => x.as_f64().unwrap_or(0.0),
        None => 0.0,
    }
}

fn jit(top: &Value) -> Option<Jit> {
    let j = top.get("JIT")?;
    let t = j.get("Timing").cloned().unwrap_or(Value::Null);
    Some(Jit {
        functions: count(j, "Functions"),
        generation_ms: jit_ms(&t, "Generation"),
        inlining_ms: jit_ms(&t, "Inlining"),
        optimization_ms: jit_ms(&t, "Optimization"),
        emission_ms: jit_ms(&t, "Emission"),
        total_ms: jit_ms(&t, "Total"),
    })
}

/// The figures of one EXPLAIN (FORMAT JSON) result (`[{"Plan": …, "Execution Time": …}]`).
pub fn figures(explain: &Value) -> Result<ServerFigures, String> {
    let top = explain
        .get(0)
        .filter(|t| t.get("Plan").is_some())
        .ok_or("EXPLAIN output without a plan")?;
    let plan = &top["Plan"];
    let mut nodes = Vec::new();
    flatten(plan, None, 0, 1.0, &mut nodes);
    let (workers_planned, workers_launched) = nodes.iter().fold((0, 0), |(p, l), n| {
        (
            p + n.workers_planned.unwrap_or(0),
            l + n.workers_launched.unwrap_or(0),
        )
    });
    Ok(ServerFigures {
        execution_ms: num(top, "Execution Time"),
        planning_ms: num(top, "Planning Time"),
        workers_planned,
        workers_launched,
        shared: blocks(plan, "Shared"),
        local: blocks(plan, "Local"),
        temp: temp(plan),
        io_read_ms: sum_of(
            plan,
            &[
                "I/O Read Time",
                "Shared I/O Read Time",
                "Local I/O Read Time",
                "Temp I/O Read Time",
            ],
        ),
        io_write_ms: sum_of(
            plan,
            &[
                "I/O Write Time",
                "Shared I/O Write Time",
                "Local I/O Write Time",
                "Temp I/O Write Time",
            ],
        ),
        wal: plan.get("WAL Records").map(|_| Wal {
            records: count(plan, "WAL Records"),
            fpi: count(plan, "WAL FPI"),
            bytes: count(plan, "WAL Bytes"),
        }),
        jit: jit(top),
        nodes,
    })
}

/// Appends `node` and its children depth-first; `concurrency` is how many processes run the
/// loops of this part of the plan at once (1 above a Gather).
fn flatten(
    node: &Value,
    parent: Option<usize>,
    depth: usize,
    concurrency: f64,
    out: &mut Vec<Node>,
) {
    let id = out.len();
    let loops = num(node, "Actual Loops");
    let total_ms = num(node, "Actual Total Time");
    let relation = node.get("Relation Name").and_then(Value::as_str).map(|r| {
        match node.get("Schema").and_then(Value::as_str) {
            Some(s) => format!("{s}.{r}"),
            None => r.to_string(),
        }
    });
    let launched = node.get("Workers Launched").and_then(Value::as_u64);
    let inclusive_ms = total_ms * loops / concurrency.max(1.0);
    out.push(Node {
        id,
        parent,
        depth,
        node_type: node["Node Type"].as_str().unwrap_or("?").to_string(),
        relation,
        parallel_aware: node["Parallel Aware"].as_bool().unwrap_or(false),
        startup_ms: num(node, "Actual Startup Time"),
        total_ms,
        rows: num(node, "Actual Rows"),
        loops,
        rows_total: num(node, "Actual Rows") * loops,
        plan_rows: num(node, "Plan Rows"),
        q_error: q_error(
            num(node, "Plan Rows") * loops,
            num(node, "Actual Rows") * loops,
        ),
        index: node
            .get("Index Name")
            .and_then(Value::as_str)
            .map(str::to_string),
        join_type: node
            .get("Join Type")
            .and_then(Value::as_str)
            .map(str::to_string),
        rows_removed_by_filter: num(node, "Rows Removed by Filter"),
        inclusive_ms,
        self_ms: inclusive_ms,
        workers_planned: node.get("Workers Planned").and_then(Value::as_u64),
        workers_launched: launched,
        shared: blocks(node, "Shared"),
        temp: temp(node),
    });
    // below a Gather the leader (unless it only gathers) and the launched workers run at once
    let below = match launched {
        Some(w) => (w + 1) as f64,
        None => concurrency,
    };
    let mut children_ms = 0.0;
    for child in node
        .get("Plans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let at = out.len();
        flatten(child, Some(id), depth + 1, below, out);
        children_ms += out[at].inclusive_ms;
    }
    out[id].self_ms = (inclusive_ms - children_ms).max(0.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_error_is_symmetric_and_counts_zero_rows_as_one() {
        assert_eq!(q_error(100.0, 10.0), 10.0);
        assert_eq!(q_error(10.0, 100.0), 10.0);
        assert_eq!(q_error(0.0, 0.0), 1.0);
        assert_eq!(q_error(5.0, 0.0), 5.0);
    }

    /// A parallel count(*) as PostgreSQL 15 prints it (trimmed).
    const PARALLEL: &str = r#"[{"Plan": {"Node Type": "Aggregate", "Strategy": "Plain",
      "Partial Mode": "Finalize", "Parallel Aware": false, "Actual Startup Time": 40.0,
      "Actual Total Time": 41.0, "Actual Rows": 1, "Actual Loops": 1,
      "Shared Hit Blocks": 100, "Shared Read Blocks": 1540, "Shared Dirtied Blocks": 0,
      "Shared Written Blocks": 0, "Temp Read Blocks": 0, "Temp Written Blocks": 0,
      "WAL Records": 0, "WAL FPI": 0, "WAL Bytes": 0,
      "Plans": [{"Node Type": "Gather", "Parent Relationship": "Outer", "Parallel Aware": false,
        "Actual Startup Time": 1.0, "Actual Total Time": 40.5, "Actual Rows": 3,
        "Actual Loops": 1, "Workers Planned": 2, "Workers Launched": 2,
        "Shared Hit Blocks": 100, "Shared Read Blocks": 1540,
        "Plans": [{"Node Type": "Aggregate", "Parallel Aware": false,
          "Actual Startup Time": 38.0, "Actual Total Time": 38.0, "Actual Rows": 1,
          "Actual Loops": 3,
          "Plans": [{"Node Type": "Seq Scan", "Parallel Aware": true,
            "Relation Name": "pgbench_accounts", "Schema": "public", "Alias": "pgbench_accounts",
            "Plan Rows": 41667,
            "Actual Startup Time": 0.1, "Actual Total Time": 30.0, "Actual Rows": 33333,
            "Actual Loops": 3, "Rows Removed by Filter": 0,
            "Shared Hit Blocks": 100, "Shared Read Blocks": 1540}]}]}]},
      "Planning Time": 0.2, "Triggers": [],
      "JIT": {"Functions": 4, "Timing": {"Generation": {"Deform": 0.1, "Total": 0.5},
              "Inlining": 0.0, "Optimization": 0.3, "Emission": 4.2, "Total": 5.0}},
      "Execution Time": 41.3}]"#;

    #[test]
    fn parallel_plan_gives_workers_buffers_and_node_times() {
        let f = figures(&serde_json::from_str(PARALLEL).unwrap()).unwrap();
        assert_eq!((f.workers_planned, f.workers_launched), (2, 2));
        assert_eq!(f.execution_ms, 41.3);
        assert_eq!(f.shared.read, 1540);
        assert_eq!(f.wal, Some(Wal::default()));
        assert_eq!(f.jit.as_ref().unwrap().generation_ms, 0.5);
        assert_eq!(f.jit.unwrap().total_ms, 5.0);
        let types: Vec<&str> = f.nodes.iter().map(|n| n.node_type.as_str()).collect();
        assert_eq!(types, ["Aggregate", "Gather", "Aggregate", "Seq Scan"]);
        let scan = &f.nodes[3];
        assert_eq!(scan.parent, Some(2));
        assert_eq!(scan.relation.as_deref(), Some("public.pgbench_accounts"));
        assert_eq!(scan.rows_total, 99999.0);
        // 41667 estimated per loop against 33333: q-error 1.25 (over the three loops alike)
        assert!((scan.q_error - 41667.0 / 33333.0).abs() < 1e-12);
        assert_eq!(
            f.nodes[0].q_error, 1.0,
            "no estimate and one row: both count as one"
        );
        // three processes ran the scan's three loops at once: 30 ms of wall time
        assert_eq!(scan.inclusive_ms, 30.0);
        assert_eq!(f.nodes[2].self_ms, 8.0);
        assert_eq!(f.nodes[1].self_ms, 2.5);
    }

    #[test]
    fn options_follow_the_server_version() {
        assert_eq!(
            options(110000),
            "EXPLAIN (ANALYZE, BUFFERS, VERBOSE, FORMAT JSON) "
        );
        assert!(options(150000).contains("SETTINGS, WAL, FORMAT JSON"));
        assert!(figures(&serde_json::json!([])).is_err());
    }
}
