//! The log parser: log entries turned into replay items as pgreplay turns them — sessions
//! opened by their first entry, statements filtered, prepared statements tracked per session
//! (a Prepare before the first execution of each name), bind values from DETAIL, cancels, and a
//! Disconnect for every session still open at the end.

use std::collections::VecDeque;
use std::io::BufRead;

use crate::bind::parse_bind_args;
use crate::entry::{Entry, EntrySource, Format, Severity};
use crate::error::Error;
use crate::filter::filter;
use crate::item::{Item, ItemKind};
use crate::stats::ParseStats;
use crate::time::Timestamp;

struct Conn {
    session: u64,
    prepared: Vec<Vec<u8>>,
}

/// Options of a parse (pgreplay's parse options).
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    pub format: Option<Format>,
    /// `-b`, `-e`: only entries whose first 23 characters are inside the window.
    pub begin: Option<String>,
    pub end: Option<String>,
    /// `-q`: `\'` in a string literal is a quote.
    pub backslash_quote: bool,
}

/// Replay items from a log.
pub struct LogParser<R> {
    src: EntrySource<R>,
    /// Further inputs, read after `src` as the continuation of one log (rotated files).
    rest: VecDeque<R>,
    /// Lines of the inputs already read, and how many were.
    lines_before: u64,
    inputs_done: usize,
    format: Format,
    window: (Option<String>, Option<String>),
    backslash_quote: bool,
    /// Open sessions by the low byte of their ID, newest last (pgreplay's hash order).
    buckets: Vec<Vec<Conn>>,
    queue: VecDeque<Item>,
    last_time: Timestamp,
    stats: ParseStats,
    /// Messages pgreplay prints on standard error while parsing (warnings), in order.
    pub notes: Vec<String>,
}

enum Kind {
    Connect,
    Disconnect,
    Execute(Vec<u8>),
    Exec(Vec<u8>, Vec<u8>),
    Cancel,
}

impl<R: BufRead> LogParser<R> {
    pub fn new(input: R, opts: &ParseOptions) -> LogParser<R> {
        let format = opts.format.unwrap_or(Format::Stderr);
        LogParser {
            src: EntrySource::new(input, format, opts.begin.as_deref(), opts.end.as_deref()),
            rest: VecDeque::new(),
            lines_before: 0,
            inputs_done: 0,
            format,
            window: (opts.begin.clone(), opts.end.clone()),
            backslash_quote: opts.backslash_quote,
            buckets: (0..256).map(|_| Vec::new()).collect(),
            queue: VecDeque::new(),
            last_time: Timestamp::default(),
            stats: ParseStats::default(),
            notes: Vec::new(),
        }
    }

    /// Adds an input read after the ones given so far, as the continuation of the same log
    /// (sessions stay open across it; line numbers in messages restart with it).
    pub fn push_input(&mut self, input: R) {
        self.rest.push_back(input);
    }

    /// Which input is being read (0: the first).
    pub fn input_index(&self) -> usize {
        self.inputs_done
    }

    /// The statistics so far (lines read up to now).
    pub fn stats(&self) -> ParseStats {
        let mut s = self.stats.clone();
        s.lines = self.lines_before + self.src.lineno();
        s
    }

    fn lineno(&self) -> u64 {
        self.src.lineno()
    }

    /// The next item; `None` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item>, Error> {
        if let Some(i) = self.queue.pop_front() {
            return Ok(Some(i));
        }
        loop {
            let entry = self.src.next_entry().map_err(Error::new);
            self.notes.append(&mut self.src.notes);
            let Some(mut entry) = entry? else {
                if let Some(next) = self.rest.pop_front() {
                    self.lines_before += self.src.lineno();
                    self.inputs_done += 1;
                    let (b, e) = (self.window.0.as_deref(), self.window.1.as_deref());
                    self.src = EntrySource::new(next, self.format, b, e);
                    continue;
                }
                return Ok(self.close_one());
            };
            crate::duration::unwrap_duration(&mut entry);
            if let Some(kind) = self.classify(&entry)? {
                return self.process(entry, kind).map(Some);
            }
        }
    }

    /// At the end of the log: a Disconnect for one session still open (lowest hash first).
    fn close_one(&mut self) -> Option<Item> {
        let bucket = self.buckets.iter_mut().find(|b| !b.is_empty())?;
        let conn = bucket.pop()?;
        Some(Item {
            time: self.last_time,
            session: conn.session,
            kind: ItemKind::Disconnect,
        })
    }

    fn classify(&mut self, e: &Entry) -> Result<Option<Kind>, Error> {
        let m = &e.message;
        if e.severity == Severity::Log {
            if m.starts_with(b"connection authorized: ") {
                return Ok(Some(Kind::Connect));
            } else if m.starts_with(b"disconnection: ") {
                return Ok(Some(Kind::Disconnect));
            } else if let Some(s) = m.strip_prefix(b"statement: ") {
                return Ok(Some(Kind::Execute(s.to_vec())));
            } else if let Some(rest) = m.strip_prefix(b"execute ") {
                let Some(colon) = rest.iter().position(|&b| b == b':') else {
                    return Err(Error(format!(
                        "Error: missing statement name in line {}",
                        self.lineno()
                    )));
                };
                let mut name = rest[..colon].to_vec();
                if name == b"<unnamed>" {
                    name.clear();
                }
                let stmt = rest.get(colon + 2..).unwrap_or(b"").to_vec();
                return Ok(Some(Kind::Exec(name, stmt)));
            } else if m.starts_with(b"fastpath function call: ") {
                self.notes.push(format!(
                    "Warning: fast-path function call ignored in line {}",
                    self.lineno()
                ));
                self.stats.fastpath += 1;
            }
        } else if e.severity == Severity::Error
            && m.starts_with(b"canceling statement due to user request")
        {
            return Ok(Some(Kind::Cancel));
        }
        Ok(None)
    }

    fn conn_index(&self, session: u64) -> Option<usize> {
        self.buckets[(session & 0xff) as usize]
            .iter()
            .position(|c| c.session == session)
    }

    fn process(&mut self, e: Entry, kind: Kind) -> Result<Item, Error> {
        let item = |kind: ItemKind| Item {
            time: e.time,
            session: e.session,
            kind,
        };
        let bucket = (e.session & 0xff) as usize;
        let idx = match self.conn_index(e.session) {
            Some(i) => {
                if matches!(kind, Kind::Connect) {
                    return Err(Error(format!(
                        "Error: duplicate session ID 0x{:x}",
                        e.session
                    )));
                }
                i
            }
            None => {
                self.queue.push_back(item(ItemKind::Connect {
                    user: e.user.clone(),
                    database: e.database.clone(),
                }));
                self.buckets[bucket].push(Conn {
                    session: e.session,
                    prepared: Vec::new(),
                });
                self.buckets[bucket].len() - 1
            }
        };
        match kind {
            Kind::Connect => {}
            Kind::Disconnect => {
                self.queue.push_back(item(ItemKind::Disconnect));
                self.buckets[bucket].remove(idx);
            }
            Kind::Execute(stmt) => {
                let kind = self.execute(stmt, bucket, idx)?;
                self.queue.push_back(item(kind));
            }
            Kind::Exec(name, stmt) => {
                for kind in self.exec(name, stmt, e.detail.as_deref(), bucket, idx)? {
                    self.queue.push_back(item(kind));
                }
            }
            Kind::Cancel => {
                self.stats.cancel += 1;
                self.queue.push_back(item(ItemKind::Cancel));
            }
        }
        let first = self.queue.pop_front().expect("an item was queued");
        self.last_time = first.time;
        Ok(first)
    }

    /// A simple-protocol query string: filtered, counted, its DEALLOCATEs applied.
    fn execute(&mut self, mut stmt: Vec<u8>, bucket: usize, idx: usize) -> Result<ItemKind, Error> {
        let f = filter(&mut stmt, self.backslash_quote, self.lineno()).map_err(Error)?;
        self.stats.simple += f.statements;
        for w in &f.ignored {
            if *w == crate::filter::Ignored::Copy {
                self.stats.copy += 1;
            }
            self.notes
                .push(format!("{} {}", w.warning(), self.lineno()));
        }
        let conn = &mut self.buckets[bucket][idx];
        for d in f.deallocated {
            match d {
                Some(name) => conn.prepared.retain(|n| *n != name),
                None => conn.prepared.clear(),
            }
        }
        Ok(ItemKind::Execute { statement: stmt })
    }

    /// An execution of a prepared statement: a Prepare first when the session has not
    /// prepared it (always for the unnamed one), then the execution with the DETAIL's values.
    fn exec(
        &mut self,
        name: Vec<u8>,
        stmt: Vec<u8>,
        detail: Option<&[u8]>,
        bucket: usize,
        idx: usize,
    ) -> Result<Vec<ItemKind>, Error> {
        let mut out = Vec::with_capacity(2);
        let new = if name.is_empty() {
            self.stats.param += 1;
            true
        } else {
            self.stats.exec_named += 1;
            let conn = &mut self.buckets[bucket][idx];
            let new = !conn.prepared.contains(&name);
            if new {
                conn.prepared.push(name.clone());
                self.stats.named += 1;
            }
            new
        };
        if new {
            out.push(ItemKind::Prepare {
                name: name.clone(),
                statement: stmt,
            });
        }
        let values = match detail {
            None => Vec::new(),
            // PostgreSQL 18 writes "Parameters: " (pgreplay 1.2 knows only the lower case)
            Some(d) => match d
                .strip_prefix(b"parameters: ")
                .or_else(|| d.strip_prefix(b"Parameters: "))
            {
                Some(p) => parse_bind_args(p, self.lineno()).map_err(Error)?,
                None => {
                    return Err(Error(format!(
                        "Error: no parameters for prepared statement at line {}",
                        self.lineno()
                    )))
                }
            },
        };
        out.push(ItemKind::ExecPrepared { name, values });
        Ok(out)
    }
}
