//! What every `pgrig worker` does, whatever it runs (pgbench scripts or a sysbench Lua script;
//! the cli's `worker` and `worker_lua`): finding the run to join (only
//! a waiting run of its kind whose coordinator is alive), registering as failed with the reason
//! it refuses a run, proving its target and clock and registering, waiting for the shared start
//! instant, and the reporter thread writing its interval rows and heartbeats.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::db::Db;
use crate::protocol::{self, Interval, Registration, RunRow};
use crate::share::SegmentId;
use crate::{clock, FleetError};
use pgrig_engine::StopHandle;

/// Who a worker is and which run it joins: its command line (`pgrig worker`) as plain data.
#[derive(Clone, Debug)]
pub struct Joining {
    /// `--segment I/N`
    pub segment: SegmentId,
    /// `--run ID`: this run only
    pub run: Option<i64>,
    /// `--options-digest HEX`: a prefix of the options digest, lower-case
    pub options_digest: Option<String>,
    /// `--max-clock-offset MS`
    pub max_clock_offset: f64,
    /// `--wait SEC`: for the run and its start
    pub wait: u64,
    /// this host's name, as it registers
    pub host: String,
}

/// The run to join, polled for until `--wait` has passed: `--run ID` only while it waits for
/// workers and its coordinator is alive; else the newest such run of N segments (with
/// `--options-digest`, of those options).
pub fn wait_for_run(db: &mut Db, a: &Joining, kind: &str) -> Result<RunRow, FleetError> {
    let until = Instant::now() + Duration::from_secs(a.wait);
    let digest = a.options_digest.as_deref();
    loop {
        if let Some(r) = protocol::find_run_of(db, kind, a.run, a.segment.count, digest)? {
            if r.segments != a.segment.count {
                return Err(FleetError::new(format!(
                    "run {} has {} segments, not {} (--segment {}/{})",
                    r.id, r.segments, a.segment.count, a.segment.index, a.segment.count
                )));
            }
            if let Some(why) = not_joinable(&r, digest, kind) {
                return Err(FleetError::new(format!("run {}: not joining: {why}", r.id)));
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
            return Err(FleetError::new(format!(
                "{which} at the coordinator \"{}\" after {} s; start it with `{} \
                 --segments {} --coordinator URL ...`",
                db.shown,
                a.wait,
                if kind == crate::lua_script::KIND {
                    "pgrig sysbench SCRIPT.lua"
                } else {
                    "pgrig bench"
                },
                a.segment.count
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Why run `r` (found by its id) cannot be joined: not waiting, coordinator gone, other options.
fn not_joinable(r: &RunRow, digest: Option<&str>, kind: &str) -> Option<String> {
    if r.kind != kind {
        return Some(if r.kind == crate::lua_script::KIND {
            "it runs a sysbench Lua script: give this worker --lua-script FILE".to_string()
        } else {
            format!(
                "it is a {} run, not a Lua script's (drop --lua-script)",
                r.kind
            )
        });
    }
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

/// Registers this worker as failed with `e` (the coordinator reports why); `e`.
pub fn refuse(db: &mut Db, run: &RunRow, a: &Joining, e: FleetError) -> FleetError {
    let me = Registration {
        segment: a.segment.index,
        host: a.host.clone(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        version: env!("CARGO_PKG_VERSION").into(),
        offset_ms: 0.0,
        error_ms: 0.0,
        target: String::new(),
    };
    let _ = protocol::register(db, run.id, &me, Some(&e.0));
    e
}

/// Proves the target (`target`: its fingerprint, or the refusal) and the clock, and registers
/// (as failed when the clock is refused); the clock offset.
pub fn register(
    db: &mut Db,
    run: &RunRow,
    a: &Joining,
    target: Result<String, FleetError>,
) -> Result<clock::Offset, FleetError> {
    let target = match target {
        Ok(t) => t,
        Err(e) => return Err(refuse(db, run, a, e)),
    };
    let offset = clock::measure(db, 8)?;
    let me = Registration {
        segment: a.segment.index,
        host: a.host.clone(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        version: env!("CARGO_PKG_VERSION").into(),
        offset_ms: offset.offset_ms,
        error_ms: offset.error_ms,
        target,
    };
    let refused = clock::check(offset, a.max_clock_offset).err();
    protocol::register(db, run.id, &me, refused.as_ref().map(|e| e.0.as_str()))?;
    match refused {
        Some(e) => Err(e),
        None => Ok(offset),
    }
}

/// Waits for the shared start instant (database clock, corrected by this host's offset); false
/// when the run was stopped first.
pub fn wait_for_start(
    db: &mut Db,
    run: &RunRow,
    offset_ms: f64,
    wait: u64,
) -> Result<bool, FleetError> {
    let Some(at) = start_instant(db, run, offset_ms, wait)? else {
        return Ok(false);
    };
    std::thread::sleep(at.saturating_duration_since(Instant::now()));
    Ok(true)
}

/// Waits until the coordinator has set the shared start instant and returns it by this host's
/// clock (database clock, corrected by this host's offset); none when the run was stopped
/// first.
pub fn start_instant(
    db: &mut Db,
    run: &RunRow,
    offset_ms: f64,
    wait: u64,
) -> Result<Option<Instant>, FleetError> {
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
                    return Err(FleetError::new(format!(
                        "run {}: refused: its start instant is {:.0} s away (beyond --wait {wait})",
                        run.id,
                        ahead / 1000.0
                    )));
                }
                return Ok(Some(
                    Instant::now() + Duration::from_secs_f64(ahead.max(0.0) / 1000.0),
                ));
            }
            ("waiting", _) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(50))
            }
            ("waiting", _) => {
                return Err(FleetError::new(format!(
                    "run {} did not start within {wait} s (not every segment registered?)",
                    run.id
                )))
            }
            ("failed", _) => {
                return Err(FleetError::new(format!(
                    "run {} was cancelled before it started (the coordinator says why)",
                    run.id
                )))
            }
            _ => return Ok(None),
        }
    }
}

/// Every interval: the intervals reported so far and a heartbeat in one transaction, then the
/// run's state (`stopping`: stop the clients). Rows that could not be written are kept for the
/// next try. Its error and warning lines go to `say`. Hands the connection back at the end.
pub fn report_loop(
    mut db: Db,
    (run, segment, interval_ms): (i64, u32, u32),
    rx: Receiver<Interval>,
    stop: &StopHandle,
    done: &AtomicBool,
    say: &dyn Fn(&str),
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
                    say(&format!(
                        "pgrig: error: {}",
                        coordinator_gone(run, rs.coordinator_silent_s)
                    ));
                    stop.stop();
                }
            }
            Err(e) if !warned => {
                say(&format!("pgrig: warning: {e}"));
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

pub fn coordinator_gone(run: i64, silent_s: f64) -> FleetError {
    FleetError::new(format!(
        "the coordinator of run {run} has not been seen for {silent_s:.0} s: stopping (nobody \
         would merge this segment's work)"
    ))
}
