//! sysbench's dataset as a [`LoadPlan`]: `sbtest1..N` created with `prepare`'s own
//! `CREATE TABLE` (so existing tables fail the same way), rows as sysbench generates them (ids
//! `1..table_size`, `k` from the `--rand-type` distribution over `1..table_size`, random
//! `c`/`pad` digit groups) through binary COPY, then the keys: the primary key (dropped while
//! the rows load) rebuilt as a unique index alongside `k_N` (and ANALYZE with pgrig's `analyze=on`;
//! by default statistics are left to autovacuum, as sysbench leaves them), all concurrently, then made the
//! primary key; the SERIAL sequence is moved past the loaded ids. The rows are sysbench's own,
//! drawn from the streams its `prepare` draws them from (`prepare_streams`), so both tools
//! make the same tables; any row range still loads on any connection.
//! bulk_insert's `prepare` creates one empty table per thread.

use std::sync::Arc;

use pgrig_init::dataset::{CopyFormat, RowSource};
use pgrig_init::generic::LoadPlan;

use super::options::Settings;
use super::prepare_streams::{Cursors, PrepareStream, RowValues};
use super::seeding::Stream;
use super::sql;
use super::test::Test;

/// The rows of `sbtest<table>`.
#[derive(Debug)]
pub struct SbRows {
    name: String,
    rows: u32,
    /// the stream the table's rows come from, and the table's place among its tables
    stream: Arc<PrepareStream>,
    index: usize,
    cursors: Cursors,
}

/// Binary COPY columns: id, k, c, pad.
const BINARY: [&str; 4] = ["key", "integer", "character", "character"];

impl SbRows {
    pub fn new(table: u32, rows: u32, stream: Arc<PrepareStream>, index: usize) -> SbRows {
        SbRows {
            name: format!("sbtest{table}"),
            rows,
            stream,
            index,
            cursors: Cursors::default(),
        }
    }

    /// Row `row`'s values (the stream's state after it is kept for the next row).
    fn draw(&self, row: i64) -> RowValues {
        let mut rng =
            (self.cursors.take(row)).unwrap_or_else(|| self.stream.rng_at(self.index, row));
        let v = self.stream.row(&mut rng);
        if row + 1 < i64::from(self.rows) {
            self.cursors.put(row + 1, rng);
        }
        v
    }

    /// Row `row`'s values: id, k, c, pad.
    pub fn values(&self, row: i64) -> (i32, i32, String, String) {
        let v = self.draw(row);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (row as i32 + 1, v.k as i32, text(&v.c), text(&v.pad))
    }
}

impl RowSource for SbRows {
    fn table(&self) -> &str {
        &self.name
    }

    fn rows(&self) -> i64 {
        i64::from(self.rows)
    }

    fn push_row(&self, buf: &mut Vec<u8>, row: i64, format: CopyFormat) {
        let v = self.draw(row);
        let (id, k) = (row as i32 + 1, v.k as i32);
        match format {
            CopyFormat::Text => {
                use std::io::Write;
                let _ = write!(buf, "{id}\t{k}\t");
                buf.extend_from_slice(&v.c);
                buf.push(b'\t');
                buf.extend_from_slice(&v.pad);
                buf.push(b'\n');
            }
            CopyFormat::Binary { wide_key } => {
                buf.extend_from_slice(&4i16.to_be_bytes());
                if wide_key {
                    buf.extend_from_slice(&8i32.to_be_bytes());
                    buf.extend_from_slice(&i64::from(id).to_be_bytes());
                } else {
                    buf.extend_from_slice(&4i32.to_be_bytes());
                    buf.extend_from_slice(&id.to_be_bytes());
                }
                buf.extend_from_slice(&4i32.to_be_bytes());
                buf.extend_from_slice(&k.to_be_bytes());
                for text in [&v.c[..], &v.pad[..]] {
                    buf.extend_from_slice(&(text.len() as i32).to_be_bytes());
                    buf.extend_from_slice(text);
                }
            }
        }
    }

    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        Some(&BINARY)
    }
}

/// The row sources of `s`'s tables, each on the stream sysbench's `prepare` fills it from
/// (`prepare_streams`).
fn sources(s: &Settings) -> Vec<SbRows> {
    let rows = s.rows_per_table();
    if rows == 0 {
        return Vec::new();
    }
    let threads = s.threads.max(1);
    let mut out: Vec<(u32, SbRows)> = Vec::new();
    for tid in 0..threads.min(s.tables) {
        let tables: Vec<u32> = (tid + 1..=s.tables).step_by(threads as usize).collect();
        let stream = if threads == 1 {
            Stream::Main
        } else {
            Stream::Command(tid)
        };
        let counts = vec![i64::from(rows); tables.len()];
        let stream = Arc::new(PrepareStream::new(
            stream,
            counts,
            s.table_size,
            s.dist.clone(),
        ));
        for (i, &t) in tables.iter().enumerate() {
            out.push((t, SbRows::new(t, rows, stream.clone(), i)));
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out.into_iter().map(|(_, r)| r).collect()
}

/// `prepare`'s plan for `s`.
pub fn load_plan(s: &Settings) -> LoadPlan {
    let mut plan = LoadPlan::default();
    if s.test == Test::BulkInsert {
        plan.create = (1..=s.threads).map(sql::create_bulk_table).collect();
        return plan;
    }
    let rows = s.rows_per_table();
    let mut sources = sources(s).into_iter();
    let (mut indexes, mut analyze) = (Vec::new(), Vec::new());
    for t in 1..=s.tables {
        plan.create
            .push(sql::create_table(t, s.auto_inc, s.secondary));
        if !s.secondary {
            // The key is built after the load as a plain unique index (which, unlike ADD
            // PRIMARY KEY, builds alongside k_N), then made the primary key.
            plan.create.push(format!(
                "ALTER TABLE sbtest{t} DROP CONSTRAINT sbtest{t}_pkey"
            ));
            plan.keys.push(format!(
                "CREATE UNIQUE INDEX sbtest{t}_pkey ON sbtest{t}(id)"
            ));
            plan.after.push(format!(
                "ALTER TABLE sbtest{t} ADD CONSTRAINT sbtest{t}_pkey PRIMARY KEY USING INDEX sbtest{t}_pkey"
            ));
        }
        if s.create_secondary {
            indexes.push(format!("CREATE INDEX k_{t} ON sbtest{t}(k)"));
        }
        if rows > 0 {
            if let Some(src) = sources.next() {
                plan.sources.push(Box::new(src));
            }
            if s.auto_inc {
                plan.after
                    .push(format!("SELECT setval('sbtest{t}_id_seq', {rows})"));
            }
        }
        if s.analyze {
            analyze.push(format!("ANALYZE sbtest{t}"));
        }
    }
    // keys first, then the k indexes, then ANALYZE (each waits for its table's index builds)
    plan.keys.extend(indexes);
    plan.keys.extend(analyze);
    plan
}

/// `cleanup`: sysbench's `DROP TABLE IF EXISTS` per table (bulk_insert: per thread).
pub fn cleanup(s: &Settings) -> Vec<String> {
    let n = if s.test == Test::BulkInsert {
        s.threads
    } else {
        s.tables
    };
    (1..=n)
        .map(|t| format!("DROP TABLE IF EXISTS sbtest{t}"))
        .collect()
}
