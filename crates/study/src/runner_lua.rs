//! A study point that runs a sysbench Lua script (`sysbench = "SCRIPT.lua"`) through
//! `pgrig_lua`: the script's `prepare` as sysbench's prepare command (its `cleanup` first when
//! the target holds an earlier dataset of the study), the point's warm-up (an unmeasured `run`),
//! and a measured `run` whose run document
//! the runner stores like any other. sysbench's report is not printed (the study reports the
//! run); the script's own FATAL lines are, and fail the study with the command named.

use pgrig_engine::document::RunDocument;
use pgrig_engine::StopHandle;

use crate::error::StudyError;
use crate::managed::Managed;
use crate::plan::Point;
use crate::workload::LuaPoint;

/// `cleanup` (when `replacing` an earlier dataset), then `prepare`, on the target `m`.
pub fn prepare(
    m: &Managed,
    point: &Point,
    lp: &LuaPoint,
    replacing: bool,
) -> Result<(), StudyError> {
    let commands: &[&str] = if replacing {
        &["cleanup", "prepare"]
    } else {
        &["prepare"]
    };
    for &cmd in commands {
        let conn = m.endpoint.conn_args(None)?;
        let inv = (point.workload).lua_invocation(&lp.script, &lp.options, cmd, conn);
        let code = pgrig_lua::run(inv);
        if code != 0 {
            return Err(failed(lp, cmd, code));
        }
    }
    Ok(())
}

/// One measured `run` of the script; its run document. A `stop` (Ctrl-C) ends the run early,
/// as the engine's runs end, and the study with it (the partial run is not stored).
pub fn run(
    m: &Managed,
    point: &Point,
    lp: &LuaPoint,
    stop: &StopHandle,
) -> Result<RunDocument, StudyError> {
    let conn = m.endpoint.conn_args(point.workload.isolation.as_deref())?;
    let inv = (point.workload).lua_invocation(&lp.script, &lp.options, "run", conn);
    let outcome = pgrig_lua::run_stoppable(inv, None, Some(stop.clone()));
    if outcome.interrupted() || stop.requested() {
        return Err(StudyError::Interrupted);
    }
    if outcome.code != 0 {
        return Err(failed(lp, "run", outcome.code));
    }
    let version = m.admin().map(|db| db.version()).unwrap_or_default();
    outcome.document(&version).ok_or_else(|| {
        StudyError::Refused(format!(
            "sysbench script \"{}\": its run measured nothing",
            lp.script.display()
        ))
    })
}

/// The point's warm-up: the script's `run` for `seconds`, unmeasured (nothing stored).
pub fn warm_up(
    m: &Managed,
    point: &Point,
    lp: &LuaPoint,
    seconds: u64,
    stop: &StopHandle,
) -> Result<(), StudyError> {
    let conn = m.endpoint.conn_args(point.workload.isolation.as_deref())?;
    let mut inv = (point.workload).lua_invocation(&lp.script, &lp.options, "run", conn);
    (inv.time, inv.events) = (seconds, 0);
    for (name, value) in inv.general.iter_mut() {
        match name.as_str() {
            "time" => *value = pgrig_lua::OptValue::Int(seconds as i64),
            "events" => *value = pgrig_lua::OptValue::Int(0),
            _ => {}
        }
    }
    let outcome = pgrig_lua::run_stoppable(inv, None, Some(stop.clone()));
    if outcome.interrupted() || stop.requested() {
        return Err(StudyError::Interrupted);
    }
    match outcome.code {
        0 => Ok(()),
        code => Err(failed(lp, "run (warm-up)", code)),
    }
}

fn failed(lp: &LuaPoint, cmd: &str, code: i32) -> StudyError {
    StudyError::Refused(format!(
        "sysbench script \"{}\": its `{cmd}` command failed (status {code}; its messages are above)",
        lp.script.display()
    ))
}
