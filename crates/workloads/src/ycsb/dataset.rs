//! The YCSB table and its rows: `usertable` as YCSB's JDBC binding creates it (`YCSB_KEY
//! VARCHAR` primary key and `FIELD0..FIELDn TEXT`; YCSB's tool drops it first, pgrig only when
//! asked), the primary key added after the load, and row `k` = key number `k` with its fields'
//! random values derived from `k` alone, so the loader can send any row range over any
//! connection (binary COPY).

use pgrig_init::dataset::{CopyFormat, RowSource};
use pgrig_init::generic::LoadPlan;

use super::choose::Length;
use super::config::Config;
use super::keys::KeyFormat;
use super::rng::Rng;
use super::value::push_value;

/// The seed the loaded values derive from (the values' content is never checked).
const LOAD_SEED: u64 = 0x5943_5342;

/// `format_type` of the key column followed by enough `text` columns for any field count
/// [`binary_columns`](RowSource::binary_columns) may be asked for.
static COLUMNS: [&str; 1 + MAX_BINARY_FIELDS] = {
    let mut c = ["text"; 1 + MAX_BINARY_FIELDS];
    c[0] = "character varying";
    c
};
/// Field counts above this load through text COPY.
const MAX_BINARY_FIELDS: usize = 128;

/// The rows of the YCSB table.
#[derive(Clone, Debug)]
pub struct UserRows {
    table: String,
    records: i64,
    fields: usize,
    keys: KeyFormat,
    length: Length,
}

impl UserRows {
    pub fn new(c: &Config) -> UserRows {
        UserRows {
            table: c.table.clone(),
            records: c.recordcount,
            fields: c.fieldcount,
            keys: KeyFormat {
                hashed: c.hashed,
                zeropadding: c.zeropadding,
            },
            length: Length::new(c.fieldlengthdistribution, c.minfieldlength, c.fieldlength),
        }
    }
}

impl RowSource for UserRows {
    fn table(&self) -> &str {
        &self.table
    }

    fn rows(&self) -> i64 {
        self.records
    }

    fn push_row(&self, buf: &mut Vec<u8>, k: i64, format: CopyFormat) {
        let mut rng = Rng::new(LOAD_SEED, k as u64);
        match format {
            CopyFormat::Binary { .. } => {
                buf.extend_from_slice(&(1 + self.fields as i16).to_be_bytes());
                let at = begin_field(buf);
                self.keys.push(buf, k);
                end_field(buf, at);
                for _ in 0..self.fields {
                    let at = begin_field(buf);
                    push_value(buf, self.length.next(&mut rng) as usize, &mut rng);
                    end_field(buf, at);
                }
            }
            CopyFormat::Text => {
                self.keys.push(buf, k);
                for _ in 0..self.fields {
                    buf.push(b'\t');
                    let at = buf.len();
                    push_value(buf, self.length.next(&mut rng) as usize, &mut rng);
                    escape_text(buf, at);
                }
                buf.push(b'\n');
            }
        }
    }

    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        (self.fields <= MAX_BINARY_FIELDS).then(|| &COLUMNS[..1 + self.fields])
    }
}

/// Reserves a binary field's length word; returns where it is.
fn begin_field(buf: &mut Vec<u8>) -> usize {
    buf.extend_from_slice(&[0; 4]);
    buf.len()
}

/// Writes the length of the field whose bytes start at `at`.
fn end_field(buf: &mut [u8], at: usize) {
    let len = (buf.len() - at) as i32;
    buf[at - 4..at].copy_from_slice(&len.to_be_bytes());
}

/// Escapes the backslashes of text COPY data written from `at` on (values hold no tab,
/// newline or carriage return).
fn escape_text(buf: &mut Vec<u8>, at: usize) {
    let extra = buf[at..].iter().filter(|c| **c == b'\\').count();
    if extra == 0 {
        return;
    }
    let mut i = buf.len();
    buf.resize(buf.len() + extra, 0);
    let mut j = buf.len();
    while i > at {
        i -= 1;
        j -= 1;
        buf[j] = buf[i];
        if buf[i] == b'\\' {
            j -= 1;
            buf[j] = b'\\';
        }
    }
}

/// The columns of the YCSB table, in order, for statements.
pub fn field_names(fields: usize) -> impl Iterator<Item = String> {
    (0..fields).map(|i| format!("FIELD{i}"))
}

/// Create, load, primary key, `VACUUM ANALYZE`. Nothing is dropped first: an existing table is
/// an error unless the caller runs the cleanup statements ([`drop_table`]) before, as
/// `pgrig run --init` does.
pub fn load_plan(c: &Config) -> LoadPlan {
    let columns: Vec<String> = field_names(c.fieldcount)
        .map(|f| format!("{f} TEXT"))
        .collect();
    LoadPlan {
        drop: Vec::new(),
        create: vec![format!(
            "CREATE TABLE {} (YCSB_KEY VARCHAR, {})",
            c.table,
            columns.join(", ")
        )],
        sources: vec![Box::new(UserRows::new(c))],
        keys: vec![format!(
            "ALTER TABLE {} ADD PRIMARY KEY (YCSB_KEY)",
            c.table
        )],
        after: vec![format!("VACUUM ANALYZE {}", c.table)],
    }
}

/// `DROP TABLE IF EXISTS` the YCSB table.
pub fn drop_table(c: &Config) -> String {
    format!("DROP TABLE IF EXISTS {}", c.table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backslashes_are_doubled_in_text_copy() {
        let mut b = b"x\ta\\b\\".to_vec();
        escape_text(&mut b, 2);
        assert_eq!(b, b"x\ta\\\\b\\\\");
    }
}
