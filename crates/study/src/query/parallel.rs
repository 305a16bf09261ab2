//! The parallel degree of a query point made real: the `parallel_workers` storage parameter on
//! the tables the queries scan (from a plain `EXPLAIN (VERBOSE, FORMAT JSON)`, or the
//! `parallel_tables` the study names), `max_parallel_workers_per_gather` and, when lower,
//! `max_parallel_workers` of the measuring session, which also zeroes `parallel_setup_cost` and
//! `parallel_tuple_cost` (unless the study sets them) so that the planner takes the parallel
//! plan even for a small table; on a throwaway server `max_worker_processes` is raised (a
//! restart) when the degree needs more worker processes than it has.

use serde_json::Value;

use super::exec::QuerySession;
use crate::db::{ident, lit};
use crate::error::StudyError;
use crate::managed::Managed;
use crate::plan::Point;
use crate::spec::Study;
use crate::workload::QuerySource;

/// Worker slots kept for other background workers (the logical replication launcher, …).
const OTHER_WORKERS: u32 = 2;

/// Raises `max_worker_processes` of a throwaway server when the point's degree needs it;
/// refuses on an external server that has too few.
pub fn prepare_server(m: &mut Managed, point: &Point) -> Result<(), StudyError> {
    let Some(degree) = point.workload.parallel_workers.filter(|d| *d > 0) else {
        return Ok(());
    };
    let have: u32 = m
        .admin()?
        .scalar("SHOW max_worker_processes")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let need = degree + OTHER_WORKERS;
    if have >= need {
        return Ok(());
    }
    if !m.is_local() {
        return Err(StudyError::Refused(format!(
            "target \"{}\": parallel_workers = {degree} needs max_worker_processes of at least {need} (it is {have}); \
             raise it there (a restart) or use a throwaway server",
            m.name
        )));
    }
    m.apply_settings(&[("max_worker_processes".into(), need.to_string())])
}

/// Sets the tables' storage parameter for `degree`; returns the tables (`schema.table`).
pub fn set_tables(
    study: &Study,
    s: &mut QuerySession,
    point: &Point,
    sources: &[QuerySource],
    degree: u32,
) -> Result<Vec<String>, StudyError> {
    let tables = match &point.workload.parallel_tables {
        Some(named) => named_tables(study, s, named)?,
        None => scanned_tables(s, sources)?,
    };
    for t in &tables {
        s.query(&format!(
            "ALTER TABLE {} SET (parallel_workers = {degree})",
            quoted(t)
        ))?;
    }
    Ok(tables)
}

/// Planner costs that would keep a small table's scan serial; the session zeroes them for a
/// degree above 0 unless the study sets them (the original study patched the server instead).
const FORCING: &[&str] = &["parallel_setup_cost", "parallel_tuple_cost"];

/// The session's `max_parallel_workers_per_gather` (and `max_parallel_workers` when lower, and
/// the [`FORCING`] costs the study does not set); returns the settings it made.
pub fn set_session(
    s: &mut QuerySession,
    degree: u32,
    study_sets: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, String)>, StudyError> {
    let mut made = vec![(
        "max_parallel_workers_per_gather".to_string(),
        degree.to_string(),
    )];
    let max: u32 = s
        .query("SHOW max_parallel_workers")?
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if max < degree {
        made.push(("max_parallel_workers".into(), degree.to_string()));
    }
    if degree > 0 {
        for cost in FORCING.iter().filter(|c| !study_sets(c)) {
            made.push((cost.to_string(), "0".into()));
        }
    }
    for (name, value) in &made {
        s.set(name, value)?;
    }
    Ok(made)
}

/// `schema.table` (as stored) quoted for SQL. Names with a dot in them are not split well;
/// pgrig's own lookups never produce a schema with one.
fn quoted(t: &str) -> String {
    match t.split_once('.') {
        Some((schema, table)) => format!("{}.{}", ident(schema), ident(table)),
        None => ident(t),
    }
}

/// Takes the storage parameter off the tables again (best effort).
pub fn reset(s: &mut QuerySession, tables: &[String]) {
    for t in tables {
        let _ = s.query(&format!(
            "ALTER TABLE {} RESET (parallel_workers)",
            quoted(t)
        ));
    }
}

/// The named tables, each as `schema.table`; one that does not exist is an error at the
/// `parallel_tables` value of the study file.
fn named_tables(
    study: &Study,
    s: &mut QuerySession,
    named: &[String],
) -> Result<Vec<String>, StudyError> {
    let mut out = Vec::new();
    for name in named {
        let found = s.query(&format!(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.oid = to_regclass({}) AND c.relkind IN ('r', 'm')",
            lit(name)
        ))?;
        match found.first().and_then(|r| r.first().cloned().flatten()) {
            Some(t) => out.push(t),
            None => {
                let at = match study.spec.matrix.get("parallel_tables") {
                    Some((_, v)) => v.span().start,
                    None => study.spec.workload_value_offset("parallel_tables"),
                };
                return Err(study.error_at(
                    at,
                    format!("workload `parallel_tables`: no table \"{name}\" on the target (a table or materialized view, optionally schema-qualified)"),
                ));
            }
        }
    }
    Ok(out)
}

/// The tables the queries' plans scan (an EXPLAIN without ANALYZE runs nothing).
fn scanned_tables(
    s: &mut QuerySession,
    sources: &[QuerySource],
) -> Result<Vec<String>, StudyError> {
    let mut out: Vec<String> = Vec::new();
    for q in sources {
        // a query that cannot be planned fails in its executions, where it is recorded
        let Ok(rows) = s.query(&format!("EXPLAIN (VERBOSE, FORMAT JSON) {}", q.sql)) else {
            continue;
        };
        let text = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_default();
        let plan: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let mut found = Vec::new();
        relations(&plan[0]["Plan"], &mut found);
        for t in found {
            let kind = s.query(&format!(
                "SELECT relkind FROM pg_class WHERE oid = {}::regclass",
                lit(&quoted(&t))
            ))?;
            let table = matches!(
                kind.first()
                    .and_then(|r| r.first().cloned().flatten())
                    .as_deref(),
                Some("r" | "m")
            );
            if table && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// `schema.table` of every node of `node` that scans a relation.
fn relations(node: &Value, out: &mut Vec<String>) {
    if let (Some(r), Some(schema)) = (
        node.get("Relation Name").and_then(Value::as_str),
        node.get("Schema").and_then(Value::as_str),
    ) {
        out.push(format!("{schema}.{r}"));
    }
    for child in node
        .get("Plans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        relations(child, out);
    }
}
