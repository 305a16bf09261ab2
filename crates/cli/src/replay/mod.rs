//! `pgrig replay` (and pgrig invoked as `pgreplay`): pgreplay 1.2's drop-in. Parses a log
//! (`-f`: into a replay file), replays a log or (`-r`) a replay file, and prints pgreplay's
//! statistics; the work is in the pgrig-replay crate.

mod cmdline;
mod progress;
mod store;

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::Path;

use pgrig_replay::entry::Format;
use pgrig_replay::parser::{LogParser, ParseOptions};
use pgrig_replay::replayer::{replay_with_progress, ReplayOptions};
use pgrig_replay::tally::Tallies;
use pgrig_replay::{capture_file, changes, document, replayfile, Error, Item};
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

/// Where the items come from.
enum Source {
    /// A log (several files: one log in rotated parts, named in error messages).
    Log(Box<LogParser<Box<dyn BufRead>>>, Vec<String>),
    File(replayfile::Reader<Box<dyn Read>>),
    /// A `pgrig capture` file (recognised by its header).
    Capture(capture_file::Reader<Box<dyn BufRead>>),
}

impl Source {
    /// `--compare`: the log's recorded durations and errors (empty for a replay file).
    fn take_recorded(&mut self) -> Tallies {
        match self {
            Source::Log(p, _) => p.take_recorded().unwrap_or_default(),
            Source::File(_) | Source::Capture(_) => Tallies::default(),
        }
    }

    fn next(&mut self, debug: u8) -> Result<Option<Item>, Error> {
        let r = match self {
            Source::Log(p, names) => {
                let r = p.next_item();
                for n in p.notes.drain(..) {
                    eline(&n);
                }
                match (r, names.get(p.input_index())) {
                    // pgreplay names the file of a rotated log only; pgrig's own bound on an
                    // entry's length always does
                    (Err(e), Some(name))
                        if names.len() > 1 || e.0.contains(pgrig_replay::reader::TOO_LONG) =>
                    {
                        Err(Error(format!("{name}: {e}")))
                    }
                    (r, _) => r,
                }
            }
            Source::File(f) => f.next_item(),
            Source::Capture(c) => c.next_item(),
        };
        if let Ok(Some(i)) = &r {
            if debug >= 1 {
                eprint_bytes(&i.debug_text());
            }
        }
        r
    }
}

/// Opens the input files (none: standard input).
fn open_inputs(o: &Opts) -> Result<Vec<Box<dyn BufRead>>, ()> {
    if o.infiles.is_empty() {
        return Ok(vec![Box::new(BufReader::new(io::stdin()))]);
    }
    let mut inputs: Vec<Box<dyn BufRead>> = Vec::new();
    for path in &o.infiles {
        match File::open(path) {
            Ok(f) => inputs.push(Box::new(BufReader::with_capacity(1 << 16, f))),
            Err(e) => {
                // pgreplay's perror() prefixes, the replay file's with its doubled colon
                let prefix = if o.replay_only {
                    "Error opening input file:"
                } else {
                    "Error opening input file"
                };
                let named = if o.infiles.len() > 1 {
                    format!(" {path}")
                } else {
                    String::new()
                };
                eline(&format!("{prefix}{named}: {}", pgrig_wire::strerror(&e)));
                return Err(());
            }
        }
    }
    Ok(inputs)
}

fn open_source(o: &Opts) -> Result<Source, ()> {
    let mut inputs = open_inputs(o)?.into_iter();
    let Some(mut input) = inputs.next() else {
        return Err(());
    };
    if input
        .fill_buf()
        .map(capture_file::is_capture)
        .unwrap_or(false)
    {
        return capture_source(o, input, inputs.len());
    }
    if o.replay_only {
        // replay files have no header: several are one file
        let mut all: Box<dyn Read> = Box::new(input);
        for more in inputs {
            all = Box::new(all.chain(more));
        }
        return Ok(Source::File(replayfile::Reader::new(all)));
    }
    let mut parser = log_parser(o, input, inputs);
    if o.pgrig.compare {
        parser.record_durations();
    }
    Ok(Source::Log(Box::new(parser), o.infiles.clone()))
}

/// A parser of the log in `first` and the `rest` of its files, in the format the options and
/// the first character say.
fn log_parser(
    o: &Opts,
    mut first: Box<dyn BufRead>,
    rest: impl Iterator<Item = Box<dyn BufRead>>,
) -> LogParser<Box<dyn BufRead>> {
    let format = if o.csv {
        Format::Csv
    } else if first
        .fill_buf()
        .map(|b| b.first() == Some(&b'{'))
        .unwrap_or(false)
    {
        Format::Json
    } else {
        Format::Stderr
    };
    let opts = ParseOptions {
        format: Some(format),
        begin: o.begin.clone(),
        end: o.end.clone(),
        backslash_quote: o.backslash_quote,
    };
    let mut parser = LogParser::new(first, &opts);
    for more in rest {
        parser.push_input(more);
    }
    parser
}

/// The items a replay of the input files will consume (the progress bar's total): the log
/// parsed, or the replay file read, once more; `None` for standard input or an input that
/// fails (the replay reports it).
fn count_items(o: &Opts) -> Option<u64> {
    if o.infiles.is_empty() {
        return None;
    }
    let mut source = open_source(o).ok()?;
    let mut n = 0u64;
    loop {
        let r = match &mut source {
            Source::Log(p, _) => {
                let r = p.next_item();
                p.notes.clear();
                r
            }
            Source::File(f) => f.next_item(),
            Source::Capture(c) => c.next_item(),
        };
        match r {
            Ok(Some(_)) => n += 1,
            Ok(None) => return Some(n),
            Err(_) => return None,
        }
    }
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
    let mut inputs = open_inputs(o).map_err(|()| String::new())?.into_iter();
    let Some(first) = inputs.next() else {
        return Ok(());
    };
    let mut p = log_parser(o, first, inputs);
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

/// A capture file: replayed alone, never converted to a pgreplay replay file.
fn capture_source(o: &Opts, input: Box<dyn BufRead>, more: usize) -> Result<Source, ()> {
    if o.parse_only {
        eline("Error: a capture file (pgrig capture) is replayed as it is; it cannot be written as a replay file");
        return Err(());
    }
    if more > 0 {
        eline("Error: a capture file must be the only input file");
        return Err(());
    }
    match capture_file::Reader::new(input) {
        Ok(r) => Ok(Source::Capture(r)),
        Err(e) => {
            eline(&e.0);
            Err(())
        }
    }
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
    if let Source::Log(p, _) = &source {
        report.push_str(&p.stats().report());
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
        match source.next(o.debug) {
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
    let mut next = || source.next(debug);
    let say = Box::new(|line: &str| {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    });
    let bar = (pgrig && io::stderr().is_terminal()).then(|| progress::start(count_items(o)));
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
    let parse = match source {
        Source::Log(p, _) => Some(p.stats()),
        Source::File(_) | Source::Capture(_) => None,
    };
    let doc = document::of(
        &o.infiles,
        parse.as_ref(),
        &outcome.stats,
        outcome.interrupted,
        statements,
    );
    (true, Some(report), outcome.interrupted, Some(doc))
}
