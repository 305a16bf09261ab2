//! `run`: `init()` in the main state, then `--threads` threads, each with its own state,
//! calling `thread_init`, `event` until the limits (`--events`, `--time`, an event that returns
//! a value to stop), and `thread_done`; the main thread prints the header, the interval reports
//! (or calls `sysbench.hooks.report_intermediate`), and at the end the report (or
//! `report_cumulative`), then calls `done()`. How the run ends — the limits, sysbench's
//! `--forced-shutdown`, a stop from outside — is [`crate::ending`]'s.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use mlua::{Function, Lua, Table};

use crate::ending::{self, Cut};
use crate::pace::{self, Pace};
use crate::report::{self, Figures};
use crate::state::{self, Shared};
use crate::stats::{Finished, ThreadEnd};
use pgrig_engine::cpu::thread_reading;

/// A thread's result: its events, the seconds spent in them, its CPU over the event loop.
type ThreadResult = ThreadEnd;

/// A thread that ran no events.
fn idle() -> ThreadResult {
    ThreadEnd::default()
}

/// Thread `tid`'s index in this run (its slot in [`Shared::progress`]).
fn index(sh: &Shared, tid: u32) -> usize {
    (tid - sh.segment.as_ref().map_or(0, |p| p.first_thread)) as usize
}

/// One worker thread: its state, then events until told to stop.
fn worker(
    sh: Arc<Shared>,
    tid: u32,
    start: Arc<Barrier>,
    (issued, pace): (Arc<AtomicU64>, Arc<Option<Pace>>),
) -> ThreadResult {
    let failed = |line: String| {
        if let Ok(mut v) = sh.init_errors.lock() {
            v.push(line);
        }
    };
    let lua = match state::new_state(&sh, tid, sh.run_stream(tid)) {
        Ok(l) => Some(l),
        Err(msg) => {
            failed(format!("FATAL: {msg}"));
            None
        }
    };
    if let Some(lua) = &lua {
        if let Err(msg) = read_options(lua).and_then(|_| hook(lua, "thread_init", tid)) {
            failed(format!("FATAL: `thread_init' function failed: {msg}"));
        }
    }
    start.wait();
    // the main thread reads the failures between the two waits
    start.wait();
    let Some(lua) = lua.filter(|_| !sh.stop.load(Relaxed)) else {
        return idle();
    };
    let origin = Instant::now();
    let cpu0 = thread_reading(origin);
    sh.progress.began(index(&sh, tid), cpu0, origin);
    // a script's own thread body replaces the event loop
    let (events, busy_s) = match state::global_fn(&lua, "thread_run") {
        Some(f) => {
            // its loop reaches the limits through `sb_more_events` and counts its events
            // through `sb_event_start/stop`, as sysbench's own `thread_run`
            let (sh2, issued2, pace2) = (sh.clone(), issued.clone(), pace.clone());
            crate::exports::start_loop(Box::new(move || {
                more_events(&sh2, &issued2, pace2.as_ref().as_ref())
            }));
            let failed = state::call(&lua, &f, tid);
            let counts = crate::exports::end_loop();
            if let Some(msg) = failed {
                fatal_once(
                    &sh,
                    tid,
                    &format!("FATAL: `thread_run' function failed: {msg}"),
                );
            }
            counts
        }
        None => events(&lua, &sh, tid, (&issued, pace.as_ref().as_ref())),
    };
    let res = ThreadEnd {
        events,
        busy_s,
        cpu: thread_reading(origin).since(&cpu0),
        unfinished_s: None,
    };
    if let Err(msg) = hook(&lua, "thread_done", tid) {
        println!("FATAL: `thread_done' function failed: {msg}");
        sh.fatal.store(true, Relaxed);
    }
    res
}

/// The first thread whose event fails says so (with its driver's lines); the run stops, and
/// threads failing after it (the same error, as likely as not) stay silent, as sysbench reports
/// one thread's error.
fn fatal_once(sh: &Shared, tid: u32, line: &str) {
    sh.fatal.store(true, Relaxed);
    if sh.claim_fatal(tid) {
        println!("{line}");
    }
}

fn read_options(lua: &Lua) -> Result<(), String> {
    state::read_options(lua).map(drop)
}

/// Calls global `name(tid)` if the script defines it.
fn hook(lua: &Lua, name: &str, tid: u32) -> Result<(), String> {
    match state::global_fn(lua, name) {
        Some(f) => state::call(lua, &f, tid).map_or(Ok(()), Err),
        None => Ok(()),
    }
}

/// Whether the thread runs another event (`sb_more_events`): the run goes on, `--events` has
/// one left (taken), and under `--rate` its scheduled time came (waited for).
fn more_events(sh: &Shared, issued: &AtomicU64, pace: Option<&Pace>) -> bool {
    if sh.stop.load(Relaxed) {
        return false;
    }
    let limit = sh.inv.events;
    if limit > 0 && issued.fetch_add(1, Relaxed) >= limit {
        return false;
    }
    if let Some(p) = pace {
        let at = p.next();
        if !pace::wait_until(at, &sh.stop) {
            return false;
        }
        sh.stats.lagged(at.elapsed().as_secs_f64() * 1e3);
    }
    true
}

/// The event loop of one thread.
fn events(
    lua: &Lua,
    sh: &Shared,
    tid: u32,
    (issued, pace): (&AtomicU64, Option<&Pace>),
) -> (u64, f64) {
    let run: Function = match lua
        .globals()
        .get::<Table>("__pgrig_rt")
        .and_then(|t| t.get("event"))
    {
        Ok(f) => f,
        Err(e) => {
            println!("FATAL: {}", state::message(&e));
            sh.fatal.store(true, Relaxed);
            return (0, 0.0);
        }
    };
    let (mut n, mut busy) = (0u64, 0.0f64);
    while more_events(sh, issued, pace) {
        let t0 = Instant::now();
        sh.progress.event_start(index(sh, tid));
        let mut restarted = false;
        let outcome = loop {
            let r: Result<(String, Option<String>), _> = run.call(tid);
            match r {
                // the failed statement counted its error (sql.rs), as sysbench's driver does
                Ok((s, _)) if s == "restart" => {
                    if !restarted {
                        restarted = true;
                        sh.stats.restarted.add(1);
                    }
                    if sh.stop.load(Relaxed) {
                        break Ok("stop".to_string());
                    }
                }
                Ok((s, msg)) if s == "fatal" => break Err(msg.unwrap_or_default()),
                Ok((s, _)) => break Ok(s),
                Err(e) => break Err(state::message(&e)),
            }
        };
        let ns = t0.elapsed().as_nanos() as u64;
        sh.progress.event_end(index(sh, tid), ns, outcome.is_ok());
        match outcome {
            // an event that stops its thread is not counted, as in sysbench (which also
            // takes no latency for it)
            Ok(s) if s == "stop" => break,
            Ok(_) => {
                sh.stats.event(ns);
                n += 1;
                busy += ns as f64 / 1e9;
            }
            Err(msg) => {
                fatal_once(
                    sh,
                    tid,
                    &format!("FATAL: `thread_run' function failed: {msg}"),
                );
                sh.stop.store(true, Relaxed);
                break;
            }
        }
    }
    (n, busy)
}

/// The worker threads, each waiting at `start` (a panic inside one is reported, never a crash).
fn spawn_workers(
    sh: &Arc<Shared>,
    start: &Arc<Barrier>,
) -> Vec<std::io::Result<thread::JoinHandle<ThreadResult>>> {
    let issued = Arc::new(AtomicU64::new(0));
    // a segment's threads take their global ids, its schedule its share of the rate
    let (first, rate, seed) = match &sh.segment {
        Some(p) => (
            p.first_thread,
            p.rate,
            sh.seed ^ u64::from(p.first_thread).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
        None => (0, sh.inv.rate as f64, sh.seed),
    };
    let pace = Arc::new(Pace::new(rate, seed));
    (first..first + sh.inv.threads.max(1))
        .map(|tid| {
            let (sh, start) = (sh.clone(), start.clone());
            let (issued, pace) = (issued.clone(), pace.clone());
            thread::Builder::new()
                .name(format!("lua-{tid}"))
                .spawn(move || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker(sh.clone(), tid, start, (issued, pace))
                    }))
                    .unwrap_or_else(|_| {
                        println!("FATAL: thread {tid} stopped on an internal error");
                        idle()
                    })
                })
        })
        .collect()
}

/// `run` with the main state `lua` (the script loaded, options read). Returns the status.
pub fn run(lua: &Lua, sh: &Arc<Shared>) -> i32 {
    if state::global_fn(lua, "event").is_none() {
        println!(
            "FATAL: cannot find the event() function in {}",
            sh.inv.script.display()
        );
        return 1;
    }
    if let Some(f) = state::global_fn(lua, "init") {
        let _deadline = crate::watchdog::time_limit(sh.inv.time, "init()");
        if let Some(msg) = state::call(lua, &f, ()) {
            println!("FATAL: `init' function failed: {msg}");
            return 1;
        }
    }
    let inv = &sh.inv;
    if inv.notices {
        print!("{}", report::header(inv));
    }
    let start = Arc::new(Barrier::new(inv.threads.max(1) as usize + 1));
    // sysbench's limit on the threads' initialisation (a `thread_init()` that never returns)
    let init_deadline = crate::watchdog::Watchdog::arm(
        crate::watchdog::THREAD_INIT_TIMEOUT,
        format!(
            "FATAL: Worker threads failed to initialize within {} seconds!",
            crate::watchdog::THREAD_INIT_TIMEOUT.as_secs()
        ),
        2,
    );
    let handles = spawn_workers(sh, &start);
    start.wait();
    drop(init_deadline);
    let init_errors = sh.init_errors.lock().map(|v| v.clone()).unwrap_or_default();
    if !init_errors.is_empty() {
        sh.stop.store(true, Relaxed);
    } else if inv.notices {
        print!("Threads started!\n\n");
    }
    wait_for_start(sh);
    start.wait();
    if !init_errors.is_empty() {
        print!("{}", dedup(&init_errors));
        println!("FATAL: Thread initialization failed!");
        return 1;
    }
    let began = Instant::now();
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let ended = ending::watch(lua, sh, &handles, began);
    let elapsed = began.elapsed().as_secs_f64();
    let threads = ending::threads(sh, handles, ended.cut.is_some());
    let per_thread = threads.iter().map(|t| (t.events, t.busy_s)).collect();
    let forced = ended.cut == Some(Cut::Forced);
    if let Ok(mut f) = sh.stats.finished.lock() {
        *f = Some(Finished {
            elapsed_s: elapsed,
            started_unix_s,
            seconds: ended.seconds,
            threads: threads.clone(),
            fatal: sh.fatal.load(Relaxed),
            interrupted: sh.interrupted.load(Relaxed),
            options: script_options(lua),
            forced,
        });
    }
    if sh.fatal.load(Relaxed) {
        return 1;
    }
    if ended.cut.is_some() {
        return ending::cut_report(lua, sh, elapsed, &threads, forced);
    }
    let fig = Figures::of(sh, elapsed, per_thread);
    report::cumulative(lua, sh, &fig);
    if let Some(f) = state::global_fn(lua, "done") {
        if let Some(msg) = state::call(lua, &f, ()) {
            println!("FATAL: `done' function failed: {msg}");
            return 1;
        }
    }
    0
}

/// A segment of a multi-host run begins its events at the shared instant (its threads are
/// initialised by then, or it begins at once); a stop request before it ends the wait.
fn wait_for_start(sh: &Shared) {
    let Some(p) = &sh.segment else { return };
    let Some(at) = p.start_at else { return };
    while !sh.stop.load(Relaxed) && !p.stop.requested() {
        let now = Instant::now();
        if now >= at {
            return;
        }
        thread::sleep((at - now).min(Duration::from_millis(10)));
    }
    sh.stop.store(true, Relaxed);
}

/// The script's declared options (`sysbench.cmdline.options`) with their values in
/// `sysbench.opt`, as text, by name.
pub fn script_options(lua: &Lua) -> Vec<(String, String)> {
    let code = r#"
        local out = {}
        for name in pairs(sysbench.cmdline.options or {}) do
            local v = sysbench.opt[name]
            if type(v) == "table" then v = table.concat(v, ",") end
            out[#out + 1] = {tostring(name), tostring(v)}
        end
        return out"#;
    let pairs: Vec<Vec<String>> = lua.load(code).eval().unwrap_or_default();
    let mut v: Vec<(String, String)> = (pairs.into_iter())
        .filter_map(|p| Some((p.first()?.clone(), p.get(1)?.clone())))
        .collect();
    v.sort();
    v
}

/// `lines` as sysbench's log prints them: a line repeated right after itself is counted
/// (`(last message repeated N times)`).
pub fn dedup(lines: &[String]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let n = lines[i..].iter().take_while(|l| **l == lines[i]).count();
        out += &lines[i];
        out.push('\n');
        if n > 1 {
            out += &format!("(last message repeated {} times)\n", n - 1);
        }
        i += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_lines_are_counted_as_sysbenchs_log_does() {
        let l = |s: &str| s.to_string();
        assert_eq!(
            dedup(&[l("a"), l("a"), l("a"), l("b")]),
            "a\n(last message repeated 2 times)\nb\n"
        );
    }
}
