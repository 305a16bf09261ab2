//! A script file on the command line: the invocation handed to `pgrig_lua` (the Lua runtime
//! with sysbench's API) — the script, its command, the options left for it, and the general
//! options as `sysbench.opt` shows them.

use pgrig_lua::{Invocation, OptValue};

use super::cmdline::CmdLine;
use std::io::Read;

use super::db::Db;
use super::general::{Exit, General, Pg, Phase};
use super::live::Live;
use super::options::{Section, GENERAL_OPTIONS};
use super::outputs::Outputs;
use super::seam::OptKind;

/// The general options as `sysbench.opt` holds them (names with `_`).
fn general_values(c: &CmdLine) -> Vec<(String, OptValue)> {
    GENERAL_OPTIONS
        .iter()
        .filter(|o| o.section != Section::Pgrig)
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

/// Runs `file` (found for the test argument `name`; `source`: its text, when it is standard
/// input) through the Lua runtime; a `run` with `--json`/`--store` then writes its document,
/// and with `--metrics-addr` serves its live metrics while it runs.
pub fn run(
    (c, args): (&CmdLine, &[String]),
    (name, file, source): (&str, &str, Option<Vec<u8>>),
    general: &General,
    pg: &Pg,
) -> i32 {
    let measured = c.command.as_deref() == Some("run");
    let ready = measured
        .then(|| Ok::<_, Exit>((Outputs::read(c)?, Live::start(c)?)))
        .transpose();
    let (outputs, live) = match ready {
        Ok(o) => o.unwrap_or_default(),
        Err(e) => {
            print!("{}", e.stdout);
            eprint!("{}", e.stderr);
            return e.code;
        }
    };
    let inv = invocation((c, args), (name, file, source), general, pg.conn_args());
    let stop = pgrig_engine::StopHandle::default();
    if measured {
        crate::interrupt::on_interrupt(stop.clone());
    }
    let each_second = live.as_ref().map(Live::each_second);
    let outcome = pgrig_lua::run_stoppable(inv, each_second, Some(stop));
    if let Some(live) = live {
        live.finish();
    }
    // Ctrl-C: the report covers what ran, the document is written, status 130
    let code = match outcome.code {
        0 if outcome.interrupted() => 130,
        code => code,
    };
    if !outputs.wanted() {
        return code;
    }
    let version = Db::connect(pg, Phase::Cleanup).map_or(String::new(), |db| db.server_version());
    let Some(doc) = outcome.document(&version) else {
        return code;
    };
    let written = outputs.write(&doc, name, args);
    if code != 0 {
        code
    } else {
        written
    }
}

/// The Lua runtime's invocation from the parsed command line, connecting with `conn`.
pub fn invocation(
    (c, args): (&CmdLine, &[String]),
    (name, file, source): (&str, &str, Option<Vec<u8>>),
    general: &General,
    conn: pgrig_wire::ConnArgs,
) -> Invocation {
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
        .chain(args.iter().cloned())
        .collect();
    Invocation {
        source: source.clone(),
        name: name.to_string(),
        script: file.into(),
        // a script on standard input only runs its body, as in sysbench
        command: c.command.clone().filter(|_| source.is_none()),
        argv,
        script_args: c.rest.clone(),
        general: values,
        threads: general.threads,
        events: general.events,
        time: general.time,
        forced_shutdown: general.forced_shutdown,
        rate: general.rate,
        report_interval: general.report_interval,
        rand_seed: general.rand_seed,
        rand_type: c.value("rand-type").unwrap_or("special").to_string(),
        percentile: general.percentile,
        histogram: general.histogram,
        notices: general.notices,
        ps_mode_disable: general.ps_mode_disable,
        driver: c.value("db-driver").unwrap_or("pgsql").to_string(),
        conn,
    }
}

/// The script on standard input (no test named, or `-`), as sysbench runs it.
pub fn run_stdin(
    (c, args): (&CmdLine, &[String]),
    general: &General,
    pg: &Pg,
) -> Result<i32, Exit> {
    let mut source = Vec::new();
    std::io::stdin()
        .read_to_end(&mut source)
        .map_err(|e| Exit::fatal(format!("cannot read the script from standard input: {e}")))?;
    Ok(run((c, args), ("-", "-", Some(source)), general, pg))
}
