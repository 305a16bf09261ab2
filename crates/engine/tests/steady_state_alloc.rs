//! No allocation per transaction in steady state: whole benchmark runs (connect, run, report)
//! with a counting global allocator, at two transaction counts; start-up costs the same in both,
//! so the difference is what the extra transactions allocated. It must be (close to) nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, ScriptSource, SeedOption};
use pgrig_engine::sink::NullSink;
use pgrig_engine::workload::{
    Catalogue, ClientSeed, NativeWorkload, Params, Reply, Statement, Step, TxProgram, TxType,
    Workload,
};
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A native workload on pgbench's tables: read a balance (its value handed back to the
/// program), update it, in a transaction.
#[derive(Debug)]
struct Accounts(Catalogue);

impl Accounts {
    fn new() -> Accounts {
        let mut c = Catalogue::default();
        c.add(Statement::simple("begin", "BEGIN"));
        c.add(
            Statement::new(
                "read",
                "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            )
            .with_rows(),
        );
        c.add(Statement::new(
            "update",
            "UPDATE pgbench_accounts SET abalance = abalance + $2 WHERE aid = $1",
        ));
        c.add(Statement::simple("commit", "COMMIT"));
        c.transactions = vec![TxType {
            name: "account".into(),
            weight: 1,
            statements: vec![0, 1, 2, 3],
        }];
        Accounts(c)
    }
}

impl Workload for Accounts {
    fn name(&self) -> &str {
        "accounts"
    }
    fn catalogue(&self) -> &Catalogue {
        &self.0
    }
    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram> {
        Box::new(Teller {
            aid: i64::from(seed.id),
            pc: 0,
        })
    }
}

struct Teller {
    aid: i64,
    pc: u8,
}

impl TxProgram for Teller {
    fn begin(&mut self, _tx: usize, _retry: bool) {
        self.pc = 0;
        self.aid = self.aid % 100_000 + 1;
    }
    fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Step {
        self.pc += 1;
        match self.pc {
            1 => Step::Run(0),
            2 => {
                p.int(self.aid);
                Step::Run(1)
            }
            3 => {
                let balance = reply.and_then(|r| r.int(0, 0)).unwrap_or(0);
                p.int(self.aid).int(1 - balance.signum());
                Step::Run(2)
            }
            4 => Step::Run(3),
            _ => Step::Done,
        }
    }
}

fn allocations(db: &pgrig_testkit::TestDb, script: &str, mode: QueryMode, tx: u64) -> u64 {
    let env: std::collections::HashMap<String, String> = db.env().into_iter().collect();
    let cfg = BenchConfig {
        conn: ConnArgs {
            host: env.get("PGHOST").cloned(),
            port: env.get("PGPORT").cloned(),
            user: env.get("PGUSER").cloned(),
            dbname: Some(db.name.clone()),
        },
        scripts: vec![ScriptSource::Builtin {
            name: script.into(),
            weight: 1,
        }],
        clients: 2,
        threads: 1,
        duration: Duration::Transactions(tx),
        mode,
        no_vacuum: true,
        random_seed: Some(SeedOption::Value(7)),
        // per-command figures on: their histograms must not allocate per transaction either
        report_per_command: true,
        native: (script == "native").then(|| NativeWorkload(Arc::new(Accounts::new()))),
        ..Default::default()
    };
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = run_bench(cfg, Arc::new(NullSink), &StopHandle::default()).expect("benchmark runs");
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(r.aborted_clients, 0);
    after - before
}

/// The allocator counts every thread of the process: tests measure one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn assert_flat(script: &str, mode: QueryMode) {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let db = pgrig_testkit::fresh_db("alloc");
    let init = db
        .pgbench()
        .args(["-i", "-q", "-s", "1"])
        .output()
        .expect("pgbench -i");
    assert!(init.status.success());
    // Warm-up run (first connections, catalog caches on the server side do not matter here).
    allocations(&db, script, mode, 50);
    let small = allocations(&db, script, mode, 200);
    let large = allocations(&db, script, mode, 1200);
    let extra_tx = 2 * (1200 - 200);
    let per_tx = large.saturating_sub(small) as f64 / extra_tx as f64;
    assert!(
        per_tx < 0.01,
        "{script} {mode:?}: {small} allocations for 2x200 transactions, {large} for 2x1200: \
         {per_tx:.3} per transaction"
    );
}

#[test]
fn select_only_prepared_allocates_nothing_per_transaction() {
    assert_flat("select-only", QueryMode::Prepared);
}

#[test]
fn a_native_workload_in_every_mode_allocates_nothing_per_transaction() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        assert_flat("native", mode);
    }
}

#[test]
fn tpcb_like_in_every_mode_allocates_nothing_per_transaction() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        assert_flat("tpcb-like", mode);
    }
}
