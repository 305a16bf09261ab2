//! A query run as stored: the record's `query` section (per query: every measured execution
//! with the client's time, the server's figures and the EXPLAIN JSON, the separate plan
//! execution, and a summary with the I/O-bound flag) next to the keys every run has (`study`,
//! `point`, `tps` as executions per second, `latency_ms` over the executions' client times,
//! collectors). Field list: docs/study.md, "Query studies".

use serde::Serialize;
use serde_json::{json, Value};

use super::exec::Failure;
use super::explain::ServerFigures;
use crate::plan::{PlannedRun, Point};
use crate::record::{point_json, Collected};
use crate::store::RunRecord;
use crate::summary::spread;

/// One execution of a query.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionRecord {
    /// 1-based among the run's measured executions of this query (0: the plan execution).
    pub n: u32,
    pub ok: bool,
    pub client_ms: f64,
    /// Rows the client received (1 under EXPLAIN: the plan).
    pub rows: u64,
    pub error: Option<FailureRecord>,
    /// From EXPLAIN ANALYZE, when the execution ran under it.
    pub server: Option<ServerFigures>,
    /// The EXPLAIN (FORMAT JSON) output as the server gave it.
    pub explain: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureRecord {
    pub sqlstate: Option<String>,
    pub message: String,
    pub timed_out: bool,
}

impl From<Failure> for FailureRecord {
    fn from(f: Failure) -> Self {
        FailureRecord {
            sqlstate: f.sqlstate,
            message: f.message,
            timed_out: f.timed_out,
        }
    }
}

/// One query of a run.
#[derive(Debug, Clone)]
pub struct QueryRecord {
    pub name: String,
    pub sql: String,
    pub executions: Vec<ExecutionRecord>,
    /// `explain = "separate"`: the extra execution under EXPLAIN ANALYZE.
    pub plan_execution: Option<ExecutionRecord>,
}

/// How the run was measured (the `query` section's own keys).
pub struct Setup<'a> {
    pub explain: &'a str,
    pub cache: &'a str,
    pub timeout_ms: Option<u64>,
    pub warmup_executions: u32,
    pub parallel_workers: Option<u32>,
    pub parallel_tables: &'a [String],
    /// What the measuring session SET (isolation, parallel settings).
    pub session_settings: &'a [(String, String)],
}

impl QueryRecord {
    /// The executions the server's figures come from: the measured ones under EXPLAIN, else
    /// the plan execution.
    fn explained(&self) -> Vec<&ServerFigures> {
        let each: Vec<&ServerFigures> = self
            .executions
            .iter()
            .filter_map(|e| e.server.as_ref())
            .collect();
        match each.is_empty() {
            true => self
                .plan_execution
                .iter()
                .filter_map(|e| e.server.as_ref())
                .collect(),
            false => each,
        }
    }

    /// Medians and sums over the executions; `io_bound` when shared reads outnumber hits.
    pub fn summary(&self) -> Value {
        let ok: Vec<&ExecutionRecord> = self.executions.iter().filter(|e| e.ok).collect();
        let client: Vec<f64> = ok.iter().map(|e| e.client_ms).collect();
        let (median, min, max, cv) = spread(&client);
        let server = self.explained();
        let med = |f: &dyn Fn(&ServerFigures) -> f64| -> Option<f64> {
            let xs: Vec<f64> = server.iter().map(|s| f(s)).collect();
            (!xs.is_empty()).then(|| spread(&xs).0)
        };
        let sum = |f: &dyn Fn(&ServerFigures) -> u64| -> u64 { server.iter().map(|s| f(s)).sum() };
        let (hit, read) = (sum(&|s| s.shared.hit), sum(&|s| s.shared.read));
        json!({
            "executions": self.executions.len(),
            "failed": self.executions.len() - ok.len(),
            "timed_out": self.executions.iter().filter(|e| e.error.as_ref().is_some_and(|f| f.timed_out)).count(),
            "client_ms": {"median": median, "min": min, "max": max, "cv": cv},
            "server_ms": med(&|s| s.execution_ms),
            "planning_ms": med(&|s| s.planning_ms),
            "workers_planned": med(&|s| s.workers_planned as f64),
            "workers_launched": med(&|s| s.workers_launched as f64),
            "shared_hit": hit,
            "shared_read": read,
            "shared_dirtied": sum(&|s| s.shared.dirtied),
            "temp_read": sum(&|s| s.temp.read),
            "temp_written": sum(&|s| s.temp.written),
            "jit_ms": server.iter().any(|s| s.jit.is_some()).then(|| med(&|s| s.jit.as_ref().map_or(0.0, |j| j.total_ms))).flatten(),
            "io_bound": read > hit,
        })
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "sql": self.sql,
            "executions": self.executions,
            "plan_execution": self.plan_execution,
            "summary": self.summary(),
        })
    }
}

/// The stored record of one query run.
#[allow(clippy::too_many_arguments)]
pub fn build(
    study: &str,
    target: &str,
    point: &Point,
    run: &PlannedRun,
    setup: &Setup,
    queries: &[QueryRecord],
    c: &Collected,
    server_version: &str,
    provenance: Value,
    (started_unix, finished_unix): (f64, f64),
) -> RunRecord {
    let ok: Vec<f64> = queries
        .iter()
        .flat_map(|q| q.executions.iter().filter(|e| e.ok).map(|e| e.client_ms))
        .collect();
    let measured_s: f64 = queries
        .iter()
        .flat_map(|q| q.executions.iter().map(|e| e.client_ms / 1000.0))
        .sum();
    let tps = if measured_s > 0.0 {
        ok.len() as f64 / measured_s
    } else {
        0.0
    };
    let result = json!({
        "study": study,
        "target": target,
        "workload": "query",
        "point": point_json(point),
        "point_index": point.index,
        "run_index": run.index,
        "repetition": run.repetition,
        "round": run.round,
        "tps": tps,
        "duration_s": measured_s,
        "latency_ms": latency(&ok),
        "aborted_clients": 0,
        "server_cpus": point.workload.server_cpus,
        "settings": point.settings.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "server_version": server_version,
        "server_stats": c.server_stats,
        "wait_events": c.wait_events,
        "server_processes": c.server_processes,
        "relation_sizes": c.relation_sizes,
        "query": {
            "explain": setup.explain,
            "cache": setup.cache,
            "timeout_ms": setup.timeout_ms,
            "warmup_executions": setup.warmup_executions,
            "parallel_workers": setup.parallel_workers,
            "parallel_tables": setup.parallel_tables,
            "session_settings": setup.session_settings.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "queries": queries.iter().map(QueryRecord::to_json).collect::<Vec<_>>(),
        },
    });
    RunRecord {
        run_index: run.index,
        point: point_json(point),
        repetition: run.repetition,
        round: run.round,
        target: target.to_string(),
        started_unix,
        finished_unix,
        tps,
        result,
        provenance,
        series: Value::Null,
        histogram: Value::Null,
    }
}

/// The client times as the `latency_ms` every run has (null without a successful execution).
fn latency(ms: &[f64]) -> Value {
    if ms.is_empty() {
        return Value::Null;
    }
    let mut s = ms.to_vec();
    s.sort_by(f64::total_cmp);
    let pct = |p: f64| s[((p / 100.0 * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / s.len() as f64;
    json!({"mean": mean, "stddev": var.sqrt(), "min": s[0], "p50": pct(50.0), "p90": pct(90.0),
           "p95": pct(95.0), "p99": pct(99.0), "p99_9": pct(99.9), "max": s[s.len() - 1]})
}
