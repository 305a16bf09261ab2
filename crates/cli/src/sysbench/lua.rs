//! A script file on the command line: the invocation handed to `pgrig_lua` (the Lua runtime
//! with sysbench's API) — the script, its command, the options left for it, and the general
//! options as `sysbench.opt` shows them.

use pgrig_lua::{Invocation, OptValue};

use super::cmdline::CmdLine;
use super::general::{General, Pg};
use super::options::GENERAL_OPTIONS;
use super::seam::OptKind;

/// The general options as `sysbench.opt` holds them (names with `_`).
fn general_values(c: &CmdLine) -> Vec<(String, OptValue)> {
    GENERAL_OPTIONS
        .iter()
        .map(|o| {
            let v = match o.kind {
                OptKind::Bool => OptValue::Bool(c.flag(o.name)),
                OptKind::Int => OptValue::Int(
                    c.value(o.name)
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0),
                ),
                OptKind::Float | OptKind::Str => {
                    OptValue::Str(c.value(o.name).unwrap_or("").to_string())
                }
            };
            (o.name.replace('-', "_"), v)
        })
        .collect()
}

/// Runs `file` (found for the test argument `name`) through the Lua runtime.
pub fn run(c: &CmdLine, name: &str, file: &str, general: &General, pg: &Pg) -> i32 {
    let mut values = general_values(c);
    // the deprecated aliases' values are the ones in force
    for (key, v) in [
        ("threads", general.threads as i64),
        ("events", general.events as i64),
        ("time", general.time as i64),
    ] {
        if let Some(slot) = values.iter_mut().find(|(n, _)| n == key) {
            slot.1 = OptValue::Int(v);
        }
    }
    let argv = std::iter::once("sysbench".to_string())
        .chain(std::env::args().skip_while(|a| !a.ends_with("sysbench")).skip(1))
        .collect();
    pgrig_lua::run(Invocation {
        name: name.to_string(),
        script: file.into(),
        command: c.command.clone(),
        argv,
        script_args: c.rest.clone(),
        general: values,
        threads: general.threads,
        events: general.events,
        time: general.time,
        report_interval: general.report_interval,
        rand_seed: general.rand_seed,
        rand_type: c.value("rand-type").unwrap_or("special").to_string(),
        percentile: general.percentile,
        histogram: general.histogram,
        notices: general.notices,
        ps_mode_disable: general.ps_mode_disable,
        driver: c.value("db-driver").unwrap_or("pgsql").to_string(),
        conn: pg.conn_args(),
    })
}
