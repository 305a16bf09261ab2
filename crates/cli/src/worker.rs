//! `pgrig worker --segment I/N --coordinator URL [--target URL] [--log-dir DIR]`: one segment of
//! a run spread over several client hosts. Finds the run the coordinator (`pgrig bench
//! --segments N --coordinator URL`) opened in the coordination schema, takes the run's options
//! and scripts from it — run options only and scripts as text, both checked, since anyone who
//! can write the schema can write them: its target is its own (`--target` or libpq's
//! environment), its logs go under its own `--log-dir` — registers (host, cores, version, clock
//! offset; or as failed, with the reason it refused the run), waits for the shared start
//! instant, runs its share of the clients, reports every interval and hands its statistics in
//! for the exact merge.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use pgrig_engine::config::{BenchConfig, SeedOption};
use pgrig_engine::sink::{InitProgress, Level, PhaseDisplay, Progress, SecondReport, Sink};
use pgrig_engine::StopHandle;
use pgrig_fleet::db::Db;
use pgrig_fleet::protocol::{self, Interval, Registration, RunRow};
use pgrig_fleet::share::SegmentId;
use pgrig_fleet::{clock, ScaleError};

use crate::sink::StderrSink;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig worker",
    about = "Run one segment of a benchmark coordinated by `pgrig bench --segments N --coordinator URL`"
)]
pub struct WorkerArgs {
    /// This worker's segment: I/N, 0 <= I < N (a Kubernetes Indexed Job's completion index).
    #[arg(long, value_name = "I/N")]
    pub segment: SegmentId,
    /// The database holding the coordination schema (postgresql:// URI or conninfo; the
    /// password from PGPASSWORD or the password file).
    #[arg(long, value_name = "URL")]
    pub coordinator: String,
    /// Join this run only (default: the newest run waiting for N segments whose coordinator
    /// is alive); refused when it is not waiting or its coordinator is gone.
    #[arg(long, value_name = "ID")]
    pub run: Option<i64>,
    /// Join only a run with these options: a prefix (8 to 64 hex digits) of the options digest
    /// the coordinator prints (`run R (options digest HEX) waits for N workers`).
    #[arg(long, value_name = "HEX", value_parser = parse_digest)]
    pub options_digest: Option<String>,
    /// Refuse to run when this host's clock is further than MS from the database's, or the
    /// offset cannot be measured closer than that.
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    pub max_clock_offset: f64,
    /// How long to wait for the coordinator's run and its start.
    #[arg(long, value_name = "SEC", default_value_t = 300)]
    pub wait: u64,
    /// The target this worker benchmarks (postgresql:// URI or conninfo; default: libpq's
    /// environment, PGHOST, PGPORT, PGUSER, PGDATABASE). Never taken from the coordinator.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Where this worker writes the run's `-l` transaction logs (a run asking for them is
    /// refused without it); the run names only the files' prefix.
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<std::path::PathBuf>,
}

/// `--options-digest`: 8 to 64 hex digits, lower-cased.
fn parse_digest(s: &str) -> Result<String, String> {
    if (8..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err("8 to 64 hexadecimal digits expected".into())
    }
}

pub fn main(args: &[String]) -> i32 {
    let a: WorkerArgs = match crate::own_args::parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match work(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

fn work(a: &WorkerArgs) -> Result<i32, ScaleError> {
    let seg = a.segment;
    if a.target
        .as_deref()
        .is_some_and(|t| pgrig_wire::mask_passwords(t) != t)
    {
        return Err(ScaleError::new(
            "a password in --target would show in the process list: give it in PGPASSWORD or \
             a password file",
        ));
    }
    if let Some(d) = &a.log_dir {
        if !d.is_dir() {
            return Err(ScaleError::new(format!(
                "--log-dir {}: not a directory",
                d.display()
            )));
        }
    }
    let mut db = Db::connect(&a.coordinator)?;
    let run = wait_for_run(&mut db, a)?;
    let cfg = match segment_config(&run, a) {
        Ok(c) => c,
        Err(e) => return Err(refuse(&mut db, &run, seg, e)),
    };
    for (i, s) in cfg.0.scripts.iter().enumerate() {
        if let pgrig_engine::config::ScriptSource::File { path, text, .. } = s {
            let sum = pgrig_fleet::scripts::digest(text);
            eprintln!(
                "pgrig: run {}: script {}: {path} (sha256 {sum})",
                run.id,
                i + 1
            );
        }
    }
    if seg.index == 0 && !cfg.1 {
        pre_run_vacuum(&cfg.0)?;
    }
    let cfg = cfg.0;
    let target = match pgrig_fleet::target::fingerprint(&cfg.conn) {
        Ok(t) => t.to_string(),
        Err(e) => return Err(refuse(&mut db, &run, seg, e)),
    };
    let offset = clock::measure(&mut db, 8)?;
    let me = Registration {
        segment: seg.index,
        host: crate::metrics::host_name(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        version: env!("CARGO_PKG_VERSION").into(),
        offset_ms: offset.offset_ms,
        error_ms: offset.error_ms,
        target,
    };
    let refused = clock::check(offset, a.max_clock_offset).err();
    protocol::register(&mut db, run.id, &me, refused.as_ref().map(|e| e.0.as_str()))?;
    if let Some(e) = refused {
        return Err(e);
    }
    let (first, total) = pgrig_engine::config::segment_clients(&cfg);
    eprintln!(
        "pgrig: segment {}/{} of run {}: clients {first}..{} of {total}, clock offset {:+.3} ms (± {:.3} ms)",
        seg.index,
        seg.count,
        run.id,
        first + cfg.clients - 1,
        offset.offset_ms,
        offset.error_ms
    );
    if !wait_for_start(&mut db, &run, offset.offset_ms, a.wait)? {
        eprintln!(
            "pgrig: the coordinator stopped run {} before it started",
            run.id
        );
        let _ = protocol::finish(&mut db, run.id, seg.index, Err("stopped before the start"));
        return Ok(130);
    }
    run_segment(db, &run, seg, cfg)
}

/// The run to join, polled for until `--wait` has passed: `--run ID` only while it waits for
/// workers and its coordinator is alive; else the newest such run of N segments (with
/// `--options-digest`, of those options).
fn wait_for_run(db: &mut Db, a: &WorkerArgs) -> Result<RunRow, ScaleError> {
    let until = Instant::now() + Duration::from_secs(a.wait);
    let digest = a.options_digest.as_deref();
    loop {
        if let Some(r) = protocol::find_run(db, a.run, a.segment.count, digest)? {
            if r.segments != a.segment.count {
                return Err(ScaleError::new(format!(
                    "run {} has {} segments, not {} (--segment {}/{})",
                    r.id, r.segments, a.segment.count, a.segment.index, a.segment.count
                )));
            }
            if let Some(why) = not_joinable(&r, digest) {
                return Err(ScaleError::new(format!("run {}: not joining: {why}", r.id)));
            }
            return Ok(r);
        }
        if Instant::now() >= until {
            let which = match (a.run, digest) {
                (Some(id), _) => format!("no run {id}"),
                (None, Some(d)) => format!(
                    "no live run of {} segments with options digest {d}",
                    a.segment.count
                ),
                (None, None) => format!("no live run waiting for {} segments", a.segment.count),
            };
            return Err(ScaleError::new(format!(
                "{which} at the coordinator \"{}\" after {} s; start it with `pgrig bench \
                 --segments {} --coordinator URL ...`",
                db.shown, a.wait, a.segment.count
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Why run `r` (found by its id) cannot be joined: not waiting, coordinator gone, other options.
fn not_joinable(r: &RunRow, digest: Option<&str>) -> Option<String> {
    if r.state != "waiting" {
        return Some(format!("it is {}, not waiting for workers", r.state));
    }
    if r.coordinator_silent_s > protocol::COORDINATOR_SILENCE_S {
        return Some(format!(
            "its coordinator has not been seen for {:.0} s",
            r.coordinator_silent_s
        ));
    }
    match digest {
        Some(d) if !r.digest.starts_with(d) => Some(format!(
            "its options digest is {}, not {d}…",
            &r.digest.get(..16).unwrap_or(&r.digest)
        )),
        _ => None,
    }
}

/// pgbench's vacuum before the run (segment 0, before it registers), with pgbench's messages.
fn pre_run_vacuum(cfg: &BenchConfig) -> Result<(), ScaleError> {
    eprint!("starting vacuum...");
    for e in pgrig_fleet::vacuum::pre_run(cfg)? {
        eprintln!("pgrig: error: {e}");
        eprintln!("pgrig: detail: (ignoring this error and continuing anyway)");
    }
    eprintln!("end.");
    Ok(())
}

/// Registers this worker as failed with `e` (the coordinator reports why); `e`.
fn refuse(db: &mut Db, run: &RunRow, seg: SegmentId, e: ScaleError) -> ScaleError {
    let me = Registration {
        segment: seg.index,
        host: crate::metrics::host_name(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        version: env!("CARGO_PKG_VERSION").into(),
        offset_ms: 0.0,
        error_ms: 0.0,
        target: String::new(),
    };
    let _ = protocol::register(db, run.id, &me, Some(&e.0));
    e
}

/// The whole run's configuration from the run options the schema holds (checked: run options
/// only), its scripts (checked, as text), this worker's own target and log directory, cut to
/// this segment; and whether the run asked for no vacuum (`-n`).
fn segment_config(run: &RunRow, a: &WorkerArgs) -> Result<(BenchConfig, bool), ScaleError> {
    let refused = |why: String| ScaleError::new(format!("run {}: refused: {why}", run.id));
    crate::args::run_options::check_stored(&run.args).map_err(refused)?;
    if !(100..=60_000).contains(&run.interval_ms) {
        return Err(refused(format!(
            "its interval of {} ms is not within 100 to 60000 ms",
            run.interval_ms
        )));
    }
    let scripts = pgrig_fleet::scripts::decode(&run.scripts).map_err(|e| refused(e.0))?;
    let mut argv = vec!["pgrig worker".to_string()];
    argv.extend(run.args.iter().cloned());
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let parsed = crate::args::parse_pgbench_args("pgrig", &argv, &env)
        .map_err(|e| refused(format!("its options: {}", e.lines.join("; "))))?;
    let crate::args::Action::Bench(mut cfg) = parsed.action else {
        return Err(refused("its options are not a benchmark".into()));
    };
    cfg.scripts = scripts;
    cfg.conn = pgrig_engine::config::ConnArgs {
        dbname: a.target.clone(),
        ..Default::default()
    };
    if cfg.log {
        let Some(dir) = &a.log_dir else {
            return Err(refused(
                "it asks for -l transaction logs: give this worker --log-dir DIR".into(),
            ));
        };
        let prefix = cfg.log_prefix.as_deref().unwrap_or("pgbench_log");
        cfg.log_prefix = Some(dir.join(prefix).to_string_lossy().into_owned());
    }
    cfg.random_seed = Some(SeedOption::Value(run.seed));
    let no_vacuum = cfg.no_vacuum;
    let cfg = pgrig_fleet::share::segment_config(cfg, a.segment)?;
    Ok((cfg, no_vacuum))
}

/// Waits for the shared start instant (database clock, corrected by this host's offset); false
/// when the run was stopped first.
fn wait_for_start(
    db: &mut Db,
    run: &RunRow,
    offset_ms: f64,
    wait: u64,
) -> Result<bool, ScaleError> {
    let until = Instant::now() + Duration::from_secs(wait);
    loop {
        let rs = protocol::run_state(db, run.id)?;
        if rs.coordinator_silent_s > protocol::COORDINATOR_SILENCE_S {
            return Err(coordinator_gone(run.id, rs.coordinator_silent_s));
        }
        match (rs.state.as_str(), rs.start_ms) {
            ("running", Some(start_ms)) => {
                let local = start_ms - offset_ms;
                let ahead = local - clock::now_ms();
                // read from the schema: a start beyond --wait (or not a time) is refused
                if !ahead.is_finite() || ahead > wait as f64 * 1000.0 {
                    return Err(ScaleError::new(format!(
                        "run {}: refused: its start instant is {:.0} s away (beyond --wait {wait})",
                        run.id,
                        ahead / 1000.0
                    )));
                }
                if ahead > 0.0 {
                    std::thread::sleep(Duration::from_secs_f64(ahead / 1000.0));
                }
                return Ok(true);
            }
            ("waiting", _) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(50))
            }
            ("waiting", _) => {
                return Err(ScaleError::new(format!(
                    "run {} did not start within {wait} s (not every segment registered?)",
                    run.id
                )))
            }
            ("failed", _) => {
                return Err(ScaleError::new(format!(
                    "run {} was cancelled before it started (the coordinator says why)",
                    run.id
                )))
            }
            _ => return Ok(false),
        }
    }
}

/// Runs the segment with a reporter thread writing intervals and heartbeats; hands the result
/// in. The exit status follows `pgrig bench`'s.
fn run_segment(db: Db, run: &RunRow, seg: SegmentId, cfg: BenchConfig) -> Result<i32, ScaleError> {
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let inner = Arc::new(StderrSink::simple("pgrig"));
    let (tx, rx) = channel();
    let sink = Arc::new(WorkerSink {
        inner,
        tx: Mutex::new(tx),
        segment: seg.index,
    });
    let done = Arc::new(AtomicBool::new(false));
    let reporter = {
        let (stop, done, run_id, ms) = (stop.clone(), done.clone(), run.id, run.interval_ms);
        std::thread::spawn(move || report_loop(db, run_id, seg.index, ms, rx, &stop, &done))
    };
    let result = pgrig_engine::run_bench(cfg, sink, &stop);
    done.store(true, Ordering::SeqCst);
    let mut db = reporter
        .join()
        .map_err(|_| ScaleError::new("the reporter thread panicked"))?;
    match result {
        Ok(r) => {
            let text = pgrig_fleet::codec::encode(&r);
            protocol::finish(&mut db, run.id, seg.index, Ok(&text))?;
            let ok = r.stats.total().counts.ok;
            eprintln!(
                "pgrig: segment {}/{} done: {ok} transactions",
                seg.index, seg.count
            );
            Ok(if r.interrupted {
                130
            } else if r.aborted_clients > 0 {
                2
            } else {
                0
            })
        }
        Err(e) => {
            let msg = e.to_string();
            let _ = protocol::finish(&mut db, run.id, seg.index, Err(&msg));
            Err(ScaleError::new(msg))
        }
    }
}

/// Every interval: the intervals reported so far and a heartbeat in one transaction, then the
/// run's state (`stopping`: stop the clients). Rows that could not be written are kept for the
/// next try. Hands the connection back at the end.
fn report_loop(
    mut db: Db,
    run: i64,
    segment: u32,
    interval_ms: u32,
    rx: Receiver<Interval>,
    stop: &StopHandle,
    done: &AtomicBool,
) -> Db {
    let mut pending = Vec::new();
    let mut warned = false;
    loop {
        let finished = done.load(Ordering::SeqCst);
        pending.extend(rx.try_iter());
        match protocol::report(&mut db, run, segment, &pending) {
            Ok(rs) => {
                pending.clear();
                if rs.state == "stopping" || rs.state == "failed" {
                    stop.stop();
                }
                if rs.coordinator_silent_s > protocol::COORDINATOR_SILENCE_S && !stop.requested() {
                    eprintln!(
                        "pgrig: error: {}",
                        coordinator_gone(run, rs.coordinator_silent_s)
                    );
                    stop.stop();
                }
            }
            Err(e) if !warned => {
                eprintln!("pgrig: warning: {e}");
                warned = true;
            }
            Err(_) => {}
        }
        if finished {
            return db;
        }
        let until = Instant::now() + Duration::from_millis(interval_ms as u64);
        while Instant::now() < until && !done.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn coordinator_gone(run: i64, silent_s: f64) -> ScaleError {
    ScaleError::new(format!(
        "the coordinator of run {run} has not been seen for {silent_s:.0} s: stopping (nobody \
         would merge this segment's work)"
    ))
}

/// The engine's sink for a worker: messages and `-P` lines to stderr, each second of the
/// benchmark (counts and latency histogram) an interval row.
struct WorkerSink {
    inner: Arc<StderrSink>,
    tx: Mutex<Sender<Interval>>,
    segment: u32,
}

impl Sink for WorkerSink {
    fn message(&self, level: Level, text: &str) {
        self.inner.message(level, text)
    }
    fn stdout(&self, text: &str) {
        // the banner: the coordinator prints the run's report
        let _ = text;
    }
    fn progress(&self, p: &Progress) {
        self.inner.progress(p)
    }
    fn second(&self, s: &SecondReport<'_>) {
        let c = &s.delta.counts;
        let row = Interval {
            segment: self.segment,
            seq: s.second as u32,
            ok: c.ok,
            failed: c.failed(),
            skipped: c.skipped,
            retried: c.retried,
            retries: c.retries,
            latency_sum_us: s.delta.latency.sum,
            cpu_s: crate::metrics::process_cpu_seconds(),
            histogram: Some(pgrig_fleet::codec::histogram_text(s.histogram)),
        };
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send(row);
        }
    }
    fn init_progress(&self) -> InitProgress {
        self.inner.init_progress()
    }
    fn phase(&self, label: &str, rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        self.inner.phase(label, rows)
    }
}
