//! `pgrig replay` (and pgrig invoked as `pgreplay`): pgreplay 1.2's drop-in. Parses a log
//! (`-f`: into a replay file), replays a log or (`-r`) a replay file, and prints pgreplay's
//! statistics; the work is in the pgrig-replay crate.

mod cmdline;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use pgrig_replay::entry::Format;
use pgrig_replay::parser::{LogParser, ParseOptions};
use pgrig_replay::replayer::{replay, ReplayOptions};
use pgrig_replay::{capture_file, replayfile, Error, Item};

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
    fn next(&mut self, debug: u8) -> Result<Option<Item>, Error> {
        let r = match self {
            Source::Log(p, names) => {
                let r = p.next_item();
                for n in p.notes.drain(..) {
                    eline(&n);
                }
                match (r, names.get(p.input_index())) {
                    (Err(e), Some(name)) if names.len() > 1 => Err(Error(format!("{name}: {e}"))),
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
    let format = if o.csv {
        Format::Csv
    } else if input
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
    let mut parser = LogParser::new(input, &opts);
    for more in inputs {
        parser.push_input(more);
    }
    Ok(Source::Log(Box::new(parser), o.infiles.clone()))
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
    let Ok(mut source) = open_source(o) else {
        return 1;
    };
    // statistics go to stderr only when the replay file goes to stdout
    let stats_to_stderr = o.parse_only && o.outfile.is_none();
    let (ok, replay_report, interrupted) = if o.parse_only {
        (write_file(o, &mut source), None, false)
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
    if interrupted {
        130
    } else {
        0
    }
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

/// Replays; returns (success, the replay statistics, interrupted by Ctrl-C).
fn replay_items(o: &Opts, source: &mut Source, pgrig: bool) -> (bool, Option<String>, bool) {
    let opts = ReplayOptions {
        host: o.host.clone(),
        port: o.port,
        password: o.password.clone(),
        encoding: o.encoding.clone(),
        speed: o.speed,
        jump: o.jump,
    };
    let debug = o.debug;
    let mut next = || source.next(debug);
    let say = Box::new(|line: &str| {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    });
    let outcome = match replay(opts, &mut next, say) {
        Ok(x) => x,
        Err(e) => {
            eline(&e.0);
            return (false, None, false);
        }
    };
    if let Some(e) = outcome.failure {
        eline(&e.0);
        return (false, None, false);
    }
    if outcome.interrupted {
        eline("Replay interrupted: the statistics cover what ran until then");
    } else if outcome.left_open > 0 {
        eline("Error: not all database connections closed");
    }
    let mut report = outcome.stats.report();
    if pgrig {
        report.push_str(&outcome.stats.lag_report(LAG_LINES));
    }
    (true, Some(report), outcome.interrupted)
}
