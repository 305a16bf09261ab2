//! sysbench's dataset as a [`LoadPlan`]: `sbtest1..N` created with `prepare`'s own
//! `CREATE TABLE` (so existing tables fail the same way), rows as sysbench generates them (ids
//! `1..table_size`, `k` from the `--rand-type` distribution over `1..table_size`, random
//! `c`/`pad` digit groups) through binary COPY, then the keys: the primary key (dropped while
//! the rows load) rebuilt as a unique index alongside `k_N` (and ANALYZE with pgrig's `analyze=on`;
//! by default statistics are left to autovacuum, as sysbench leaves them), all concurrently, then made the
//! primary key; the SERIAL sequence is moved past the loaded ids. Each row's values
//! come from its own stream (seed, table, row), so any row range loads on any connection.
//! bulk_insert's `prepare` creates one empty table per thread.

use pgrig_init::dataset::{CopyFormat, RowSource};
use pgrig_init::generic::LoadPlan;

use super::options::Settings;
use super::rand::{Dist, Rng};
use super::sql::{self, C_TEMPLATE, PAD_TEMPLATE};
use super::test::Test;

/// The rows of `sbtest<table>`.
#[derive(Debug)]
pub struct SbRows {
    name: String,
    table: u32,
    rows: u32,
    /// `k` is drawn from `1..=table_size`
    table_size: u32,
    seed: u64,
    dist: Dist,
}

/// Binary COPY columns: id, k, c, pad.
const BINARY: [&str; 4] = ["key", "integer", "character", "character"];

impl SbRows {
    pub fn new(table: u32, rows: u32, table_size: u32, seed: u64, dist: Dist) -> SbRows {
        SbRows {
            name: format!("sbtest{table}"),
            table,
            rows,
            table_size,
            seed,
            dist,
        }
    }

    /// Row `row`'s stream and `(id, k)`; `c` then `pad` are the stream's next draws.
    fn start(&self, row: i64) -> (Rng, i32, i32) {
        let mut rng = Rng::new(self.seed, (u64::from(self.table) << 40) ^ row as u64);
        let k = self.dist.default_value(&mut rng, 1, self.table_size);
        (rng, row as i32 + 1, k as i32)
    }

    /// Row `row`'s values: id, k, c, pad.
    pub fn values(&self, row: i64) -> (i32, i32, String, String) {
        let (mut rng, id, k) = self.start(row);
        let (mut c, mut pad) = (Vec::new(), Vec::new());
        rng.string_into(C_TEMPLATE, &mut c);
        rng.string_into(PAD_TEMPLATE, &mut pad);
        let text = |v: Vec<u8>| String::from_utf8(v).unwrap_or_default();
        (id, k, text(c), text(pad))
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
        let (mut rng, id, k) = self.start(row);
        match format {
            CopyFormat::Text => {
                use std::io::Write;
                let _ = write!(buf, "{id}\t{k}\t");
                rng.string_into(C_TEMPLATE, buf);
                buf.push(b'\t');
                rng.string_into(PAD_TEMPLATE, buf);
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
                for template in [C_TEMPLATE, PAD_TEMPLATE] {
                    buf.extend_from_slice(&(template.len() as i32).to_be_bytes());
                    rng.string_into(template, buf);
                }
            }
        }
    }

    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        Some(&BINARY)
    }
}

/// The seed `prepare` draws rows from: `--rand-seed`, or the clock when it is 0 (as sysbench).
fn load_seed(s: &Settings) -> u64 {
    if s.rand_seed != 0 {
        return s.rand_seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// `prepare`'s plan for `s`.
pub fn load_plan(s: &Settings) -> LoadPlan {
    let mut plan = LoadPlan::default();
    if s.test == Test::BulkInsert {
        plan.create = (1..=s.threads).map(sql::create_bulk_table).collect();
        return plan;
    }
    let seed = load_seed(s);
    let rows = s.rows_per_table();
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
            plan.sources.push(Box::new(SbRows::new(
                t,
                rows,
                s.table_size,
                seed,
                s.dist.clone(),
            )));
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
