//! One run of a query point: a session with the point's parallel degree (and the tables'
//! storage parameter), warm-up executions before the first round, then every query's measured
//! executions — cold ones after a restart and a dropped page cache — with the separate plan
//! execution when asked, the collectors around them, and the stored record. A failing or
//! timed-out execution is recorded with the server's message and the run goes on.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use pgrig_engine::StopHandle;

use super::exec::{Execution, QuerySession};
use super::record::{build, ExecutionRecord, QueryRecord, Setup};
use super::{cache, collectors, explain, parallel};
use crate::error::StudyError;
use crate::managed::Managed;
use crate::plan::{Plan, PlannedRun, Point};
use crate::spec::Study;
use crate::store::RunRecord;
use crate::workload::{CacheState, ExplainMode, QuerySource};

/// What a query run needs from the study runner.
pub struct QueryRun<'a> {
    pub study: &'a Study,
    pub plan: &'a Plan,
    pub base_dir: &'a Path,
    /// The host's description (provenance).
    pub host: &'a Value,
    /// `version` and non-default `settings` of the server (provenance).
    pub server: &'a Value,
    pub stop: &'a StopHandle,
    pub interrupted: &'a dyn Fn() -> bool,
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Runs one planned run of a query point and returns its record (the caller stores it).
pub fn run(
    q: &QueryRun,
    m: &mut Managed,
    point: &Point,
    run: &PlannedRun,
) -> Result<RunRecord, StudyError> {
    let w = &point.workload;
    let sources = w.query_sources(q.base_dir).map_err(StudyError::Refused)?;
    let (mut s, session_settings) = session(q, m, point)?;
    let tables = match w.parallel_workers {
        Some(d) => parallel::set_tables(q.study, &mut s, point, &sources, d)?,
        None => Vec::new(),
    };
    let server_version = s.server_version();
    if run.first_round {
        for src in &sources {
            for _ in 0..w.warmup_count() {
                s.execute(&text(src, &s, w.explain_mode()), explained(w), q.stop);
                check_stop(q)?;
            }
        }
    }
    let t0 = now_unix();
    let measured = collectors::around(m, &q.study.spec.collect, w.cache_state(), |m| {
        measure(q, m, &mut s, point, &sources)
    });
    let t1 = now_unix();
    parallel::reset(&mut s, &tables);
    let (queries, collected) = measured?;
    let setup = Setup {
        explain: w.explain.as_deref().unwrap_or("each"),
        cache: w.cache.as_deref().unwrap_or("warm"),
        timeout_ms: w.timeout_ms(),
        warmup_executions: w.warmup_count(),
        parallel_workers: w.parallel_workers,
        parallel_tables: &tables,
        session_settings: &session_settings,
    };
    let mut provenance = provenance(q, m, point, run, &sources);
    if !collected.profiles.is_null() {
        provenance["profiles"] = collected.profiles.clone();
    }
    Ok(build(
        &q.study.spec.name,
        &m.name,
        point,
        run,
        &setup,
        &queries,
        &collected,
        &server_version,
        provenance,
        (t0, t1),
    ))
}

/// A session with the point's isolation and parallel degree, and the settings it made.
fn session(
    q: &QueryRun,
    m: &Managed,
    point: &Point,
) -> Result<(QuerySession, Vec<(String, String)>), StudyError> {
    let w = &point.workload;
    let timeout = w.timeout_ms().map(Duration::from_millis);
    let mut s = QuerySession::connect(
        &m.endpoint.conninfo,
        &format!("target \"{}\"", m.name),
        timeout,
    )?;
    if let Some(level) = &w.isolation {
        s.set("default_transaction_isolation", level)?;
    }
    let mut made = Vec::new();
    if let Some(level) = &w.isolation {
        made.push(("default_transaction_isolation".into(), level.clone()));
    }
    if let Some(d) = w.parallel_workers {
        let target = &q.plan.targets[point.target].settings;
        let study_sets = |name: &str| point.settings.iter().chain(target).any(|(k, _)| k == name);
        made.extend(parallel::set_session(&mut s, d, &study_sets)?);
    }
    Ok((s, made))
}

/// Every measured execution (and plan execution) of every query.
fn measure(
    q: &QueryRun,
    m: &mut Managed,
    s: &mut QuerySession,
    point: &Point,
    sources: &[QuerySource],
) -> Result<Vec<QueryRecord>, StudyError> {
    let w = &point.workload;
    let mut out = Vec::new();
    for src in sources {
        let mut executions = Vec::new();
        for n in 1..=w.execution_count() {
            executions.push(once(q, m, s, point, src, n, w.explain_mode())?);
        }
        let plan_execution = match w.explain_mode() {
            ExplainMode::Separate => Some(once(q, m, s, point, src, 0, ExplainMode::Each)?),
            _ => None,
        };
        out.push(QueryRecord {
            name: src.name.clone(),
            sql: src.sql.clone(),
            executions,
            plan_execution,
        });
    }
    Ok(out)
}

/// One execution (`n` 0: the plan execution), cold first when asked; a lost session is
/// replaced for the next one.
fn once(
    q: &QueryRun,
    m: &mut Managed,
    s: &mut QuerySession,
    point: &Point,
    src: &QuerySource,
    n: u32,
    mode: ExplainMode,
) -> Result<ExecutionRecord, StudyError> {
    if point.workload.cache_state() == CacheState::Cold {
        s.close();
        cache::make_cold(m)?;
        *s = session(q, m, point)?.0;
    } else if s.is_lost() {
        *s = session(q, m, point)?.0;
    }
    let e = s.execute(&text(src, s, mode), mode == ExplainMode::Each, q.stop);
    check_stop(q)?;
    Ok(record(n, e))
}

/// The text sent: the query, under EXPLAIN when its figures are captured.
fn text(src: &QuerySource, s: &QuerySession, mode: ExplainMode) -> String {
    match mode {
        ExplainMode::Each => format!("{}{}", explain::options(s.version_num()), src.sql),
        _ => src.sql.clone(),
    }
}

fn explained(w: &crate::workload::WorkloadSpec) -> bool {
    w.explain_mode() == ExplainMode::Each
}

fn check_stop(q: &QueryRun) -> Result<(), StudyError> {
    match (q.interrupted)() || q.stop.requested() {
        true => Err(StudyError::Interrupted),
        false => Ok(()),
    }
}

fn record(n: u32, e: Execution) -> ExecutionRecord {
    let plan: Option<Value> = e
        .explain
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok());
    let server = plan.as_ref().and_then(|p| explain::figures(p).ok());
    ExecutionRecord {
        n,
        ok: e.failure.is_none(),
        client_ms: e.client_ms,
        rows: e.rows,
        error: e.failure.map(Into::into),
        server,
        explain: plan,
    }
}

fn provenance(
    q: &QueryRun,
    m: &Managed,
    point: &Point,
    run: &PlannedRun,
    sources: &[QuerySource],
) -> Value {
    let origin = crate::record::Origin {
        study: q.study,
        plan: q.plan,
        base_dir: q.base_dir,
        host: q.host,
        server: q.server,
    };
    let mut p = crate::record::provenance(&origin, m, point, run);
    let queries = sources
        .iter()
        .map(|s| json!({"name": s.name, "sql": s.sql}));
    p.insert("queries".into(), Value::Array(queries.collect()));
    Value::Object(p)
}
