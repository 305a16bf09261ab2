//! Runs a study: for each target, start (or connect to) the server; for each point, apply its
//! settings and CPU cores; for each repetition, re-initialise per the policy, warm up, then run
//! its rounds with collectors alongside, storing every finished run in its own transaction.
//! Runs already in the store are never repeated: a repetition whose rounds are all stored is
//! skipped; one that stopped half-way is replayed from its first round (so its data evolves as
//! before) and only the missing rounds are stored.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use pgrig_engine::config::{BenchConfig, Duration as BenchDuration, ScriptSource};
use pgrig_engine::document::RunDocument;
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::Sink;
use pgrig_engine::StopHandle;

use crate::checked::Checked;
use crate::collect::host::host_info;
use crate::collect::sampler::{proc_usage, WaitSampler};
use crate::collect::server_seconds::{SecondsSink, ServerSeconds};
use crate::collect::stats::{relation_sizes, StatsSnapshot};
use crate::dataset::Dataset;
use crate::db::Db;
use crate::error::StudyError;
use crate::managed::{cpu_list, CpuPick, Managed};
use crate::plan::{Plan, PlannedRun, Point};
use crate::record::{build, scripts_json, Collected};
use crate::spec::{CollectSpec, Study};
use crate::store::Store;

/// Where the runner reports what it does (the CLI prints it).
pub trait Reporter {
    fn info(&self, text: &str);
    /// A run finished and was stored: `done` of `total` runs of the study are stored now.
    fn run_done(&self, done: usize, total: usize, eta: Option<Duration>, line: &str);
}

/// How the caller can stop a study: the engine's handle, and a flag polled between runs.
pub struct Control {
    pub stop: StopHandle,
    pub interrupted: Box<dyn Fn() -> bool>,
}

/// What a study run did.
#[derive(Debug)]
pub struct Outcome {
    pub study_id: i64,
    pub total: usize,
    pub ran: usize,
    pub already_stored: usize,
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

struct Ctx<'a> {
    study: &'a Study,
    plan: &'a Plan,
    dataset: &'a Dataset,
    /// Each point's scripts.
    scripts: &'a [Vec<ScriptSource>],
    /// Each point's native workload.
    natives: &'a [Option<crate::workload::NativePoint>],
    /// Each point's sysbench Lua script.
    luas: &'a [Option<crate::workload::LuaPoint>],
    base_dir: &'a Path,
    sink: Arc<dyn Sink>,
    reporter: &'a dyn Reporter,
    control: &'a Control,
    host: Value,
}

/// What is stored so far, and where new runs go.
struct Progress<'s> {
    store: &'s mut Store,
    finished: BTreeSet<usize>,
    outcome: Outcome,
    started: Instant,
}

/// One target's server and what is in force on it.
struct TargetState {
    managed: Managed,
    data_ready: bool,
    /// the native dataset loaded (its identity), if any
    native_data: Option<String>,
    /// the sysbench script's dataset prepared (its identity), if any
    lua_data: Option<String>,
    current_point: Option<usize>,
    /// The statistics settings of the last ANALYZE since the data was created (`analyze`).
    analyzed: Option<Vec<String>>,
    /// The server's non-default settings (recorded with every run of the current point).
    settings: Value,
}

/// Runs (or resumes) the checked study, storing into `store`.
pub fn run_study(
    checked: &Checked,
    store: &mut Store,
    sink: Arc<dyn Sink>,
    reporter: &dyn Reporter,
    control: &Control,
) -> Result<Outcome, StudyError> {
    let plan = &checked.plan;
    let mut progress = resume(&checked.study, plan, store, reporter)?;
    if progress.outcome.already_stored == progress.outcome.total {
        return Ok(progress.outcome);
    }
    let ctx = Ctx {
        study: &checked.study,
        plan,
        dataset: &checked.dataset,
        scripts: &checked.scripts,
        natives: &checked.natives,
        luas: &checked.luas,
        base_dir: &checked.base_dir,
        sink,
        reporter,
        control,
        host: host_info(),
    };
    for ti in 0..plan.targets.len() {
        run_target(&ctx, &mut progress, ti)?;
    }
    Ok(progress.outcome)
}

/// The study's entry in the store and the runs it already holds (said when there are some).
fn resume<'s>(
    study: &Study,
    plan: &Plan,
    store: &'s mut Store,
    reporter: &dyn Reporter,
) -> Result<Progress<'s>, StudyError> {
    // the study text is kept with the results (the store masks its passwords)
    let study_id = store.study_id(&study.spec.name, &study.file, &study.text)?;
    let finished = store.finished(study_id)?;
    let total = plan.runs.len();
    let already_stored = plan
        .runs
        .iter()
        .filter(|r| finished.contains(&r.index))
        .count();
    if already_stored == total {
        reporter.info(&format!(
            "all {total} runs of study \"{}\" are already stored",
            study.spec.name
        ));
    } else if already_stored > 0 {
        reporter.info(&format!(
            "resuming: {already_stored} of {total} runs already stored"
        ));
    }
    Ok(Progress {
        store,
        finished,
        outcome: Outcome {
            study_id,
            total,
            ran: 0,
            already_stored,
        },
        started: Instant::now(),
    })
}

/// The runs of target `ti` not stored yet, on its server, group by group.
fn run_target(ctx: &Ctx, progress: &mut Progress, ti: usize) -> Result<(), StudyError> {
    let plan = ctx.plan;
    let target = &plan.targets[ti];
    let runs: Vec<&PlannedRun> = plan
        .runs
        .iter()
        .filter(|r| plan.points[r.point].target == ti)
        .collect();
    if runs.iter().all(|r| progress.finished.contains(&r.index)) {
        return Ok(());
    }
    if target.url.is_none() {
        let version = match target.server_version {
            Some((major, _)) => format!(" (PostgreSQL {major})"),
            None => String::new(),
        };
        ctx.reporter.info(&format!(
            "starting a throwaway PostgreSQL server for target \"{}\"{version}",
            target.name
        ));
    }
    let max_clients = plan
        .points
        .iter()
        .map(|p| p.workload.clients)
        .max()
        .unwrap_or(1);
    let mut state = TargetState {
        managed: Managed::open(target, max_clients)?,
        data_ready: false,
        native_data: None,
        lua_data: None,
        current_point: None,
        analyzed: None,
        settings: Value::Null,
    };
    for group in runs.chunk_by(|a, b| a.point == b.point && a.repetition == b.repetition) {
        if group.iter().all(|r| progress.finished.contains(&r.index)) {
            continue;
        }
        if (ctx.control.interrupted)() {
            return Err(StudyError::Interrupted);
        }
        run_repetition(ctx, progress, &mut state, group)?;
    }
    state.managed.close();
    Ok(())
}

/// One repetition of a point: its settings and CPUs, the data (re-)initialised when due, the
/// warm-up, then its rounds.
fn run_repetition(
    ctx: &Ctx,
    progress: &mut Progress,
    state: &mut TargetState,
    group: &[&PlannedRun],
) -> Result<(), StudyError> {
    let first = group[0];
    let point = &ctx.plan.points[first.point];
    if state.current_point != Some(point.index) {
        state.managed.apply_settings(&point.settings)?;
        state.managed.set_cpus(point.workload.server_cpus)?;
        crate::query::prepare_point(&mut state.managed, point)?;
        state.settings = non_default_settings(&state.managed)?;
        state.current_point = Some(point.index);
    }
    if first.reinit || !state.data_ready {
        ctx.reporter.info(&format!(
            "initialising the dataset on target \"{}\"",
            state.managed.name
        ));
        ctx.dataset
            .create(&state.managed.endpoint, &*ctx.sink, &ctx.control.stop)?;
        state.data_ready = true;
        state.analyzed = None;
    }
    if let Some(native) = &ctx.natives[first.point] {
        if first.reinit || state.native_data.as_deref() != Some(native.dataset_key.as_str()) {
            load_native(ctx, state, point)?;
            state.native_data = Some(native.dataset_key.clone());
            state.analyzed = None;
        }
    }
    if let Some(lp) = &ctx.luas[first.point] {
        if first.reinit || state.lua_data.as_deref() != Some(lp.dataset_key.as_str()) {
            ctx.reporter.info(&format!(
                "preparing the dataset of {} on target \"{}\"",
                lp.script.display(),
                state.managed.name
            ));
            let replacing = state.lua_data.is_some();
            crate::runner_lua::prepare(&state.managed, point, lp, replacing)?;
            state.lua_data = Some(lp.dataset_key.clone());
            state.analyzed = None;
        }
    }
    if let Some(note) =
        crate::analyze::after_settings(&state.managed, &point.settings, &mut state.analyzed)?
    {
        state.settings["analyze"] = note;
    }
    if point.workload.is_query() {
        // a query study: measured executions instead of benchmark rounds
        return run_queries(ctx, progress, state, group);
    }
    let scripts = &ctx.scripts[first.point];
    let warm = point.workload.warmup_seconds();
    if let (true, Some(lp)) = (warm > 0, &ctx.luas[first.point]) {
        crate::runner_lua::warm_up(&state.managed, point, lp, warm, &ctx.control.stop)?;
    } else if warm > 0 {
        let mut cfg = point_config(ctx, point, scripts, None);
        cfg.duration = BenchDuration::Seconds(warm);
        cfg.report_per_command = false;
        run_bench(ctx, &state.managed, point, cfg, ctx.sink.clone())?;
    }
    for &run in group {
        run_and_store(ctx, progress, state, run, scripts)?;
    }
    Ok(())
}

/// The engine configuration of one of the point's rounds: its scripts or native workload.
fn point_config(
    ctx: &Ctx,
    point: &Point,
    scripts: &[ScriptSource],
    seed: Option<u64>,
) -> BenchConfig {
    let mut cfg = point.workload.bench_config(scripts.to_vec(), seed);
    cfg.native = ctx.natives[point.index]
        .as_ref()
        .map(|n| n.workload.clone());
    cfg
}

/// Loads a native workload's dataset: its cleanup (the tables dropped), then its tables,
/// rows and keys through the parallel loader.
fn load_native(ctx: &Ctx, state: &TargetState, point: &Point) -> Result<(), StudyError> {
    let name = point.workload.workload.as_deref().unwrap_or_default();
    ctx.reporter.info(&format!(
        "loading the {name} dataset on target \"{}\"",
        state.managed.name
    ));
    let native = match point.workload.build_native() {
        Some(Ok(n)) => n,
        Some(Err(m)) => return Err(StudyError::Refused(m)),
        None => return Ok(()),
    };
    let conn = state.managed.endpoint.conn_args(None)?;
    let report = native.load(&conn, true, &*ctx.sink, &ctx.control.stop)?;
    ctx.reporter
        .info(&format!("{name} dataset: {}", report.summary()));
    Ok(())
}

/// A query point's runs: measured executions of its queries, each run stored.
fn run_queries(
    ctx: &Ctx,
    progress: &mut Progress,
    state: &mut TargetState,
    group: &[&PlannedRun],
) -> Result<(), StudyError> {
    let point = &ctx.plan.points[group[0].point];
    let q = crate::query::run::QueryRun {
        study: ctx.study,
        plan: ctx.plan,
        base_dir: ctx.base_dir,
        host: &ctx.host,
        server: &state.settings,
        stop: &ctx.control.stop,
        interrupted: &*ctx.control.interrupted,
    };
    for &run in group {
        let rec = crate::query::run::run(&q, &mut state.managed, point, run)?;
        if progress.finished.contains(&run.index) {
            ctx.reporter
                .info(&format!("replayed run {} (already stored)", run.index + 1));
            continue;
        }
        let line = crate::query::summary::run_line(&rec.result);
        store_run(ctx, progress, run, &rec, &line)?;
    }
    Ok(())
}

/// Stores a finished run and reports it with the study's progress and time left.
fn store_run(
    ctx: &Ctx,
    progress: &mut Progress,
    run: &PlannedRun,
    rec: &crate::store::RunRecord,
    line: &str,
) -> Result<(), StudyError> {
    progress.store.save_run(progress.outcome.study_id, rec)?;
    progress.finished.insert(run.index);
    progress.outcome.ran += 1;
    let (done, total) = (progress.finished.len(), progress.outcome.total);
    let per_run = progress.started.elapsed() / progress.outcome.ran as u32;
    let eta = per_run.checked_mul((total - done) as u32);
    ctx.reporter.run_done(done, total, eta, line);
    Ok(())
}

/// One round with its collectors, stored unless an earlier attempt stored it (then it only
/// replays, so the data evolves as before).
fn run_and_store(
    ctx: &Ctx,
    progress: &mut Progress,
    state: &TargetState,
    run: &PlannedRun,
    scripts: &[ScriptSource],
) -> Result<(), StudyError> {
    let point = &ctx.plan.points[run.point];
    let cfg = point_config(ctx, point, scripts, point.workload.seed);
    let t0 = now_unix();
    let m = &state.managed;
    let collect = &ctx.study.spec.collect;
    let (mut doc, collected) = match &ctx.luas[point.index] {
        Some(lp) => run_round(ctx, m, point, collect, |_| {
            crate::runner_lua::run(m, point, lp, &ctx.control.stop)
        })?,
        None => run_round(ctx, m, point, collect, |sink| {
            run_bench(ctx, m, point, cfg, sink).map(|r| document(point, &r))
        })?,
    };
    let t1 = now_unix();
    if let Some(r) = &collected.server_seconds {
        r.fill(&mut doc);
    }
    if progress.finished.contains(&run.index) {
        ctx.reporter
            .info(&format!("replayed run {} (already stored)", run.index + 1));
        return Ok(());
    }
    let mut provenance = provenance(
        ctx,
        &state.managed,
        point,
        run,
        &doc,
        scripts,
        &state.settings,
    );
    if !collected.profiles.is_null() {
        provenance["profiles"] = collected.profiles.clone();
    }
    let rec = build(
        &ctx.study.spec.name,
        &state.managed.name,
        point,
        run,
        &doc,
        &collected,
        provenance,
        t0,
        t1,
    );
    store_run(
        ctx,
        progress,
        run,
        &rec,
        &crate::summary::run_line(&rec.result),
    )
}

/// The run document of an engine run; a sysbench test's queries by class (from the
/// statements' replies) in its `workload_counters`, as `pgrig sysbench` records them.
fn document(point: &Point, r: &RunResult) -> RunDocument {
    let mut doc = pgrig_engine::document::of(r);
    let name = point.workload.workload.as_deref().unwrap_or_default();
    if pgrig_workloads::sysbench::names().contains(&name) {
        let replies = r.stats.total().counts.replies;
        doc.workload_counters
            .extend(pgrig_workloads::sysbench::report::class_counters(&replies));
    }
    doc
}

/// Runs the engine with the point's isolation and client CPUs, reporting to `sink`; fails on
/// interruption.
fn run_bench(
    ctx: &Ctx,
    m: &Managed,
    point: &Point,
    mut cfg: BenchConfig,
    sink: Arc<dyn Sink>,
) -> Result<RunResult, StudyError> {
    cfg.conn = m.endpoint.conn_args(point.workload.isolation.as_deref())?;
    // the last CPUs, away from the server's (which takes the first ones)
    cfg.client_cpus = match point.workload.client_cpus {
        Some(n) => Some(cpu_list(Some(n), CpuPick::Last)?),
        None => None,
    };
    let r = pgrig_engine::run_bench(cfg, sink, &ctx.control.stop)?;
    if (ctx.control.interrupted)() {
        return Err(StudyError::Interrupted);
    }
    Ok(r)
}

/// One round (`run`, given the sink the engine reports to) with its collectors.
fn run_round<T>(
    ctx: &Ctx,
    m: &Managed,
    point: &Point,
    collect: &CollectSpec,
    run: impl FnOnce(Arc<dyn Sink>) -> Result<T, StudyError>,
) -> Result<(T, Collected), StudyError> {
    let mut admin = m.admin()?;
    let before = if collect.server_stats {
        Some(StatsSnapshot::take(&mut admin)?)
    } else {
        None
    };
    let procs = |m: &Managed| {
        m.server
            .as_ref()
            .filter(|_| collect.server_processes)
            .map(|s| proc_usage(&s.pids()))
    };
    let proc_before = procs(m);
    let sampler = if collect.wait_events {
        Some(WaitSampler::start(
            m.admin()?,
            Duration::from_millis(collect.sample_interval_ms.max(10)),
        ))
    } else {
        None
    };
    let profiling = crate::collect::profile::start(m, collect)?;
    let seconds = ServerSeconds::connect(&m.endpoint.conn_args(None)?);
    let sink = SecondsSink::around(ctx.sink.clone(), seconds.as_ref());
    let t0 = Instant::now();
    let result = run(sink);
    let wall = t0.elapsed().as_secs_f64();
    let server_seconds = seconds.map(|s| s.finish());
    let waits = sampler.map(WaitSampler::finish);
    let profiles = profiling.map(|p| p.finish());
    let result = result?;
    let mut c = Collected {
        server_seconds,
        ..Collected::default()
    };
    if let Some(p) = profiles {
        c.profiles = p?;
    }
    if let (Some(b), Some(a)) = (proc_before, procs(m)) {
        c.server_processes = a.delta_json(&b, wall);
    }
    if let Some(w) = waits {
        c.lock_share = w.lock_share();
        c.wait_events = w.to_json();
    }
    if let Some(b) = before {
        c.server_stats = StatsSnapshot::take(&mut admin)?.delta_json(&b);
    }
    c.relation_sizes = relation_sizes(&mut admin, &collect.relation_sizes)?;
    if collect.consistency {
        c.consistency = consistency(ctx, m, point);
    }
    Ok((result, c))
}

/// `[collect] consistency`: the native workload's checks after the run, each reported when
/// it fails; `null` for a workload without checks.
fn consistency(ctx: &Ctx, m: &Managed, point: &Point) -> Value {
    let Some(name) = point.workload.workload.as_deref() else {
        return Value::Null;
    };
    match pgrig_workloads::consistency(name, &m.endpoint.conninfo) {
        None => Value::Null,
        Some(Err(e)) => {
            ctx.reporter
                .info(&format!("consistency checks could not run: {e}"));
            serde_json::json!({ "error": e })
        }
        Some(Ok(checks)) => {
            for c in checks.iter().filter(|c| !c.passed) {
                ctx.reporter.info(&format!("consistency: {}", c.line));
            }
            checks
                .iter()
                .map(|c| serde_json::json!({"check": c.name, "passed": c.passed, "line": c.line}))
                .collect()
        }
    }
}

/// Every setting not at its built-in default (what the server runs with).
fn non_default_settings(m: &Managed) -> Result<Value, StudyError> {
    let mut db: Db = m.admin()?;
    let rows = db.query(
        "SELECT name, setting || COALESCE(' ' || unit, '') FROM pg_settings \
         WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name",
    )?;
    let mut out = serde_json::Map::new();
    for r in rows {
        if let (Some(Some(k)), Some(v)) = (r.first(), r.get(1)) {
            out.insert(k.clone(), json!(v));
        }
    }
    let version = db.scalar("SELECT version()")?.unwrap_or_default();
    Ok(json!({"version": version, "settings": out}))
}

fn provenance(
    ctx: &Ctx,
    m: &Managed,
    point: &Point,
    run: &PlannedRun,
    doc: &RunDocument,
    scripts: &[ScriptSource],
    server: &Value,
) -> Value {
    let origin = crate::record::Origin {
        study: ctx.study,
        plan: ctx.plan,
        base_dir: ctx.base_dir,
        host: &ctx.host,
        server,
    };
    let mut p = crate::record::provenance(&origin, m, point, run);
    p.insert("scripts".into(), scripts_json(scripts));
    p.insert("seed".into(), json!(doc.options.random_seed));
    Value::Object(p)
}
