//! `pgrig replay` (and pgrig invoked as `pgreplay`): pgreplay 1.2's drop-in. Parses a log
//! (`-f`: into a replay file), replays a log or (`-r`) a replay file, and prints pgreplay's
//! statistics; the work is in the pgrig-replay crate.

mod cmdline;
mod progress;
mod store;

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::Path;

use pgrig_replay::replayer::{replay_with_progress, ReplayOptions};
use pgrig_replay::source::{count_items, log_parser, open_inputs, Source, SourceOptions};
use pgrig_replay::{changes, document, replayfile};
use pgrig_results::replay_doc::ReplayDocument;

use cmdline::{parse, Opts, Parsed};

/// pgrig invoked as `pgreplay`: `args` are the words after the program; returns the exit
/// status. The output is pgreplay's alone.
pub fn main(args: &[String]) -> i32 {
    match parse(args, false) {
        Parsed::Exit(code) => i32::from(code),
        Parsed::Run(o) => run(&o, false),
    }
}

/// `pgrig replay`: `args` are the words after `replay`. It takes several log files (the parts
/// of one rotated log, in order) and, after pgreplay's statistics, prints pgrig's lag report
/// (who was behind schedule, per second).
pub fn pgrig_main(args: &[String]) -> i32 {
    match parse(args, true) {
        Parsed::Exit(code) => i32::from(code),
        Parsed::Run(o) => run(&o, true),
    }
}

/// Lines of the per-second lag table at most.
const LAG_LINES: usize = 60;

fn eprint_bytes(b: &[u8]) {
    let mut e = io::stderr().lock();
    let _ = e.write_all(b);
    let _ = e.flush();
}

fn eline(s: &str) {
    eprint_bytes(format!("{s}\n").as_bytes());
}

/// The options that choose and read the input.
fn source_options(o: &Opts) -> SourceOptions {
    SourceOptions {
        infiles: o.infiles.clone(),
        replay_only: o.replay_only,
        parse_only: o.parse_only,
        csv: o.csv,
        begin: o.begin.clone(),
        end: o.end.clone(),
        backslash_quote: o.backslash_quote,
        compare: o.pgrig.compare,
    }
}

/// Opens the input; a failure's message goes to standard error.
fn open_source(o: &Opts) -> Result<Source, ()> {
    Source::open(&source_options(o)).map_err(|e| {
        if !e.0.is_empty() {
            eline(&e.0);
        }
    })
}

/// `pgrig replay`'s own options checked before anything is replayed: where `--json` and
/// `--store` go, and (`--compare`) that the log has statement durations — read until the
/// first one (a log that cannot be parsed is left to the replay, which reports it).
fn preflight(o: &Opts) -> Result<(), String> {
    if let Some(path) = &o.pgrig.json {
        pgrig_outfile::check(std::path::Path::new(path)).map_err(|e| {
            format!(
                "Error: could not open JSON result file \"{path}\": {}",
                pgrig_wire::strerror(&e)
            )
        })?;
    }
    if let Some(store) = &o.pgrig.store {
        pgrig_results::Store::check(store).map_err(|e| format!("Error: {e}"))?;
    }
    if let Some(f) = &o.pgrig.replayed_log {
        File::open(f).map_err(|e| {
            format!(
                "Error: --replayed-log: cannot open {f}: {}",
                pgrig_wire::strerror(&e)
            )
        })?;
    }
    if !o.pgrig.compare {
        return Ok(());
    }
    let so = source_options(o);
    let mut inputs = open_inputs(&so).map_err(|e| e.0)?.into_iter();
    let Some(first) = inputs.next() else {
        return Ok(());
    };
    let mut p = log_parser(&so, first, inputs);
    p.record_durations();
    while p.durations_seen() == 0 {
        match p.next_item() {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(format!(
                    "Error: --compare: {} holds no statement durations; record it with \
                     log_min_duration_statement = 0 (alone, or with log_statement = 'all')",
                    o.infiles.join(", ")
                ))
            }
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

fn run(o: &Opts, pgrig: bool) -> i32 {
    if pgrig {
        if let Err(m) = preflight(o) {
            if !m.is_empty() {
                eline(&m);
            }
            return 1;
        }
    }
    let Ok(mut source) = open_source(o) else {
        return 1;
    };
    // statistics go to stderr only when the replay file goes to stdout
    let stats_to_stderr = o.parse_only && o.outfile.is_none();
    let (ok, replay_report, interrupted, doc) = if o.parse_only {
        (write_file(o, &mut source), None, false, None)
    } else {
        replay_items(o, &mut source, pgrig)
    };
    if !ok {
        return 1;
    }
    let mut report = String::new();
    if let Some(p) = source.parse_stats() {
        report.push_str(&p.report());
    }
    if let Some(r) = replay_report {
        report.push_str(&r);
    }
    if stats_to_stderr {
        eprint_bytes(report.as_bytes());
    } else {
        let mut out = io::stdout().lock();
        if out
            .write_all(report.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return 1;
        }
    }
    if let Some(doc) = doc {
        if !keep(o, &doc) {
            return 1;
        }
    }
    if interrupted {
        130
    } else {
        0
    }
}

/// `--json` and `--store`: the replay document written and stored (after the report is
/// printed, so nothing measured is lost when they fail); whether both succeeded.
fn keep(o: &Opts, doc: &ReplayDocument) -> bool {
    let mut ok = true;
    if let Some(path) = &o.pgrig.json {
        if let Err(e) = document::write(path, doc) {
            eline(&format!("Error: {e}"));
            ok = false;
        }
    }
    if let Some(url) = &o.pgrig.store {
        match store::save(url, o, doc) {
            Ok(id) => eline(&format!("replay stored as run {id}")),
            Err(e) => {
                eline(&format!("Error: the replay was not stored: {e}"));
                ok = false;
            }
        }
    }
    ok
}

fn write_file(o: &Opts, source: &mut Source) -> bool {
    let out: Box<dyn Write> = match o.outfile.as_deref().filter(|f| *f != "-") {
        None => Box::new(io::stdout().lock()),
        Some(path) => match pgrig_outfile::create_streaming(std::path::Path::new(path)) {
            Ok(f) => Box::new(io::BufWriter::new(f)),
            Err(e) => {
                eline(&format!("Error opening output file: {path}: {e}"));
                return false;
            }
        },
    };
    let mut w = replayfile::Writer::new(out);
    loop {
        match source.next(o.debug, &mut eprint_bytes) {
            Ok(Some(item)) => {
                if let Err(e) = w.write(&item) {
                    eline(&format!("Error writing to output file: {e}"));
                    return false;
                }
            }
            Ok(None) => break,
            Err(e) => {
                eline(&e.0);
                return false;
            }
        }
    }
    if let Err(e) = w.finish() {
        eline(&format!("Error writing to output file: {e}"));
        return false;
    }
    true
}

/// What a replay hands back: success, the statistics to print, interrupted by Ctrl-C, and
/// (`pgrig replay`) its document.
type Replayed = (bool, Option<String>, bool, Option<ReplayDocument>);

/// Replays; the statistics after it (and `pgrig replay`'s lag and `--compare` tables).
fn replay_items(o: &Opts, source: &mut Source, pgrig: bool) -> Replayed {
    let opts = ReplayOptions {
        host: o.host.clone(),
        port: o.port,
        password: o.password.clone(),
        encoding: o.encoding.clone(),
        speed: o.speed,
        jump: o.jump,
        measure: o.pgrig.compare,
        order: o.pgrig.order,
    };
    let debug = o.debug;
    let mut next = || source.next(debug, &mut eprint_bytes);
    let say = Box::new(|line: &str| {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    });
    let bar = (pgrig && io::stderr().is_terminal())
        .then(|| progress::start(count_items(&source_options(o))));
    let (bar, tick) = match bar {
        Some((b, t)) => (Some(b), Some(t)),
        None => (None, None),
    };
    let outcome = replay_with_progress(opts, &mut next, say, tick);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let outcome = match outcome {
        Ok(x) => x,
        Err(e) => {
            eline(&e.0);
            return (false, None, false, None);
        }
    };
    if let Some(e) = outcome.failure {
        eline(&e.0);
        return (false, None, false, None);
    }
    if outcome.interrupted {
        eline("Replay interrupted: the statistics cover what ran until then");
    } else if outcome.left_open > 0 {
        eline("Error: not all database connections closed");
    }
    let mut report = outcome.stats.report();
    if !pgrig {
        return (true, Some(report), outcome.interrupted, None);
    }
    report.push_str(&outcome.stats.lag_report(LAG_LINES));
    let mut measured = outcome.measured.unwrap_or_default();
    let replayed = match &o.pgrig.replayed_log {
        Some(f) => {
            let since = outcome.started;
            match pgrig_replay::served::durations(Path::new(f), &outcome.backends, since) {
                Ok(t) => {
                    changes::use_served(&mut measured, t);
                    changes::Replayed::Served(f.clone())
                }
                Err(e) => {
                    // the replay's own figures are kept: its measured side is shown instead
                    eline(&format!("{}; the replayed side is the client's", e.0));
                    changes::Replayed::Client(outcome.round_trip_us)
                }
            }
        }
        None => changes::Replayed::Client(outcome.round_trip_us),
    };
    let statements = o.pgrig.compare.then(|| {
        let recorded = source.take_recorded();
        changes::build(&recorded, &measured)
    });
    if let Some(s) = &statements {
        report.push_str(&changes::table(s, &replayed));
    }
    let parse = source.parse_stats();
    let doc = document::of(
        &o.infiles,
        parse.as_ref(),
        &outcome.stats,
        outcome.interrupted,
        statements,
    );
    (true, Some(report), outcome.interrupted, Some(doc))
}
