//! The tests that are not oltp_common's statement groups: oltp_insert (a plain INSERT of a new
//! row, server-numbered with `--auto_inc`, else `sysbench.rand.unique() - 2^31`),
//! select_random_points and select_random_ranges (each client draws `k` values from its own
//! slice `table_size / threads` wide). bulk_insert's statements are added here, its client is
//! [`super::bulk`].

use std::sync::Arc;

use pgrig_engine::workload::{
    Catalogue, ClientSeed, Params, Reply, Statement, Step, StmtId, TxProgram,
};

use super::options::Settings;
use super::rand::Rng;
use super::shared::Shared;
use super::sql::{self, C_TEMPLATE, PAD_TEMPLATE};
use super::test::Test;

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
                    sql::bulk_insert(t),
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
    Box::new(Single {
        sh,
        rng,
        slice,
        sent: false,
        started: false,
    })
}

/// A program that runs one statement per event.
struct Single {
    sh: Arc<Shared>,
    rng: Rng,
    /// select_random_*: this client's `[rmin, rmax]`
    slice: (u32, u32),
    sent: bool,
    /// an event has run (`oltp::end_of_event_draw`)
    started: bool,
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
}

impl TxProgram for Single {
    fn begin(&mut self, _tx: usize, retry: bool) {
        if !retry {
            let p = self.sh.settings.percentile;
            super::oltp::end_of_event_draw(&mut self.started, &mut self.rng, p);
        }
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
            _ => self.ranges(params),
        };
        Step::Run(id)
    }
}
