//! `pgrig worker --segment I/N --coordinator URL --lua-script FILE [--target URL]`: one segment
//! of a sysbench Lua script's run (`pgrig sysbench SCRIPT.lua --segments N --coordinator URL
//! ... run`). The trust boundary: a Lua script is code with the user's rights, so the worker
//! never runs text from the coordination schema — the run names its script by file name and
//! SHA-256 and the worker runs its own `--lua-script` file of that digest (else it registers as
//! failed, naming the digest and how to fix it); it takes run options only (checked again,
//! `crate::sysbench::fleet_options`; the script's own options checked against its
//! declarations), never where to connect: its target is its own `--target` or libpq's
//! environment. It runs its block of global thread ids, its share of `--events` and `--rate`,
//! begins at the shared instant, writes an interval row per second (with the second's queries
//! by class, reconnects and threads running: the coordinator's interval lines) and hands its
//! tally in.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};

use pgrig_engine::StopHandle;
use pgrig_fleet::db::Db;
use pgrig_fleet::lua_script::{self, ScriptRef};
use pgrig_fleet::protocol::{self, Interval, LuaSecond, RunRow};
use pgrig_fleet::FleetError;
use pgrig_lua::segment::{share_of, threads_of, SegmentPart};
use pgrig_lua::{Invocation, ScriptOptions};

use crate::sysbench::cmdline::CmdLine;
use crate::sysbench::general::General;
use crate::worker_args::{self, WorkerArgs};
use pgrig_fleet::{join, worker_run};

/// What this segment runs: the whole run's command line and general options (checked), the
/// invocation cut to this segment, and the segment's part.
struct Plan {
    inv: Invocation,
    first: u32,
    total: u32,
    rate: f64,
}

/// The run's stored options checked and parsed for `file`, cut to this segment.
fn plan(run: &RunRow, a: &WorkerArgs, file: &Path) -> Result<Plan, FleetError> {
    let refused = |why: String| FleetError::new(format!("run {}: refused: {why}", run.id));
    crate::sysbench::fleet_options::check_stored(&run.args).map_err(refused)?;
    if !(100..=60_000).contains(&run.interval_ms) {
        return Err(refused(format!(
            "its interval of {} ms is not within 100 to 60000 ms",
            run.interval_ms
        )));
    }
    let path = file.to_string_lossy().into_owned();
    let mut args = run.args.clone();
    args.extend([path.clone(), "run".to_string()]);
    let c = CmdLine::parse(&args).map_err(|u| refused(u.0))?;
    let general = General::read(&c).map_err(|e| {
        refused(format!(
            "its options: {}{}",
            e.stdout.trim(),
            e.stderr.trim()
        ))
    })?;
    let seg = a.segment;
    let total = general.threads;
    if total < seg.count {
        return Err(refused(format!(
            "{} segments need at least {} threads (--threads={total})",
            seg.count, seg.count
        )));
    }
    let conn = pgrig_wire::ConnArgs {
        dbname: a.target.clone(),
        ..Default::default()
    };
    let mut inv =
        crate::sysbench::lua::invocation((&c, &args), (&path, &path, None), &general, conn);
    script_options_known(&c, &inv, file).map_err(refused)?;
    let (first, n) = threads_of(seg.index, seg.count, total);
    pgrig_fleet::bounds::segment_clients("threads", total, n).map_err(refused)?;
    inv.threads = n;
    if general.events > 0 {
        inv.events = share_of(general.events, first, n, total);
        if inv.events == 0 {
            return Err(refused(format!(
                "--events={} leaves segment {} no event",
                general.events, seg.index
            )));
        }
    }
    let rate = general.rate as f64 * f64::from(n) / f64::from(total);
    Ok(Plan {
        inv,
        first,
        total,
        rate,
    })
}

/// Every script option of `c` is one the script takes: declared in `sysbench.cmdline.options`,
/// or, for a script without declarations (sysbench 0.5's, whose options become globals), one
/// that replaces none of the script's globals (`--event=x` would replace its `event`).
fn script_options_known(c: &CmdLine, inv: &Invocation, file: &Path) -> Result<(), String> {
    let rule = pgrig_lua::script_options(inv.clone())?;
    let bad = c.rest.iter().find(|(name, _, _)| match &rule {
        ScriptOptions::Declared(names) => !names.contains(name),
        ScriptOptions::Globals { taken } => taken.contains(name),
    });
    match (bad, &rule) {
        (None, _) => Ok(()),
        (Some((_, _, raw)), ScriptOptions::Declared(_)) => Err(format!(
            "stored option {} is not one of {}'s options",
            raw.escape_debug(),
            file.display()
        )),
        (Some((name, _, raw)), ScriptOptions::Globals { .. }) => Err(format!(
            "stored option {} would replace {}'s global {name}",
            raw.escape_debug(),
            file.display()
        )),
    }
}

/// The target's fingerprint and server version (a refusal when it cannot be reached).
fn target(conn: &pgrig_wire::ConnArgs) -> Result<(String, String), FleetError> {
    let fp = pgrig_fleet::target::fingerprint(conn)?.to_string();
    let mut db = Db::connect_args(conn, "the target")?;
    let version = db.value("SHOW server_version")?.unwrap_or_default();
    Ok((fp, version))
}

/// The Lua worker; its exit status.
pub fn work(a: &WorkerArgs) -> Result<i32, FleetError> {
    let seg = a.segment;
    worker_args::check_args(a)?;
    let j = a.joining();
    let local = worker_run::local_scripts(&a.lua_script)?;
    let mut db = Db::connect(&a.coordinator)?;
    let run = join::wait_for_run(&mut db, &j, lua_script::KIND)?;
    let ready = ScriptRef::decode(&run.scripts)
        .map_err(|e| FleetError::new(format!("run {}: refused: {e}", run.id)))
        .and_then(|s| Ok((worker_run::matching(&run, &s, &local)?, s)))
        .and_then(|(f, s)| Ok((plan(&run, a, &f)?, f, s)));
    let (plan, file, script) = match ready {
        Ok(p) => p,
        Err(e) => return Err(join::refuse(&mut db, &run, &j, e)),
    };
    eprintln!(
        "pgrig: run {}: script {} (sha256 {}) is {}",
        run.id,
        script.name,
        script.sha256,
        file.display()
    );
    let measured = target(&plan.inv.conn);
    let version = measured.as_ref().map(|m| m.1.clone()).unwrap_or_default();
    let offset = join::register(&mut db, &run, &j, measured.map(|m| m.0))?;
    eprintln!(
        "pgrig: segment {}/{} of run {}: threads {}..{} of {}, clock offset {:+.3} ms (± {:.3} ms)",
        seg.index,
        seg.count,
        run.id,
        plan.first,
        plan.first + plan.inv.threads - 1,
        plan.total,
        offset.offset_ms,
        offset.error_ms
    );
    let Some(at) = join::start_instant(&mut db, &run, offset.offset_ms, a.wait)? else {
        eprintln!(
            "pgrig: the coordinator stopped run {} before it started",
            run.id
        );
        let _ = protocol::finish(&mut db, run.id, seg.index, Err("stopped before the start"));
        return Ok(130);
    };
    let part = SegmentPart {
        first_thread: plan.first,
        total_threads: plan.total,
        rate: plan.rate,
        start_at: Some(at),
        stop: StopHandle::default(),
    };
    run_segment(db, &run, a, (plan.inv, part), &version)
}

/// Runs the segment with a reporter thread writing an interval row per second and heartbeats;
/// hands the tally in. The exit status: the script's, 130 when stopped from outside.
fn run_segment(
    db: Db,
    run: &RunRow,
    a: &WorkerArgs,
    (inv, part): (Invocation, SegmentPart),
    version: &str,
) -> Result<i32, FleetError> {
    let seg = a.segment.index;
    let stop = part.stop.clone();
    crate::interrupt::on_interrupt(stop.clone());
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    let hook: Box<pgrig_lua::stats::SecondFn> = Box::new(move |n, s, h| {
        let row = Interval {
            segment: seg,
            seq: n as u32,
            ok: s.events,
            retries: s.errors,
            latency_sum_us: s.latency_sum_ms * 1e3,
            cpu_s: crate::metrics::process_cpu_seconds(),
            histogram: Some(pgrig_fleet::codec::histogram_text(h)),
            lua: Some(LuaSecond {
                reads: s.reads,
                writes: s.writes,
                other: s.other,
                reconnects: s.reconnects,
                threads: s.threads,
            }),
            ..Interval::default()
        };
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(row);
        }
    });
    let done = Arc::new(AtomicBool::new(false));
    let reporter = {
        let (stop, done, run_id, ms) = (stop.clone(), done.clone(), run.id, run.interval_ms);
        std::thread::spawn(move || {
            let say = |l: &str| eprintln!("{l}");
            join::report_loop(db, (run_id, seg, ms), rx, &stop, &done, &say)
        })
    };
    let outcome = pgrig_lua::run_segment(inv, part, Some(hook));
    done.store(true, Ordering::SeqCst);
    let mut db = reporter
        .join()
        .map_err(|_| FleetError::new("the reporter thread panicked"))?;
    let Some(tally) = outcome.tally() else {
        let why = format!(
            "the script's run did not start (exit status {}; the worker's output says why)",
            outcome.code
        );
        let _ = protocol::finish(&mut db, run.id, seg, Err(&why));
        return Err(FleetError::new(why));
    };
    let text = pgrig_fleet::lua_codec::encode(&tally, version);
    protocol::finish(&mut db, run.id, seg, Ok(&text))?;
    eprintln!(
        "pgrig: segment {}/{} done: {} events",
        seg, a.segment.count, tally.events
    );
    Ok(if stop.requested() && outcome.code == 0 {
        130
    } else {
        outcome.code
    })
}
