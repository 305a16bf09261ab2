//! Runs a whole benchmark: compile scripts, set up, deal clients to worker threads, start them
//! together, collect per-second snapshots (progress lines, series), merge the results.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant, SystemTime, UNIX_EPOCH};

use pgrig_script::{Value, VarId, Vars};

use crate::client_state::Client;
use crate::compile::{compile, Compiled};
use crate::config::{BenchConfig, Duration, SeedOption};
use crate::error::EngineError;
use crate::result::{RunResult, ScriptInfo, ThreadCpu, TypeSecond};
use crate::shared::RunShared;
use crate::sink::{Progress, Sink};
use crate::stats::{Snapshot, ThreadStats};
use crate::stop::StopHandle;
use crate::worker::{run_worker, Report, WorkerOut, WorkerRngs};

fn base_seed(opt: Option<SeedOption>) -> u64 {
    match opt.unwrap_or_default() {
        SeedOption::Value(v) => v,
        SeedOption::Time => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0),
        SeedOption::Rand => {
            let mut b = [0u8; 8];
            if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
                let _ = std::io::Read::read_exact(&mut f, &mut b);
            }
            u64::from_ne_bytes(b)
        }
    }
}

/// Runs the benchmark described by `cfg`. Diagnostics go to `sink`; the result is returned for
/// the caller to report, also when clients aborted (see `RunResult::aborted_clients`).
pub fn run_bench(
    cfg: BenchConfig,
    sink: Arc<dyn Sink>,
    stop: &StopHandle,
) -> Result<RunResult, EngineError> {
    let native = (cfg.native.as_ref())
        .map(|n| crate::native_run::NativeRun::new(n.0.clone()))
        .transpose()?;
    let compiled = match &native {
        Some(n) => crate::compile::compile_native(n),
        None => compile(&cfg)?,
    };
    let (wire, setup) = connect_and_set_up(&cfg, &sink, compiled.uses_builtin)?;
    let seed = base_seed(cfg.random_seed);
    let nclients = cfg.clients as usize;
    let nthreads = crate::config::clamp_threads(cfg.threads, cfg.clients) as usize;
    let default_seed_defined = cfg.defines.iter().any(|(n, _)| n == "default_seed");
    // A segment's clients take their streams from the whole run's (global client ids).
    let (first, total) = crate::config::segment_clients(&cfg);
    let mut seeds = pgrig_script::seeding::seed_states_with(
        seed,
        total as usize,
        nthreads,
        default_seed_defined,
    );
    seeds.clients.drain(..first as usize);
    seeds.clients.truncate(nclients);
    let native_scale = native.as_ref().and_then(|n| n.workload.scale());
    let scale = (setup.scale.or(native_scale)).unwrap_or(cfg.scale.unwrap_or(1) as i64);
    let proto = initial_vars(&cfg, &compiled, scale, seed, seeds.default_seed);
    let scripts_info = match &native {
        Some(n) => n.infos(),
        None => script_infos(&compiled.scripts),
    };
    let client_id = (!defined(&cfg, "client_id")).then_some(compiled.auto.client_id);
    let mut shared = shared_state(&cfg, compiled, wire, sink, nthreads);
    shared.native = native;
    let sh = Arc::new(shared);
    stop.attach(&sh);

    let (handles, rx) = start_workers(&sh, nthreads, seeds, &proto, client_id, seed)?;
    let (series, series_by_type) = collect_progress(&sh, &rx, nthreads);
    sh.finished.store(true, Ordering::SeqCst);
    stop.detach();
    let joined = join_workers(handles)?;
    let end = Instant::now();
    let bench_start = sh.bench_start.get().copied().unwrap_or(sh.start);
    let started = sh.start_wall + bench_start.duration_since(sh.start);
    let extras = crate::result::RunExtras {
        started_unix_s: started
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs_f64()),
        series_by_type,
        counters: joined.counters,
        segments: None,
        forced_shutdown: sh.forced.load(Ordering::SeqCst),
    };
    Ok(RunResult {
        config: cfg,
        scripts: scripts_info,
        server_version: setup.server_version,
        scale,
        partitions: setup.partitions,
        stats: joined.stats,
        bench_duration_s: end.duration_since(bench_start).as_secs_f64(),
        initial_conn_ms: bench_start.duration_since(sh.start).as_secs_f64() * 1000.0,
        threads_cpu: joined.cpu,
        series,
        aborted_clients: joined.aborted,
        clients: joined.clients,
        seed,
        interrupted: stop.requested(),
        extras,
    })
}

/// The connection parameters, and what setup found out (scale, partitions, server version)
/// after vacuuming, over one connection on a throwaway tokio runtime.
fn connect_and_set_up(
    cfg: &BenchConfig,
    sink: &Arc<dyn Sink>,
    uses_builtin: bool,
) -> Result<(pgrig_wire::Config, crate::setup::SetupInfo), EngineError> {
    let mut wire = pgrig_wire::Config::from_args(&cfg.conn, "pgbench")
        .map_err(|e| EngineError::fatal(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::fatal(format!("could not start a runtime: {e}")))?;
    let setup = rt.block_on(crate::setup::prepare(cfg, &mut wire, sink, uses_builtin))?;
    Ok((wire, setup))
}

/// Initial variables, copied to every client: `-D` values, then `scale`, `default_seed` and
/// `random_seed` unless defined.
fn initial_vars(
    cfg: &BenchConfig,
    compiled: &Compiled,
    scale: i64,
    seed: u64,
    default_seed: Option<i64>,
) -> Vars {
    let mut proto = Vars::with_len(compiled.vartable.len());
    for (name, value) in &cfg.defines {
        if let Some(id) = compiled.vartable.get(name) {
            proto.set_str(id, value);
        }
    }
    let a = compiled.auto;
    if !defined(cfg, "scale") {
        proto.set_value(a.scale, Value::Int(scale));
    }
    if let Some(ds) = default_seed {
        proto.set_value(a.default_seed, Value::Int(ds));
    }
    if !defined(cfg, "random_seed") {
        proto.set_value(a.random_seed, Value::Int(seed as i64));
    }
    proto
}

/// Whether `-D` set the variable.
fn defined(cfg: &BenchConfig, name: &str) -> bool {
    cfg.defines.iter().any(|(n, _)| n == name)
}

fn script_infos(scripts: &[pgrig_script::Script]) -> Vec<ScriptInfo> {
    scripts
        .iter()
        .map(|s| ScriptInfo {
            desc: s.desc.clone(),
            weight: s.weight,
            command_texts: s.commands.iter().map(|c| c.first_line.clone()).collect(),
        })
        .collect()
}

/// The run's state every worker reads.
fn shared_state(
    cfg: &BenchConfig,
    compiled: Compiled,
    wire: pgrig_wire::Config,
    sink: Arc<dyn Sink>,
    nthreads: usize,
) -> RunShared {
    let (nxacts, duration_us) = match cfg.duration {
        Duration::Transactions(n) => (Some(n), None),
        Duration::Seconds(s) => (None, Some(s as i64 * 1_000_000)),
    };
    RunShared {
        total_weight: compiled.scripts.iter().map(|s| s.weight).sum(),
        meta_debug: crate::debug::meta_texts(&compiled.scripts, cfg.debug),
        scripts: compiled.scripts,
        prep_index: compiled.prep_index,
        n_prepared: compiled.n_prepared,
        invalid_name: compiled.invalid_name,
        default_seed_var: compiled.auto.default_seed,
        vartable: compiled.vartable,
        wire,
        sink,
        start: Instant::now(),
        start_mono_us: crate::shared::mono_us(),
        cancels: std::sync::Mutex::new(Vec::new()),
        finished: AtomicBool::new(false),
        forced: AtomicBool::new(false),
        end_cache_us: std::sync::atomic::AtomicI64::new(i64::MAX),
        start_wall: SystemTime::now(),
        bench_start: OnceLock::new(),
        nxacts,
        duration_us,
        transactions_left: cfg
            .total_transactions
            .map(std::sync::atomic::AtomicU64::new),
        throttle_delay_us: cfg.rate.map(|r| 1e6 / r * nthreads as f64),
        latency_limit_us: cfg.latency_limit_us,
        stop: AtomicBool::new(false),
        cfg: cfg.clone(),
        native: None,
    }
}

/// Deals clients to threads in contiguous blocks, as pgbench does, and starts the threads; they
/// report on the returned channel.
fn start_workers(
    sh: &Arc<RunShared>,
    nthreads: usize,
    seeds: pgrig_script::seeding::SeedStates,
    proto: &Vars,
    client_id: Option<VarId>,
    seed: u64,
) -> Result<(Vec<JoinHandle<WorkerOut>>, mpsc::Receiver<Report>), EngineError> {
    let nclients = sh.cfg.clients as usize;
    // the measured window starts now (a profiler attached by the front end begins sampling)
    sh.sink.measuring();
    let barrier = Arc::new(Barrier::new(nthreads));
    let connect_failed = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    let mut dealt = 0usize;
    let mut client_rngs = seeds.clients.into_iter();
    let (first, total) = crate::config::segment_clients(&sh.cfg);
    let first = first as usize;
    for (t, trngs) in seeds.threads.into_iter().enumerate().take(nthreads) {
        let n = (nclients - dealt + nthreads - t - 1) / (nthreads - t);
        let mut clients = Vec::with_capacity(n);
        for id in first + dealt..first + dealt + n {
            let mut vars = proto.clone();
            if let Some(var) = client_id {
                vars.set_value(var, Value::Int(id as i64));
            }
            let rng = client_rngs.next().expect("one PRNG per client");
            let mut c = Client::new(id as u32, vars, rng, sh.n_prepared);
            if let Some(n) = &sh.native {
                c.program = Some(n.workload.client(crate::workload::ClientSeed {
                    id: id as u32,
                    clients: total,
                    seed,
                }));
            }
            clients.push(c);
        }
        dealt += n;
        let rngs = WorkerRngs {
            choose: trngs.choose,
            throttle: trngs.throttle,
            sample: trngs.sample,
        };
        let (sh, barrier, cf, tx) = (
            sh.clone(),
            barrier.clone(),
            connect_failed.clone(),
            tx.clone(),
        );
        let h = std::thread::Builder::new()
            .name(format!("pgrig-worker-{t}"))
            .spawn(move || run_worker(sh, t, clients, rngs, barrier, cf, tx))
            .map_err(|e| EngineError::fatal(format!("could not create thread: {e}")))?;
        handles.push(h);
    }
    Ok((handles, rx))
}

/// What the worker threads hand back, merged.
struct Joined {
    stats: ThreadStats,
    cpu: Vec<crate::result::ThreadCpu>,
    aborted: u32,
    clients: Vec<crate::result::ClientTally>,
    counters: std::collections::BTreeMap<String, u64>,
}

/// Waits for the workers and merges their statistics; a failed first connection is the run's
/// error.
fn join_workers(handles: Vec<JoinHandle<WorkerOut>>) -> Result<Joined, EngineError> {
    let mut stats: Option<ThreadStats> = None;
    let mut cpu = Vec::new();
    let mut aborted = 0;
    let mut clients = Vec::new();
    let mut counters = std::collections::BTreeMap::new();
    let mut connect_error = None;
    for h in handles {
        let out = h
            .join()
            .map_err(|_| EngineError::fatal("a worker thread panicked"))?;
        if connect_error.is_none() {
            connect_error = out.connect_error;
        }
        aborted += out.aborted;
        clients.extend(out.clients);
        for (name, n) in out.counters {
            *counters.entry(name).or_insert(0) += n;
        }
        cpu.push(out.cpu);
        match &mut stats {
            None => stats = Some(out.stats),
            Some(s) => s.merge(&out.stats),
        }
    }
    if let Some(e) = connect_error {
        return Err(EngineError::fatal(e));
    }
    Ok(Joined {
        stats: stats.expect("at least one thread"),
        cpu,
        aborted,
        clients,
        counters,
    })
}

/// Per-second deltas: of all transactions, and per transaction type (native workloads).
type Series = (Vec<Snapshot>, Vec<Vec<TypeSecond>>);

/// Receives the workers' per-second snapshots until all are done; prints `-P` lines; returns the
/// per-second deltas.
fn collect_progress(sh: &RunShared, rx: &mpsc::Receiver<Report>, nthreads: usize) -> Series {
    let mut latest = vec![Snapshot::default(); nthreads];
    let mut latest_types: Vec<Vec<TypeSecond>> = vec![Vec::new(); nthreads];
    let mut prev_types: Vec<TypeSecond> = Vec::new();
    let mut series_by_type = Vec::new();
    let mut cpu = vec![ThreadCpu::default(); nthreads];
    let mut cpu_reported = cpu.clone();
    let mut seen = vec![0u64; nthreads];
    let mut done = vec![false; nthreads];
    let mut series = Vec::new();
    let mut prev_total = Snapshot::default();
    let mut prev_report = Snapshot::default();
    let mut next_sec = 1u64;
    let mut histograms: std::collections::BTreeMap<u64, hdrhistogram::Histogram<u64>> =
        Default::default();
    let progress = sh.cfg.progress.unwrap_or(0) as u64;
    while done.iter().any(|d| !d) {
        match rx.recv_timeout(StdDuration::from_millis(500)) {
            Ok(Report::Tick {
                tid,
                sec,
                snap,
                histogram,
                by_type,
                cpu: c,
            }) => {
                latest[tid] = snap;
                latest_types[tid] = by_type;
                cpu[tid] = c;
                seen[tid] = sec;
                match histograms.get_mut(&sec) {
                    Some(h) => {
                        let _ = h.add(&*histogram);
                    }
                    None => {
                        histograms.insert(sec, *histogram);
                    }
                }
            }
            Ok(Report::Done { tid }) => done[tid] = true,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        while (0..nthreads).all(|t| done[t] || seen[t] >= next_sec)
            && (0..nthreads).any(|t| seen[t] >= next_sec)
        {
            let mut total = Snapshot::default();
            for s in &latest {
                total.merge(s);
            }
            let d = delta(&total, &prev_total);
            let h = histograms
                .remove(&next_sec)
                .unwrap_or_else(crate::stats::new_histogram);
            sh.sink.second(&crate::sink::SecondReport {
                second: next_sec,
                delta: &d,
                histogram: &h,
            });
            series.push(d);
            prev_total = total;
            let types = sum_types(&latest_types);
            if !types.is_empty() {
                series_by_type.push(delta_types(&types, &prev_types));
                prev_types = types;
            }
            if progress > 0 && next_sec.is_multiple_of(progress) {
                let figures = busiest(&cpu, &cpu_reported);
                report_progress(sh, &total, &prev_report, next_sec, progress, figures);
                prev_report = total;
                cpu_reported.clone_from(&cpu);
            }
            next_sec += 1;
        }
    }
    (series, series_by_type)
}

/// The threads' cumulative per-type counts, summed.
fn sum_types(threads: &[Vec<TypeSecond>]) -> Vec<TypeSecond> {
    let mut out: Vec<TypeSecond> = Vec::new();
    for t in threads {
        if out.len() < t.len() {
            out.resize(t.len(), TypeSecond::default());
        }
        for (o, x) in out.iter_mut().zip(t) {
            o.ok += x.ok;
            o.rollbacks += x.rollbacks;
        }
    }
    out
}

fn delta_types(now: &[TypeSecond], before: &[TypeSecond]) -> Vec<TypeSecond> {
    now.iter()
        .enumerate()
        .map(|(i, n)| {
            let b = before.get(i).copied().unwrap_or_default();
            TypeSecond {
                ok: n.ok - b.ok,
                rollbacks: n.rollbacks - b.rollbacks,
            }
        })
        .collect()
}

fn delta(now: &Snapshot, before: &Snapshot) -> Snapshot {
    Snapshot {
        counts: now.counts.since(&before.counts),
        latency: now.latency.since(&before.latency),
        lag: now.lag.since(&before.lag),
    }
}

/// The largest CPU time and run-queue wait shares among the threads since the last progress line.
fn busiest(now: &[ThreadCpu], before: &[ThreadCpu]) -> (f64, f64) {
    let spent = now.iter().zip(before).map(|(n, b)| n.since(b));
    spent.fold((0.0, 0.0), |(c, w), t| {
        (c.max(t.cpu_time()), w.max(t.run_queue_wait()))
    })
}

fn report_progress(
    sh: &RunShared,
    total: &Snapshot,
    prev: &Snapshot,
    sec: u64,
    interval: u64,
    (cpu_time, run_queue_wait): (f64, f64),
) {
    let d = delta(total, prev);
    let time = if sh.cfg.progress_timestamp {
        let b = sh.bench_start.get().copied().unwrap_or(sh.start);
        let wall = sh.start_wall + b.duration_since(sh.start) + StdDuration::from_secs(sec);
        wall.duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    } else {
        sec as f64
    };
    let p = Progress {
        time,
        tps: d.counts.ok as f64 / interval as f64,
        latency_ms: d.latency.mean() / 1000.0,
        stddev_ms: d.latency.stddev() / 1000.0,
        failed: d.counts.failed(),
        lag_ms: d.lag.mean() / 1000.0,
        skipped: d.counts.skipped,
        retried: d.counts.retried,
        retries: d.counts.retries,
        client_cpu_time: cpu_time,
        client_run_queue_wait: run_queue_wait,
    };
    sh.sink.progress(&p);
}
