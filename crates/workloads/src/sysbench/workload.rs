//! One sysbench test as a [`Workload`]: its catalogue (every statement once per table, in the
//! order the test prepares them, BEGIN/COMMIT as simple statements), the plan of statement
//! groups an OLTP event runs, and the state its clients share ([`Shared`]), and each client's
//! program.

use std::sync::Arc;

use pgrig_engine::workload::{
    Catalogue, ClientSeed, Statement, StmtId, TxProgram, TxType, Workload,
};

use super::options::Settings;
use super::seeding::Stream;
use super::shared::{Group, Shared};
use super::sql::{self, Kind};
use super::test::Test;
use super::{oltp, special};

/// A sysbench test ready to run.
#[derive(Debug)]
pub struct SysbenchWorkload {
    catalogue: Catalogue,
    shared: Arc<Shared>,
}

/// The statement groups of each OLTP test's event, in sysbench's order.
/// The statements sysbench's script for the test prepares in `thread_init` (every group's
/// statement on every table, even a group of no statements; a delete-insert's two).
fn prepared_statements(s: &Settings, plan: &[Group]) -> u32 {
    match s.test {
        Test::SelectRandomPoints | Test::SelectRandomRanges => 1,
        Test::OltpInsert | Test::BulkInsert => 0,
        _ => plan
            .iter()
            .map(|g| match g {
                Group::Begin | Group::Commit => 1,
                Group::Repeat(Kind::Delete, _) if s.test != Test::OltpDelete => 2 * s.tables,
                Group::Repeat(..) => s.tables,
            })
            .sum(),
    }
}

fn plan(s: &Settings) -> Vec<Group> {
    use Group::Repeat;
    let ranges = |v: &mut Vec<Group>| {
        if s.range_selects {
            v.extend([
                Repeat(Kind::SimpleRange, s.simple_ranges),
                Repeat(Kind::SumRange, s.sum_ranges),
                Repeat(Kind::OrderRange, s.order_ranges),
                Repeat(Kind::DistinctRange, s.distinct_ranges),
            ]);
        }
    };
    let writes = |v: &mut Vec<Group>| {
        v.extend([
            Repeat(Kind::IndexUpdate, s.index_updates),
            Repeat(Kind::NonIndexUpdate, s.non_index_updates),
            Repeat(Kind::Delete, s.delete_inserts),
        ]);
    };
    let mut v = Vec::new();
    let trx = !s.skip_trx
        && matches!(
            s.test,
            Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly
        );
    if trx {
        v.push(Group::Begin);
    }
    match s.test {
        Test::OltpReadWrite => {
            v.push(Repeat(Kind::PointSelect, s.point_selects));
            ranges(&mut v);
            writes(&mut v);
        }
        Test::OltpReadOnly => {
            v.push(Repeat(Kind::PointSelect, s.point_selects));
            ranges(&mut v);
        }
        Test::OltpWriteOnly => writes(&mut v),
        Test::OltpPointSelect => v.push(Repeat(Kind::PointSelect, 1)),
        Test::OltpUpdateIndex => v.push(Repeat(Kind::IndexUpdate, s.index_updates)),
        Test::OltpUpdateNonIndex => v.push(Repeat(Kind::NonIndexUpdate, s.non_index_updates)),
        Test::OltpDelete => v.push(Repeat(Kind::Delete, 1)),
        _ => {}
    }
    if trx {
        v.push(Group::Commit);
    }
    v
}

/// The kinds a test prepares, in sysbench's order of preparation.
fn kinds(s: &Settings) -> Vec<Kind> {
    let ranges = [
        Kind::SimpleRange,
        Kind::SumRange,
        Kind::OrderRange,
        Kind::DistinctRange,
    ];
    let writes = [
        Kind::IndexUpdate,
        Kind::NonIndexUpdate,
        Kind::Delete,
        Kind::Insert,
    ];
    let mut v = Vec::new();
    match s.test {
        Test::OltpReadWrite | Test::OltpReadOnly => {
            v.push(Kind::PointSelect);
            if s.range_selects {
                v.extend(ranges);
            }
            if s.test == Test::OltpReadWrite {
                v.extend(writes);
            }
        }
        Test::OltpWriteOnly => v.extend(writes),
        Test::OltpPointSelect => v.push(Kind::PointSelect),
        Test::OltpUpdateIndex => v.push(Kind::IndexUpdate),
        Test::OltpUpdateNonIndex => v.push(Kind::NonIndexUpdate),
        Test::OltpDelete => v.push(Kind::Delete),
        _ => {}
    }
    v
}

impl SysbenchWorkload {
    pub fn new(settings: Settings) -> SysbenchWorkload {
        let mut cat = Catalogue::default();
        let mut first = [StmtId::MAX; 9];
        let (mut begin, mut commit) = (StmtId::MAX, StmtId::MAX);
        let trx = !settings.skip_trx
            && matches!(
                settings.test,
                Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly
            );
        if trx {
            begin = cat.add(Statement::simple("begin", sql::BEGIN));
        }
        for kind in kinds(&settings) {
            for t in 1..=settings.tables {
                let id = cat.add(Statement::new(
                    format!("sbtest{t}.{}", kind.key()),
                    kind.sql(t),
                ));
                if t == 1 {
                    first[kind as usize] = id;
                }
            }
        }
        if trx {
            commit = cat.add(Statement::simple("commit", sql::COMMIT));
        }
        let single = special::add_statements(&settings, &mut cat);
        cat.transactions.push(TxType {
            name: settings.test.name().to_string(),
            weight: 1,
            statements: (0..cat.statements.len() as StmtId).collect(),
        });
        let shared = Shared {
            plan: plan(&settings),
            unique: super::seeding::unique(),
            settings,
            begin,
            commit,
            first,
            single,
        };
        SysbenchWorkload {
            catalogue: cat,
            shared: Arc::new(shared),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.shared.settings
    }
}

impl Workload for SysbenchWorkload {
    fn name(&self) -> &str {
        self.shared.settings.test.name()
    }

    fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram> {
        let s = &self.shared.settings;
        // sysbench's worker stream: `srandom(--rand-seed)`, the background threads' seeds, then
        // the workers' in thread order (a run without `--rand-seed` takes the engine's seed)
        let run_seed = if s.rand_seed != 0 {
            s.rand_seed as u32
        } else {
            seed.seed as u32
        };
        let rng = Stream::Run {
            seed: run_seed,
            background: s.background,
            thread: seed.id,
        }
        .rng();
        // thread_init's prepared statements: sysbench's driver names each with two draws
        let mut rng = rng;
        if !s.ps_disabled {
            for _ in 0..2 * prepared_statements(s, &self.shared.plan) {
                rng.next_u64();
            }
        }
        match s.test {
            Test::BulkInsert => {
                let table = seed.id % s.threads.max(1) + 1;
                let stmt = self.shared.single + (table - 1) as StmtId;
                Box::new(super::bulk::Bulk::new(table, stmt))
            }
            Test::OltpInsert | Test::SelectRandomPoints | Test::SelectRandomRanges => {
                special::client(self.shared.clone(), rng, seed)
            }
            _ => Box::new(oltp::Oltp::new(self.shared.clone(), rng)),
        }
    }

    /// sysbench's pgsql driver rolls back and restarts the event on deadlocks, unique
    /// violations and serialization failures ("ignored errors").
    fn retryable(&self, sqlstate: &str) -> bool {
        matches!(sqlstate, "40001" | "40P01" | "23505")
    }
}
