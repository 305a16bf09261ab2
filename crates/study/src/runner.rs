//! Runs a study: for each target, start (or connect to) the server; for each point, apply its
//! settings and CPU cores; for each repetition, re-initialise per the policy, warm up, then run
//! its rounds with collectors alongside, storing every finished run in its own transaction.
//! Runs already in the store are never repeated: a repetition whose rounds are all stored is
//! skipped; one that stopped half-way is replayed from its first round (so its data evolves as
//! before) and only the missing rounds are stored.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use pgrig_engine::config::{BenchConfig, Duration as BenchDuration};
use pgrig_engine::document::RunDocument;
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::Sink;
use pgrig_engine::StopHandle;

use crate::collect::host::host_info;
use crate::collect::sampler::{proc_usage, WaitSampler};
use crate::collect::stats::{relation_sizes, StatsSnapshot};
use crate::dataset::Dataset;
use crate::db::Db;
use crate::error::StudyError;
use crate::managed::{cpu_set, CpuPick, Managed};
use crate::plan::{expand, Plan, PlannedRun, Point};
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
    base_dir: &'a Path,
    sink: Arc<dyn Sink>,
    control: &'a Control,
    host: Value,
}

/// Runs (or resumes) `study`, storing into `store`.
pub fn run_study(
    study: &Study,
    base_dir: &Path,
    store: &mut Store,
    sink: Arc<dyn Sink>,
    reporter: &dyn Reporter,
    control: &Control,
) -> Result<Outcome, StudyError> {
    let plan = expand(study)?;
    let dataset = Dataset::resolve(study, &plan, base_dir)?;
    crate::plan::check_files(study, &plan, base_dir)?;
    // the study text is kept with the results (the store masks its passwords)
    let study_id = store.study_id(&study.spec.name, &study.file, &study.text)?;
    let mut finished = store.finished(study_id)?;
    let total = plan.runs.len();
    let already_stored = plan
        .runs
        .iter()
        .filter(|r| finished.contains(&r.index))
        .count();
    let mut outcome = Outcome {
        study_id,
        total,
        ran: 0,
        already_stored,
    };
    if already_stored == total {
        reporter.info(&format!(
            "all {total} runs of study \"{}\" are already stored",
            study.spec.name
        ));
        return Ok(outcome);
    }
    if already_stored > 0 {
        reporter.info(&format!(
            "resuming: {already_stored} of {total} runs already stored"
        ));
    }
    let ctx = Ctx {
        study,
        plan: &plan,
        base_dir,
        sink,
        control,
        host: host_info(),
    };
    let max_clients = plan
        .points
        .iter()
        .map(|p| p.workload.clients)
        .max()
        .unwrap_or(1);
    let started = Instant::now();
    for (ti, target) in plan.targets.iter().enumerate() {
        let runs: Vec<&PlannedRun> = plan
            .runs
            .iter()
            .filter(|r| plan.points[r.point].target == ti)
            .collect();
        if runs.iter().all(|r| finished.contains(&r.index)) {
            continue;
        }
        if target.url.is_none() {
            reporter.info(&format!(
                "starting a throwaway PostgreSQL server for target \"{}\"",
                target.name
            ));
        }
        let mut managed = Managed::open(target, max_clients + 20)?;
        let mut data_ready = false;
        let mut current_point = None;
        let mut settings_json = Value::Null;
        let mut i = 0;
        while i < runs.len() {
            let first = runs[i];
            let group: Vec<&PlannedRun> = runs[i..]
                .iter()
                .take_while(|r| r.point == first.point && r.repetition == first.repetition)
                .copied()
                .collect();
            i += group.len();
            if group.iter().all(|r| finished.contains(&r.index)) {
                continue;
            }
            if (control.interrupted)() {
                return Err(StudyError::Interrupted);
            }
            let point = &plan.points[first.point];
            if current_point != Some(point.index) {
                managed.apply_settings(&point.settings)?;
                managed.set_cpus(point.workload.server_cpus)?;
                settings_json = non_default_settings(&managed)?;
                current_point = Some(point.index);
            }
            if first.reinit || !data_ready {
                reporter.info(&format!(
                    "initialising the dataset on target \"{}\"",
                    target.name
                ));
                dataset.create(&managed.endpoint, &*ctx.sink, &control.stop)?;
                data_ready = true;
            }
            let scripts = point
                .workload
                .script_sources(base_dir)
                .map_err(StudyError::Refused)?;
            let warm = point.workload.warmup_seconds();
            if warm > 0 {
                let mut cfg = point.workload.bench_config(scripts.clone(), None);
                cfg.duration = BenchDuration::Seconds(warm);
                cfg.report_per_command = false;
                run_bench(&ctx, &managed, point, cfg)?;
            }
            for run in group {
                let cfg = point
                    .workload
                    .bench_config(scripts.clone(), point.workload.seed);
                let t0 = now_unix();
                let (result, collected) =
                    run_round(&ctx, &managed, point, cfg, &study.spec.collect)?;
                let t1 = now_unix();
                let doc = RunDocument::of(&result);
                if finished.contains(&run.index) {
                    reporter.info(&format!("replayed run {} (already stored)", run.index + 1));
                    continue;
                }
                let mut provenance =
                    provenance(&ctx, &managed, point, run, &doc, &scripts, &settings_json);
                if !collected.profiles.is_null() {
                    provenance["profiles"] = collected.profiles.clone();
                }
                let rec = build(
                    &study.spec.name,
                    &target.name,
                    point,
                    run,
                    &doc,
                    &collected,
                    provenance,
                    t0,
                    t1,
                );
                store.save_run(study_id, &rec)?;
                finished.insert(run.index);
                outcome.ran += 1;
                let done = finished.len();
                let per_run = started.elapsed() / outcome.ran as u32;
                let eta = per_run.checked_mul((total - done) as u32);
                reporter.run_done(done, total, eta, &crate::summary::run_line(&rec.result));
            }
        }
        managed.close();
    }
    Ok(outcome)
}

/// Runs the engine with the point's isolation and client CPUs; fails on interruption.
fn run_bench(
    ctx: &Ctx,
    m: &Managed,
    point: &Point,
    mut cfg: BenchConfig,
) -> Result<RunResult, StudyError> {
    cfg.conn = m.endpoint.conn_args(point.workload.isolation.as_deref())?;
    let pin = point.workload.client_cpus;
    if pin.is_some() {
        // worker threads inherit the affinity of the thread that creates them
        let set = cpu_set(pin, CpuPick::Last)?;
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| {
            StudyError::Other(format!("could not set the client's CPU affinity: {e}"))
        })?;
    }
    let r = pgrig_engine::run_bench(cfg, ctx.sink.clone(), &ctx.control.stop);
    if pin.is_some() {
        if let Ok(all) = cpu_set(None, CpuPick::First) {
            let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &all);
        }
    }
    let r = r?;
    if (ctx.control.interrupted)() {
        return Err(StudyError::Interrupted);
    }
    Ok(r)
}

/// One round with its collectors.
fn run_round(
    ctx: &Ctx,
    m: &Managed,
    point: &Point,
    cfg: BenchConfig,
    collect: &CollectSpec,
) -> Result<(RunResult, Collected), StudyError> {
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
    let t0 = Instant::now();
    let result = run_bench(ctx, m, point, cfg);
    let wall = t0.elapsed().as_secs_f64();
    let waits = sampler.map(WaitSampler::finish);
    let profiles = profiling.map(|p| p.finish());
    let result = result?;
    let mut c = Collected::default();
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
    Ok((result, c))
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
    scripts: &[pgrig_engine::config::ScriptSource],
    server: &Value,
) -> Value {
    json!({
        "pgrig_version": env!("CARGO_PKG_VERSION"),
        "server_version": server["version"],
        "server_settings": server["settings"],
        "target": if m.is_local() {
            json!({"kind": "throwaway", "name": m.name,
                   "bin_dir": m.server.as_ref().map(|s| s.bin_dir().display().to_string()),
                   "tcp": m.server.as_ref().is_some_and(|s| s.tcp())})
        } else {
            json!({"kind": "external", "name": m.name, "url": m.endpoint.redacted()})
        },
        "host": ctx.host,
        "study": {"name": ctx.study.spec.name, "file": ctx.study.file,
                  "base_dir": ctx.base_dir.display().to_string(), "points": ctx.plan.points.len(),
                  "repetitions": ctx.plan.repetitions},
        "point": crate::record::point_json(point),
        "repetition": run.repetition,
        "round": run.round,
        "run_index": run.index,
        "workload": serde_json::to_value(&point.workload).unwrap_or(Value::Null),
        "scripts": scripts_json(scripts),
        "seed": doc.options.random_seed,
        "server_cpu_list": m.server_cpu_list(),
    })
}
