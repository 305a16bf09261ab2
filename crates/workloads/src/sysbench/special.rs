//! The tests that are not oltp_common's statement groups: oltp_insert (a plain INSERT of a new
//! row, server-numbered with `--auto_inc`, else `sysbench.rand.unique() - 2^31`),
//! select_random_points and select_random_ranges (each client draws `k` values from its own
//! slice `table_size / threads` wide) and bulk_insert (each client appends `(n,n)` rows to its
//! own table in batches as large as sysbench's 512 KiB multi-row INSERT holds).

use std::sync::Arc;

use pgrig_engine::workload::{
    Catalogue, ClientSeed, Params, Reply, Statement, Step, StmtId, TxProgram,
};

use super::options::Settings;
use super::rand::Rng;
use super::sql::{self, C_TEMPLATE, PAD_TEMPLATE};
use super::workload::Shared;
use super::Test;

/// Adds the test's own statements (oltp_insert: one per table; bulk_insert: one per thread's
/// table) and returns the first one's id.
pub fn add_statements(s: &Settings, cat: &mut Catalogue) -> StmtId {
    let first = cat.statements.len() as StmtId;
    match s.test {
        Test::OltpInsert => {
            for t in 1..=s.tables {
                let text = sql::insert_query(t, s.auto_inc);
                cat.add(Statement::simple(format!("sbtest{t}.insert"), text));
            }
        }
        Test::SelectRandomPoints => {
            cat.add(Statement::new(
                "random_points",
                sql::random_points(s.random_points),
            ));
        }
        Test::SelectRandomRanges => {
            cat.add(Statement::new(
                "random_ranges",
                sql::random_ranges(s.number_of_ranges),
            ));
        }
        Test::BulkInsert => {
            for t in 1..=s.threads {
                cat.add(Statement::simple(
                    format!("sbtest{t}.bulk_insert"),
                    sql::bulk_insert_series(t),
                ));
            }
        }
        _ => {}
    }
    first
}

/// A client of one of these tests.
pub fn client(sh: Arc<Shared>, rng: Rng, seed: ClientSeed) -> Box<dyn TxProgram> {
    let s = &sh.settings;
    // sysbench: rlen = table_size / threads (a float), each thread's slice starts at rlen * tid
    let clients = seed.clients.max(1);
    let rlen = f64::from(s.table_size) / f64::from(clients);
    let rmin = rlen * f64::from(seed.id % clients);
    let slice = (rmin as u32, (rmin + rlen) as u32);
    let table = seed.id % s.threads.max(1) + 1;
    Box::new(Single {
        sh,
        rng,
        slice,
        table,
        next_row: 1,
        sent: false,
    })
}

/// A program that runs one statement per event.
struct Single {
    sh: Arc<Shared>,
    rng: Rng,
    /// select_random_*: this client's `[rmin, rmax]`
    slice: (u32, u32),
    /// bulk_insert: this client's table
    table: u32,
    /// bulk_insert: the next row's number
    next_row: u64,
    sent: bool,
}

impl Single {
    fn insert(&mut self, params: &mut Params) -> StmtId {
        let s = &self.sh.settings;
        let table = self.rng.uniform(1, s.tables);
        let k = s.dist.default_value(&mut self.rng, 1, s.table_size);
        if !s.auto_inc {
            params.int(i64::from(self.sh.unique.next()) - (1i64 << 31));
        }
        let rng = &mut self.rng;
        params
            .int(i64::from(k))
            .text_with(|b| rng.string_into(C_TEMPLATE, b))
            .text_with(|b| rng.string_into(PAD_TEMPLATE, b));
        self.sh.single + (table - 1) as StmtId
    }

    fn points(&mut self, params: &mut Params) -> StmtId {
        let s = &self.sh.settings;
        let (a, b) = self.slice;
        for _ in 0..s.random_points {
            params.int(i64::from(s.dist.default_value(&mut self.rng, a, b)));
        }
        self.sh.single
    }

    fn ranges(&mut self, params: &mut Params) -> StmtId {
        let s = &self.sh.settings;
        let (a, b) = self.slice;
        for _ in 0..s.number_of_ranges {
            let v = i64::from(s.dist.default_value(&mut self.rng, a, b));
            params.int(v).int(v + i64::from(s.delta));
        }
        self.sh.single
    }

    fn bulk(&mut self, params: &mut Params) -> StmtId {
        let (first, last) = bulk_batch(self.table, self.next_row);
        self.next_row = last + 1;
        params.int(first as i64).int(last as i64);
        self.sh.single + (self.table - 1) as StmtId
    }
}

/// The rows `first..=last` sysbench's multi-row INSERT into `sbtest<table>` holds when it
/// starts at row `first`: rows are appended as `(n,n)`, comma-separated, while the text stays
/// within [`sql::BULK_PACKET_SIZE`] bytes including its terminating NUL.
pub fn bulk_batch(table: u32, first: u64) -> (u64, u64) {
    let mut len = sql::bulk_insert_head(table).len();
    let mut n = first;
    loop {
        let row = 2 * digits(n) + 3;
        let comma = usize::from(n > first);
        if n > first && len + row + 1 + comma > sql::BULK_PACKET_SIZE {
            return (first, n - 1);
        }
        len += row + comma;
        n += 1;
    }
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

impl TxProgram for Single {
    fn begin(&mut self, _tx: usize, _retry: bool) {
        self.sent = false;
    }

    fn step(&mut self, _reply: Option<&Reply<'_>>, params: &mut Params) -> Step {
        if self.sent {
            return Step::Done;
        }
        self.sent = true;
        let id = match self.sh.settings.test {
            Test::OltpInsert => self.insert(params),
            Test::SelectRandomPoints => self.points(params),
            Test::SelectRandomRanges => self.ranges(params),
            _ => self.bulk(params),
        };
        Step::Run(id)
    }
}
