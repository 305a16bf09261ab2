//! Where a replay's items come from, as pgreplay (and `pgrig replay`) open it: standard input or
//! the input files (a log in rotated parts, a pgreplay replay file, or a `pgrig capture` file told
//! by its header), in the format the options and the first character say. Failures come back as
//! pgreplay's messages (`Error`) for the caller to print; the parser's notes and the `-d 1` trace
//! go to the caller's `say`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use crate::entry::Format;
use crate::error::Error;
use crate::parser::{LogParser, ParseOptions};
use crate::tally::Tallies;
use crate::{capture_file, replayfile, Item};

/// The options that choose and read the input.
#[derive(Debug, Clone, Default)]
pub struct SourceOptions {
    /// none: standard input
    pub infiles: Vec<String>,
    /// `-r`: the input is a replay file
    pub replay_only: bool,
    /// `-f`: the items are written to a replay file, not replayed
    pub parse_only: bool,
    /// `-c`: a csvlog
    pub csv: bool,
    pub begin: Option<String>,
    pub end: Option<String>,
    pub backslash_quote: bool,
    /// `--compare`: the log's durations and errors are recorded
    pub compare: bool,
}

/// Where the items come from.
pub enum Source {
    /// A log (several files: one log in rotated parts, named in error messages).
    Log(Box<LogParser<Box<dyn BufRead>>>, Vec<String>),
    File(replayfile::Reader<Box<dyn Read>>),
    Capture(capture_file::Reader<Box<dyn BufRead>>),
}

impl Source {
    /// Opens the input.
    pub fn open(o: &SourceOptions) -> Result<Source, Error> {
        let mut inputs = open_inputs(o)?.into_iter();
        let Some(mut input) = inputs.next() else {
            return Err(Error::new(""));
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
        if o.compare {
            parser.record_durations();
        }
        Ok(Source::Log(Box::new(parser), o.infiles.clone()))
    }

    /// `--compare`: the log's recorded durations and errors (empty for a replay file).
    pub fn take_recorded(&mut self) -> Tallies {
        match self {
            Source::Log(p, _) => p.take_recorded().unwrap_or_default(),
            Source::File(_) | Source::Capture(_) => Tallies::default(),
        }
    }

    /// The next item; the parser's notes (each with its newline) and, `debug` 1 or more, each
    /// item's trace go to `say`.
    pub fn next(&mut self, debug: u8, say: &mut dyn FnMut(&[u8])) -> Result<Option<Item>, Error> {
        let r = match self {
            Source::Log(p, names) => {
                let r = p.next_item();
                for n in p.notes.drain(..) {
                    say(format!("{n}\n").as_bytes());
                }
                match (r, names.get(p.input_index())) {
                    // pgreplay names the file of a rotated log only; pgrig's own bound on an
                    // entry's length always does
                    (Err(e), Some(name))
                        if names.len() > 1 || e.0.contains(crate::reader::TOO_LONG) =>
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
                say(&i.debug_text());
            }
        }
        r
    }

    /// The log's parse statistics (none for a replay or capture file).
    pub fn parse_stats(&self) -> Option<crate::stats::ParseStats> {
        match self {
            Source::Log(p, _) => Some(p.stats()),
            Source::File(_) | Source::Capture(_) => None,
        }
    }
}

/// Opens the input files (none: standard input).
pub fn open_inputs(o: &SourceOptions) -> Result<Vec<Box<dyn BufRead>>, Error> {
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
                let why = pgrig_wire::strerror(&e);
                return Err(Error(format!("{prefix}{named}: {why}")));
            }
        }
    }
    Ok(inputs)
}

/// A parser of the log in `first` and the `rest` of its files, in the format the options and
/// the first character say.
pub fn log_parser(
    o: &SourceOptions,
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

/// The items a replay of the input files will consume (a progress bar's total): the log
/// parsed, or the replay file read, once more; `None` for standard input or an input that
/// fails (the replay reports it).
pub fn count_items(o: &SourceOptions) -> Option<u64> {
    if o.infiles.is_empty() {
        return None;
    }
    let mut source = Source::open(o).ok()?;
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

/// A capture file: replayed alone, never converted to a pgreplay replay file.
fn capture_source(
    o: &SourceOptions,
    input: Box<dyn BufRead>,
    more: usize,
) -> Result<Source, Error> {
    if o.parse_only {
        return Err(Error::new("Error: a capture file (pgrig capture) is replayed as it is; it cannot be written as a replay file"));
    }
    if more > 0 {
        return Err(Error::new(
            "Error: a capture file must be the only input file",
        ));
    }
    capture_file::Reader::new(input).map(Source::Capture)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-11-28 10:51:18.304 UTC|u|db|6b0ab226.4d6c|LOG:  connection authorized: user=u database=db
2026-11-28 10:51:18.305 UTC|u|db|6b0ab226.4d6c|LOG:  statement: SELECT 1
2026-11-28 10:51:18.306 UTC|u|db|6b0ab226.4d6c|LOG:  disconnection: session time: 0:00:00.002 user=u database=db host=[local]
";

    fn opts(files: &[&str]) -> SourceOptions {
        SourceOptions {
            infiles: files.iter().map(|f| f.to_string()).collect(),
            ..SourceOptions::default()
        }
    }

    #[test]
    fn a_log_is_parsed_and_counted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.log");
        std::fs::write(&path, LOG).expect("write");
        let o = opts(&[path.to_str().expect("utf-8")]);
        let mut s = Source::open(&o).expect("opened");
        let mut items = 0;
        while s.next(0, &mut |_| {}).expect("item").is_some() {
            items += 1;
        }
        assert_eq!(count_items(&o), Some(items));
        assert!(items >= 3, "connect, statement, disconnect: {items}");
        assert_eq!(s.parse_stats().map(|p| p.lines), Some(3));
    }

    #[test]
    fn a_missing_input_gets_pgreplays_message() {
        let one = Source::open(&opts(&["/nonexistent/a.log"]))
            .err()
            .expect("refused");
        assert_eq!(one.0, "Error opening input file: No such file or directory");
        let mut replay_file = opts(&["/nonexistent/a.log"]);
        replay_file.replay_only = true;
        let e = Source::open(&replay_file).err().expect("refused");
        assert_eq!(e.0, "Error opening input file:: No such file or directory");
        let dir = tempfile::tempdir().expect("tempdir");
        let first = dir.path().join("a.log");
        std::fs::write(&first, LOG).expect("write");
        let two = opts(&[first.to_str().expect("utf-8"), "/nonexistent/b.log"]);
        let e = Source::open(&two).err().expect("refused");
        assert_eq!(
            e.0,
            "Error opening input file /nonexistent/b.log: No such file or directory"
        );
        assert_eq!(count_items(&two), None);
    }

    #[test]
    fn a_capture_file_is_replayed_alone_and_never_converted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.cap");
        let mut bytes = capture_file::MAGIC.to_vec();
        bytes.extend_from_slice(&[0; 16]);
        std::fs::write(&path, &bytes).expect("write");
        let p = path.to_str().expect("utf-8");
        let mut o = opts(&[p]);
        o.parse_only = true;
        let e = Source::open(&o).err().expect("refused");
        assert!(e.0.contains("cannot be written as a replay file"), "{e}");
        let e = Source::open(&opts(&[p, p])).err().expect("refused");
        assert_eq!(e.0, "Error: a capture file must be the only input file");
    }
}
