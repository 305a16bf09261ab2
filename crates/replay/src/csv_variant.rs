//! csvlog variants, recognised record by record and handed on in PostgreSQL's own layout
//! (what pgreplay's 15-field reading expects): the column counts of PostgreSQL's versions (22:
//! 8.4; 23: 9.0 to 12; 24: 13, `backend_type`; 26: 14 and later, `leader_pid`, `query_id`),
//! a header line naming the columns (exports such as RDS's `log_fdw` tables copied out with
//! `COPY ... CSV HEADER`, or any tool's export with columns reordered or added), and the
//! ISO-8601 time that CloudWatch Logs exports put before each line (Aurora/RDS logs exported
//! to S3). A record that fits none is an error naming its line.

/// The csvlog columns, in PostgreSQL's order (`postgres_log` in its documentation).
pub const COLUMNS: [&str; 26] = [
    "log_time",
    "user_name",
    "database_name",
    "process_id",
    "connection_from",
    "session_id",
    "session_line_num",
    "command_tag",
    "session_start_time",
    "virtual_transaction_id",
    "transaction_id",
    "error_severity",
    "sql_state_code",
    "message",
    "detail",
    "hint",
    "internal_query",
    "internal_query_pos",
    "context",
    "query",
    "query_pos",
    "location",
    "application_name",
    "backend_type",
    "leader_pid",
    "query_id",
];

/// The fields pgreplay reads: the first 15 columns.
const READ: usize = 15;

/// Column counts PostgreSQL's versions write.
pub const PLAIN_COUNTS: [usize; 4] = [22, 23, 24, 26];

/// What the log's records look like, learnt from its first record.
#[derive(Debug, Default)]
pub struct CsvVariant {
    started: bool,
    /// From a header line: where each of the 15 read columns is, and how many there are.
    header: Option<(Vec<usize>, usize)>,
}

/// Splits a csv record into its fields (`""` inside quotes is `"`); `None` when its quotes do
/// not match (pgreplay's own reading then reports it).
pub fn split(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut fields = vec![Vec::new()];
    let mut quoted = false;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        match (c, quoted) {
            (b'"', true) if line.get(i + 1) == Some(&b'"') => {
                fields.last_mut()?.push(b'"');
                i += 1;
            }
            (b'"', _) => quoted = !quoted,
            (b',', false) => fields.push(Vec::new()),
            _ => fields.last_mut()?.push(c),
        }
        i += 1;
    }
    (!quoted).then_some(fields)
}

/// The CloudWatch export's leading `YYYY-MM-DDTHH:MM:SS[.fff]Z ` (its length), if present.
fn export_prefix(line: &[u8]) -> Option<usize> {
    let shape = b"nnnn-nn-nnTnn:nn:nn";
    if line.len() < shape.len() + 2 {
        return None;
    }
    for (s, c) in shape.iter().zip(line) {
        if (*s == b'n' && !c.is_ascii_digit()) || (*s != b'n' && s != c) {
            return None;
        }
    }
    let mut i = shape.len();
    if line[i] == b'.' {
        i += 1;
        while line.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    (line.get(i) == Some(&b'Z') && line.get(i + 1) == Some(&b' ')).then_some(i + 2)
}

/// A field as csvlog writes it: quoted when it holds a comma, quote or line break.
fn put_field(o: &mut Vec<u8>, f: &[u8]) {
    if f.iter().any(|&c| matches!(c, b',' | b'"' | b'\n' | b'\r')) {
        o.push(b'"');
        for &c in f {
            if c == b'"' {
                o.push(b'"');
            }
            o.push(c);
        }
        o.push(b'"');
    } else {
        o.extend_from_slice(f);
    }
}

impl CsvVariant {
    /// One record: `None` for a header line, else the record in PostgreSQL's layout.
    pub fn normalize(&mut self, line: Vec<u8>, lineno: u64) -> Result<Option<Vec<u8>>, String> {
        if line.is_empty() {
            return Ok(Some(line));
        }
        let line = match export_prefix(&line) {
            Some(n) => line[n..].to_vec(),
            None => line,
        };
        let first = !self.started;
        self.started = true;
        let Some(fields) = split(&line) else {
            return Ok(Some(line));
        };
        let named = |c: &[u8]| {
            fields
                .iter()
                .any(|f| f.trim_ascii().eq_ignore_ascii_case(c))
        };
        if first && named(b"log_time") && named(b"session_id") && named(b"message") {
            self.header = Some(header(&fields, lineno)?);
            return Ok(None);
        }
        let n = fields.len();
        match &self.header {
            Some((at, count)) => {
                if n != *count {
                    return Err(format!(
                        "Error parsing line {lineno}: {n} columns where the header line names {count}"
                    ));
                }
                let mut o = Vec::with_capacity(line.len());
                for &i in at {
                    put_field(&mut o, &fields[i]);
                    o.push(b',');
                }
                Ok(Some(o))
            }
            // fewer than pgreplay reads: its own message says which comma is missing
            None if n < READ || PLAIN_COUNTS.contains(&n) => Ok(Some(line)),
            None => Err(format!(
                "Error parsing line {lineno}: a csvlog record has 22 (PostgreSQL 8.4), 23 (9.0 to 12), \
                 24 (13) or 26 columns (14 and later), or the columns a header line names; this one has {n}"
            )),
        }
    }
}

/// The positions of the 15 read columns in a header line, and its column count.
fn header(fields: &[Vec<u8>], lineno: u64) -> Result<(Vec<usize>, usize), String> {
    let names: Vec<String> = fields
        .iter()
        .map(|f| String::from_utf8_lossy(f).trim().to_ascii_lowercase())
        .collect();
    let mut at = Vec::with_capacity(READ);
    for col in &COLUMNS[..READ] {
        match names.iter().position(|n| n == col) {
            Some(i) => at.push(i),
            None => {
                return Err(format!(
                    "Error parsing line {lineno}: the header line has no column \"{col}\""
                ))
            }
        }
    }
    Ok((at, fields.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &[u8] = b"2024-01-02 03:04:05.678 UTC,\"u\",\"d\",1,\"[local]\",6a.1,1,\"idle\",2024-01-02 03:04:05 UTC,3/4,0,LOG,00000,\"statement: SELECT 'a,\"\"b'\",,,,,,,,,\"psql\",\"client backend\",,0";

    #[test]
    fn plain_counts_pass_and_others_are_errors_naming_the_line() {
        let mut v = CsvVariant::default();
        assert_eq!(v.normalize(ROW.to_vec(), 1).unwrap().unwrap(), ROW);
        let mut extra = ROW.to_vec();
        extra.extend_from_slice(b",x");
        let e = v.normalize(extra, 7).unwrap_err();
        assert!(e.contains("line 7") && e.contains("has 27"), "{e}");
    }

    #[test]
    fn header_reorders_and_export_prefix_is_dropped() {
        let f = split(ROW).unwrap();
        assert_eq!(f.len(), 26);
        assert_eq!(f[13], b"statement: SELECT 'a,\"b'");
        // reversed columns with a header
        let mut names: Vec<&str> = COLUMNS.to_vec();
        names.reverse();
        let mut v = CsvVariant::default();
        assert!(v
            .normalize(names.join(",").into_bytes(), 1)
            .unwrap()
            .is_none());
        let mut rev = Vec::new();
        for (i, x) in f.iter().rev().enumerate() {
            if i > 0 {
                rev.push(b',');
            }
            put_field(&mut rev, x);
        }
        let got = v.normalize(rev, 2).unwrap().unwrap();
        assert_eq!(split(&got).unwrap()[..15], f[..15]);
        let mut w = CsvVariant::default();
        let mut pre = b"2024-01-02T03:04:05.678Z ".to_vec();
        pre.extend_from_slice(ROW);
        assert_eq!(w.normalize(pre, 1).unwrap().unwrap(), ROW);
    }
}
