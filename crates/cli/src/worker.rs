//! `pgrig worker --segment I/N --coordinator URL [--target URL] [--log-dir DIR]`: one segment of
//! a run spread over several client hosts. Finds the run the coordinator (`pgrig bench
//! --segments N --coordinator URL`) opened in the coordination schema, takes the run's options
//! and scripts from it — run options only and scripts as text, both checked, since anyone who
//! can write the schema can write them: its target is its own (`--target` or libpq's
//! environment), its logs go under its own `--log-dir` — registers (host, cores, version, clock
//! offset; or as failed, with the reason it refused the run), waits for the shared start
//! instant, runs its share of the clients, reports every interval and hands its statistics in
//! for the exact merge. With `--lua-script FILE` it runs a sysbench Lua script's run instead
//! (`crate::worker_lua`); what both do is `pgrig_fleet::join`'s, their
//! command line `crate::worker_args`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use pgrig_engine::config::BenchConfig;
use pgrig_engine::sink::{InitProgress, Level, PhaseDisplay, Progress, SecondReport, Sink};
use pgrig_engine::StopHandle;
use pgrig_fleet::db::Db;
use pgrig_fleet::protocol::{self, Interval, RunRow};
use pgrig_fleet::share::SegmentId;
use pgrig_fleet::FleetError;

use crate::sink::StderrSink;
use crate::worker_args::{self, WorkerArgs};
use pgrig_fleet::join;

pub fn main(args: &[String]) -> i32 {
    let a: WorkerArgs = match crate::own_args::parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let done = if a.lua_script.is_empty() {
        work(&a)
    } else {
        crate::worker_lua::work(&a)
    };
    match done {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

fn work(a: &WorkerArgs) -> Result<i32, FleetError> {
    let seg = a.segment;
    worker_args::check_args(a)?;
    let j = a.joining();
    let mut db = Db::connect(&a.coordinator)?;
    let run = join::wait_for_run(&mut db, &j, "pgbench")?;
    let own = pgrig_fleet::worker_run::Own {
        segment: a.segment,
        target: a.target.clone(),
        log_dir: a.log_dir.as_deref(),
    };
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let cfg = match pgrig_fleet::worker_run::bench_config(&run, &own, &env) {
        Ok(c) => c,
        Err(e) => return Err(join::refuse(&mut db, &run, &j, e)),
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
    let target = pgrig_fleet::target::fingerprint(&cfg.conn).map(|t| t.to_string());
    let offset = join::register(&mut db, &run, &j, target)?;
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
    if !join::wait_for_start(&mut db, &run, offset.offset_ms, a.wait)? {
        eprintln!(
            "pgrig: the coordinator stopped run {} before it started",
            run.id
        );
        let _ = protocol::finish(&mut db, run.id, seg.index, Err("stopped before the start"));
        return Ok(130);
    }
    run_segment(db, &run, seg, cfg)
}

/// pgbench's vacuum before the run (segment 0, before it registers), with pgbench's messages.
fn pre_run_vacuum(cfg: &BenchConfig) -> Result<(), FleetError> {
    eprint!("starting vacuum...");
    for e in pgrig_fleet::vacuum::pre_run(cfg)? {
        eprintln!("pgrig: error: {e}");
        eprintln!("pgrig: detail: (ignoring this error and continuing anyway)");
    }
    eprintln!("end.");
    Ok(())
}

/// Runs the segment with a reporter thread writing intervals and heartbeats; hands the result
/// in. The exit status follows `pgrig bench`'s.
fn run_segment(db: Db, run: &RunRow, seg: SegmentId, cfg: BenchConfig) -> Result<i32, FleetError> {
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
        std::thread::spawn(move || {
            let say = |l: &str| eprintln!("{l}");
            join::report_loop(db, (run_id, seg.index, ms), rx, &stop, &done, &say)
        })
    };
    let result = pgrig_engine::run_bench(cfg, sink, &stop);
    done.store(true, Ordering::SeqCst);
    let mut db = reporter
        .join()
        .map_err(|_| FleetError::new("the reporter thread panicked"))?;
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
            Err(FleetError::new(msg))
        }
    }
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
            lua: None,
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
