//! One log entry split into what the parser needs (time, user, database, session, severity,
//! message, detail), for each input format: stderr with pgreplay's `log_line_prefix`
//! (`%m|%u|%d|%c|`), csvlog, jsonlog. Also the `-b`/`-e` window and the memory-dump skipping.

use std::io::BufRead;

use crate::reader::EntryReader;
use crate::time::{parse_time, Timestamp};

/// Longest user or database name pgreplay accepts.
const NAMELEN: usize = 64;

/// The input format of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Stderr,
    Csv,
    Json,
}

/// The severities the parser tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Log,
    Error,
    Fatal,
    Other,
}

fn severity(s: &[u8]) -> Severity {
    match s {
        b"LOG" => Severity::Log,
        b"ERROR" => Severity::Error,
        b"FATAL" => Severity::Fatal,
        _ => Severity::Other,
    }
}

/// A parsed log entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub time: Timestamp,
    pub user: Vec<u8>,
    pub database: Vec<u8>,
    pub session: u64,
    pub severity: Severity,
    pub message: Vec<u8>,
    pub detail: Option<Vec<u8>>,
}

/// Reads entries inside the `-b`/`-e` window; messages pgreplay prints on the way (the memory
/// dump notice) are collected in `notes`.
pub struct EntrySource<R> {
    reader: EntryReader<R>,
    format: Format,
    begin: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    keep: Option<Vec<u8>>,
    dump_found: bool,
    /// csvlog variants (column counts, header line, export prefix).
    csv: crate::csv_variant::CsvVariant,
    pub notes: Vec<String>,
}

fn before(line: &[u8], bound: &[u8]) -> std::cmp::Ordering {
    let n = line.len().min(23);
    line[..n].cmp(&bound[..bound.len().min(23)])
}

impl<R: BufRead> EntrySource<R> {
    pub fn new(input: R, format: Format, begin: Option<&str>, end: Option<&str>) -> Self {
        EntrySource {
            reader: EntryReader::new(input, format == Format::Csv),
            format,
            begin: begin.map(|s| s.as_bytes().to_vec()),
            end: end.map(|s| s.as_bytes().to_vec()),
            keep: None,
            dump_found: false,
            csv: Default::default(),
            notes: Vec::new(),
        }
    }

    pub fn lineno(&self) -> u64 {
        self.reader.lineno()
    }

    /// The time text an entry line starts with (jsonlog: its `timestamp` field).
    fn time_key(&self, line: &[u8]) -> Vec<u8> {
        if self.format == Format::Json {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
                if let Some(t) = v.get("timestamp").and_then(|t| t.as_str()) {
                    return t.as_bytes().to_vec();
                }
            }
        }
        line.to_vec()
    }

    /// Reads one entry, skipping memory-dump lines (stderr only).
    fn read_skipping_dump(&mut self) -> Result<Vec<u8>, String> {
        loop {
            let line = self.reader.next_entry()?;
            if self.format == Format::Csv {
                match self.csv.normalize(line, self.reader.lineno())? {
                    Some(line) => return Ok(line),
                    None => continue,
                }
            }
            if self.format == Format::Stderr {
                if line.starts_with(b"TopMemoryContext: ") {
                    self.notes.push(format!(
                        "Found memory dump in line {}",
                        self.reader.lineno()
                    ));
                    self.dump_found = true;
                    continue;
                }
                if self.dump_found && line.first() == Some(&b' ') {
                    continue;
                }
            }
            return Ok(line);
        }
    }

    /// The next entry, `None` at the end of the input or past the end of the window.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        let line = match self.keep.take() {
            Some(l) => l,
            None => loop {
                let line = self.read_skipping_dump()?;
                let early = match &self.begin {
                    Some(b) if !line.is_empty() => {
                        before(&self.time_key(&line), b) == std::cmp::Ordering::Less
                    }
                    _ => false,
                };
                if !early {
                    break line;
                }
            },
        };
        if line.is_empty() {
            return Ok(None);
        }
        if let Some(e) = &self.end {
            if before(&self.time_key(&line), e) == std::cmp::Ordering::Greater {
                return Ok(None);
            }
        }
        match self.format {
            Format::Stderr => self.stderr_entry(line).map(Some),
            Format::Csv => csv_entry(&line, self.reader.lineno()).map(Some),
            Format::Json => json_entry(&line, self.reader.lineno()).map(Some),
        }
    }

    fn stderr_entry(&mut self, line: Vec<u8>) -> Result<Entry, String> {
        let lineno = self.reader.lineno();
        let mut parts: Vec<&[u8]> = Vec::with_capacity(5);
        let mut rest: &[u8] = &line;
        for ordinal in ["no", "second", "third", "fourth"] {
            match rest.iter().position(|&b| b == b'|') {
                Some(i) => {
                    parts.push(&rest[..i]);
                    rest = &rest[i + 1..];
                }
                None => {
                    return Err(format!(
                        "Error parsing line {lineno}: {} - log_line_prefix may be wrong",
                        not_found(ordinal)
                    ))
                }
            }
        }
        let Some(colon) = find(rest, b":  ") else {
            return Err(format!(
                "Error parsing line {lineno}: log message does not begin with a log type"
            ));
        };
        let time = parse_time(parts[0]).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
        let (user, database) = names(parts[1], parts[2], lineno)?;
        let session =
            parse_session(parts[3]).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
        let severity = severity(&rest[..colon]);
        let message = rest[colon + 3..].to_vec();
        let detail = self.lookahead_detail()?;
        Ok(Entry {
            time,
            user,
            database,
            session,
            severity,
            message,
            detail,
        })
    }

    /// Reads the entry after this one: a DETAIL belongs to this one, anything else is kept
    /// for the next call.
    fn lookahead_detail(&mut self) -> Result<Option<Vec<u8>>, String> {
        let line = self.read_skipping_dump()?;
        if line.is_empty() {
            self.keep = Some(line);
            return Ok(None);
        }
        let mut rest: &[u8] = &line;
        for i in 0..4 {
            match rest.iter().position(|&b| b == b'|') {
                Some(p) => rest = &rest[p + 1..],
                None => {
                    return Err(format!(
                    "Error parsing line {}: only {i} \"|\" found - log_line_prefix may be wrong",
                    self.reader.lineno()
                ))
                }
            }
        }
        if let Some(d) = rest.strip_prefix(b"DETAIL:  ") {
            return Ok(Some(d.to_vec()));
        }
        self.keep = Some(line);
        Ok(None)
    }
}

fn not_found(ordinal: &str) -> String {
    if ordinal == "no" {
        "no \"|\" found".into()
    } else {
        format!("{ordinal} \"|\" not found")
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn names(user: &[u8], db: &[u8], lineno: u64) -> Result<(Vec<u8>, Vec<u8>), String> {
    if user.len() > NAMELEN {
        return Err(format!(
            "Error parsing line {lineno}: username exceeds {NAMELEN} characters"
        ));
    }
    if db.len() > NAMELEN {
        return Err(format!(
            "Error parsing line {lineno}: database name exceeds {NAMELEN} characters"
        ));
    }
    Ok((user.to_vec(), db.to_vec()))
}

/// A session ID `%c` (`hex.hex`: start time and PID) as one 64-bit number.
pub fn parse_session(s: &[u8]) -> Result<u64, String> {
    let mut dot = None;
    for (i, &c) in s.iter().enumerate() {
        if c == b'.' && dot.is_none() {
            dot = Some(i);
        } else if !(c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
            return Err(format!(
                "character {} in session id string is '{}', expected hex digit",
                i + 1,
                c as char
            ));
        }
    }
    let Some(dot) = dot else {
        return Err("Missing \".\" in session id string".into());
    };
    let (a, b) = (&s[..dot], &s[dot + 1..]);
    if a.len() > 8 || b.len() > 8 {
        return Err(
            "none of the parts of a session id string may be longer than 8 hex digits".into(),
        );
    }
    let hex =
        |p: &[u8]| u32::from_str_radix(std::str::from_utf8(p).unwrap_or("0"), 16).unwrap_or(0);
    Ok((u64::from(hex(a)) << 32) + u64::from(hex(b)))
}

/// Splits the first 15 fields of a csvlog record (quotes removed, `""` made `"`).
fn csv_fields(line: &[u8], lineno: u64) -> Result<Vec<Vec<u8>>, String> {
    let mut fields = Vec::with_capacity(15);
    let mut i = 0;
    let mut escaped = false;
    for n in 1..16 {
        let start = i;
        let mut f = Vec::new();
        while escaped || line.get(i) != Some(&b',') {
            match line.get(i) {
                None => {
                    return Err(format!(
                    "Error parsing line {lineno}: comma number {n} not found (or unmatched quotes)"
                ))
                }
                Some(b'"') => {
                    if !escaped && i != start {
                        f.push(b'"');
                    }
                    escaped = !escaped;
                    i += 1;
                }
                Some(&c) => {
                    f.push(c);
                    i += 1;
                }
            }
        }
        i += 1;
        fields.push(f);
    }
    Ok(fields)
}

fn csv_entry(line: &[u8], lineno: u64) -> Result<Entry, String> {
    let f = csv_fields(line, lineno)?;
    let time = parse_time(&f[0]).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
    let (user, database) = names(&f[1], &f[2], lineno)?;
    let session = parse_session(&f[5]).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
    Ok(Entry {
        time,
        user,
        database,
        session,
        severity: severity(&f[11]),
        message: f[13].clone(),
        detail: Some(f[14].clone()).filter(|d| !d.is_empty()),
    })
}

fn json_entry(line: &[u8], lineno: u64) -> Result<Entry, String> {
    let v: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| format!("Error parsing line {lineno}: not a jsonlog record: {e}"))?;
    let s = |k: &str| -> Vec<u8> {
        v.get(k)
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .as_bytes()
            .to_vec()
    };
    let time =
        parse_time(&s("timestamp")).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
    let (user, database) = names(&s("user"), &s("dbname"), lineno)?;
    let session =
        parse_session(&s("session_id")).map_err(|e| format!("Error parsing line {lineno}: {e}"))?;
    let detail = s("detail");
    Ok(Entry {
        time,
        user,
        database,
        session,
        severity: severity(&s("error_severity")),
        message: s("message"),
        detail: Some(detail).filter(|d| !d.is_empty()),
    })
}
