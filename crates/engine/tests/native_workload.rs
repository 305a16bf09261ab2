//! A native workload (a Rust transaction program, `engine::workload`) run by the engine against
//! the test cluster: transfers between accounts, a read-only check and a transaction the
//! program rolls back itself. Balances must be conserved in every query mode; transaction types
//! and statements appear in the run document with their counts and percentiles; serialization
//! failures are retried with the same inputs; a program that gives up aborts its client; a
//! non-retryable error aborts with the server's text; each second reaches the sink with its
//! histogram.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, SeedOption};
use pgrig_engine::sink::{Level, Progress, SecondReport, Sink};
use pgrig_engine::workload::{
    Catalogue, ClientSeed, NativeWorkload, Params, Reply, Statement, Step, StmtId, TxProgram,
    TxType, Workload,
};
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::{Prng, QueryMode};
use pgrig_testkit::TestDb;

const ACCOUNTS: i64 = 10;

#[derive(Debug)]
struct Bank {
    cat: Catalogue,
    /// make client 0's first transaction abort (`Step::Abort`)
    give_up: bool,
    /// a new connection after every this many transactions (0: never)
    reconnect_every: u64,
    /// think time before every transaction, µs
    think_us: u64,
}

const BEGIN: StmtId = 0;
const READ: StmtId = 1;
const MOVE: StmtId = 2;
const COMMIT: StmtId = 3;
const ROLLBACK: StmtId = 4;
const NOTE: StmtId = 5;
const SUM: StmtId = 6;

impl Bank {
    /// `broken_check`: the "check" transaction selects from a missing table (a non-retryable
    /// error)
    fn new(give_up: bool, broken_check: bool) -> Bank {
        let mut cat = Catalogue::default();
        cat.add(Statement::simple("begin", "BEGIN"));
        cat.add(Statement::new("read", "SELECT bal FROM acct WHERE id = $1").with_rows());
        cat.add(Statement::new(
            "move",
            "UPDATE acct SET bal = bal + $2 WHERE id = $1",
        ));
        cat.add(Statement::simple("commit", "COMMIT"));
        cat.add(Statement::simple("rollback", "ROLLBACK"));
        cat.add(Statement::new(
            "note",
            "UPDATE acct SET note = $2 WHERE id = $1",
        ));
        let sum = if broken_check {
            "SELECT sum(bal) FROM no_such_table WHERE $1::int > 0"
        } else {
            "SELECT sum(bal) FROM acct WHERE id <= $1"
        };
        cat.add(Statement::new("sum", sum).with_rows());
        cat.transactions = vec![
            TxType {
                name: "transfer".into(),
                weight: 3,
                statements: vec![BEGIN, READ, MOVE, NOTE, COMMIT],
            },
            TxType {
                name: "check".into(),
                weight: 1,
                statements: vec![SUM],
            },
            TxType {
                name: "undo".into(),
                weight: 1,
                statements: vec![BEGIN, MOVE, ROLLBACK],
            },
        ];
        Bank {
            cat,
            give_up,
            reconnect_every: 0,
            think_us: 0,
        }
    }
}

impl Workload for Bank {
    fn name(&self) -> &str {
        "bank"
    }
    fn catalogue(&self) -> &Catalogue {
        &self.cat
    }
    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram> {
        Box::new(Teller {
            rng: Prng::seed(seed.seed ^ (u64::from(seed.id) << 32 | 7)),
            pc: 0,
            tx: 0,
            from: 0,
            to: 0,
            amount: 0,
            give_up: self.give_up && seed.id == 0,
            tries: 0,
            reconnect_every: self.reconnect_every,
            done: 0,
            think_us: self.think_us,
        })
    }
}

struct Teller {
    rng: Prng,
    pc: usize,
    tx: usize,
    from: i64,
    to: i64,
    amount: i64,
    give_up: bool,
    tries: u32,
    reconnect_every: u64,
    done: u64,
    think_us: u64,
}

impl TxProgram for Teller {
    fn delay_us(&mut self, _tx: usize) -> u64 {
        self.think_us
    }

    fn reconnect(&mut self) -> bool {
        self.done += 1;
        self.reconnect_every > 0 && self.done.is_multiple_of(self.reconnect_every)
    }

    fn begin(&mut self, tx: usize, retry: bool) {
        self.tx = tx;
        self.pc = 0;
        if !retry {
            self.from = self.rng.uint64_range(1, ACCOUNTS as u64) as i64;
            self.to = self.rng.uint64_range(1, ACCOUNTS as u64) as i64;
            self.amount = self.rng.uint64_range(1, 100) as i64;
        }
        self.tries += 1;
    }

    fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Step {
        if self.give_up {
            return Step::Abort("the teller gave up".into());
        }
        self.pc += 1;
        match (self.tx, self.pc) {
            (0, 1) => Step::Run(BEGIN),
            (0, 2) => {
                p.int(self.from);
                Step::Run(READ)
            }
            (0, 3) => {
                // the balance just read must be there and be a number
                if reply.and_then(|r| r.int(0, 0)).is_none() {
                    return Step::Abort("no balance".into());
                }
                p.int(self.from).int(-self.amount);
                Step::Run(MOVE)
            }
            (0, 4) => {
                p.int(self.to).int(self.amount);
                Step::Run(MOVE)
            }
            (0, 5) => {
                p.int(self.to).text(b"it's moved");
                Step::Run(NOTE)
            }
            (0, 6) => Step::Run(COMMIT),
            (1, 1) => {
                p.int(ACCOUNTS);
                Step::Run(SUM)
            }
            (1, _) => match reply.and_then(|r| r.int(0, 0)) {
                Some(_) => Step::Done,
                None => Step::Abort("no sum".into()),
            },
            (2, 1) => Step::Run(BEGIN),
            (2, 2) => {
                p.int(self.from).int(1_000_000);
                Step::Run(MOVE)
            }
            (2, 3) => Step::Run(ROLLBACK),
            (2, _) => Step::RolledBack,
            _ => Step::Done,
        }
    }
}

fn conn(db: &TestDb) -> ConnArgs {
    let env: std::collections::HashMap<String, String> = db.env().into_iter().collect();
    ConnArgs {
        host: env.get("PGHOST").cloned(),
        port: env.get("PGPORT").cloned(),
        user: env.get("PGUSER").cloned(),
        dbname: Some(db.name.clone()),
    }
}

fn bank_db(hint: &str) -> TestDb {
    let db = pgrig_testkit::fresh_db(hint);
    db.psql(&format!(
        "CREATE TABLE acct (id int PRIMARY KEY, bal bigint NOT NULL, note text); \
         INSERT INTO acct SELECT g, 1000, '' FROM generate_series(1, {ACCOUNTS}) g;"
    ));
    db
}

fn config(db: &TestDb, w: Bank, mode: QueryMode, clients: u32, tx: u64) -> BenchConfig {
    BenchConfig {
        conn: conn(db),
        clients,
        threads: 2.min(clients),
        duration: Duration::Transactions(tx),
        mode,
        random_seed: Some(SeedOption::Value(5)),
        native: Some(NativeWorkload(Arc::new(w))),
        ..Default::default()
    }
}

#[derive(Default)]
struct Recorder {
    errors: Mutex<Vec<String>>,
    seconds: AtomicU64,
    second_tx: AtomicU64,
}

impl Sink for Recorder {
    fn message(&self, level: Level, text: &str) {
        if level == Level::Error {
            self.errors.lock().unwrap().push(text.to_string());
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
    fn second(&self, s: &SecondReport<'_>) {
        self.seconds.fetch_add(1, Ordering::SeqCst);
        assert_eq!(s.histogram.len(), s.delta.counts.ok, "histogram = ok count");
        self.second_tx
            .fetch_add(s.delta.counts.ok, Ordering::SeqCst);
    }
}

fn total_balance(db: &TestDb) -> i64 {
    db.psql("SELECT sum(bal) FROM acct").trim().parse().unwrap()
}

#[test]
fn transfers_conserve_balances_in_every_query_mode() {
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let db = bank_db("native_modes");
        let mut cfg = config(&db, Bank::new(false, false), mode, 3, 40);
        // opposite transfers can deadlock: retried like serialization failures
        cfg.max_tries = 100;
        let r = run_bench(cfg, Arc::new(Recorder::default()), &StopHandle::default()).expect("run");
        let doc = pgrig_engine::document::of(&r);
        assert_eq!(doc.workload.as_deref(), Some("bank"));
        assert_eq!(doc.transactions.ok, 120, "{mode:?}");
        assert_eq!(doc.aborted_clients, 0);
        assert_eq!(total_balance(&db), ACCOUNTS * 1000, "{mode:?}");
        let names: Vec<&str> = doc.scripts.iter().map(|s| s.desc.as_str()).collect();
        assert_eq!(names, ["transfer", "check", "undo"]);
        let transfer = &doc.scripts[0];
        let moves = &transfer.commands[2];
        assert_eq!(moves.text, "UPDATE acct SET bal = bal + $2 WHERE id = $1");
        // statements of attempts that failed and were retried count too
        let (ok, retries) = (transfer.transactions.ok, transfer.transactions.retries);
        assert!((2 * ok..=2 * (ok + retries)).contains(&moves.executions));
        assert!(moves.latency_ms.unwrap().p99 > 0.0);
        let undo = &doc.scripts[2];
        assert_eq!(undo.transactions.rollbacks, undo.transactions.ok);
        assert_eq!(doc.transactions.rollbacks, undo.transactions.ok);
        assert!(undo.transactions.ok > 0 && doc.scripts[1].transactions.ok > 0);
        let notes = db.psql("SELECT count(*) FROM acct WHERE note = 'it''s moved'");
        assert_ne!(notes.trim(), "0", "{mode:?}: the quoted text arrived");
        assert_eq!(doc.clients.len(), 3);
        assert!(doc
            .clients
            .iter()
            .all(|c| c.transactions == 40 && c.busy_s > 0.0));
    }
}

#[test]
fn serialization_failures_are_retried_with_the_same_transfer() {
    let db = bank_db("native_retry");
    db.psql(&format!(
        "ALTER DATABASE {} SET default_transaction_isolation = 'serializable'",
        db.name
    ));
    let mut cfg = config(&db, Bank::new(false, false), QueryMode::Prepared, 4, 150);
    cfg.max_tries = 1000;
    let r = run_bench(cfg, Arc::new(Recorder::default()), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    assert_eq!(doc.transactions.ok, 600);
    assert_eq!(doc.transactions.failed, 0);
    assert!(doc.transactions.retries > 0, "4 clients on 10 rows retry");
    assert_eq!(total_balance(&db), ACCOUNTS * 1000);
}

#[test]
fn a_program_asking_to_reconnect_gets_a_new_session_and_keeps_its_prepared_statements_working() {
    let db = bank_db("native_reconnect");
    let mut bank = Bank::new(false, false);
    bank.reconnect_every = 4;
    let mut cfg = config(&db, bank, QueryMode::Prepared, 2, 20);
    cfg.max_tries = 100;
    let r = run_bench(cfg, Arc::new(Recorder::default()), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    assert_eq!(doc.transactions.ok, 40);
    assert_eq!(doc.aborted_clients, 0);
    assert_eq!(
        doc.reconnects,
        2 * 5,
        "every 4th of 20 transactions per client"
    );
    assert_eq!(total_balance(&db), ACCOUNTS * 1000);
}

#[test]
fn think_time_is_outside_the_latency_and_ends_with_the_run() {
    let db = bank_db("native_think");
    let mut bank = Bank::new(false, false);
    bank.think_us = 400_000;
    let mut cfg = config(&db, bank, QueryMode::Prepared, 2, 0);
    cfg.duration = Duration::Seconds(1);
    cfg.max_tries = 100;
    let t0 = std::time::Instant::now();
    let r = run_bench(cfg, Arc::new(Recorder::default()), &StopHandle::default()).expect("run");
    let took = t0.elapsed().as_secs_f64();
    let doc = pgrig_engine::document::of(&r);
    // two clients thinking 0.4 s before each transaction: 2 each in 1 s
    assert!(
        (2..=6).contains(&doc.transactions.ok),
        "{}",
        doc.transactions.ok
    );
    assert!(
        doc.latency_ms.max < 300.0,
        "think time not in the latency: {}",
        doc.latency_ms.max
    );
    assert!(
        took < 3.0,
        "the last think time was cut at the end of -T: {took} s"
    );
    bank_think_long(&db);
}

/// A think time far longer than -T ends with the run, not after it.
fn bank_think_long(db: &TestDb) {
    let mut bank = Bank::new(false, false);
    bank.think_us = 30_000_000;
    let mut cfg = config(db, bank, QueryMode::Prepared, 1, 0);
    cfg.duration = Duration::Seconds(1);
    let t0 = std::time::Instant::now();
    let r = run_bench(cfg, Arc::new(Recorder::default()), &StopHandle::default()).expect("run");
    assert_eq!(r.aborted_clients, 0);
    assert!(t0.elapsed().as_secs_f64() < 3.0, "{:?}", t0.elapsed());
}

#[test]
fn a_program_that_gives_up_aborts_its_client_only() {
    let db = bank_db("native_abort");
    let sink = Arc::new(Recorder::default());
    let cfg = config(&db, Bank::new(true, false), QueryMode::Extended, 2, 10);
    let r = run_bench(cfg, sink.clone(), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    assert_eq!(doc.aborted_clients, 1);
    assert_eq!(doc.transactions.ok, 10);
    let errors = sink.errors.lock().unwrap();
    assert!(
        errors.iter().any(|e| e.contains("the teller gave up")),
        "{errors:?}"
    );
}

#[test]
fn a_non_retryable_error_aborts_with_the_servers_text() {
    let db = bank_db("native_error");
    let sink = Arc::new(Recorder::default());
    let cfg = config(&db, Bank::new(false, true), QueryMode::Prepared, 1, 50);
    let r = run_bench(cfg, sink.clone(), &StopHandle::default()).expect("run");
    assert_eq!(r.aborted_clients, 1);
    let errors = sink.errors.lock().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("relation \"no_such_table\" does not exist")),
        "{errors:?}"
    );
}

#[test]
fn every_second_reaches_the_sink_with_its_histogram() {
    let db = bank_db("native_seconds");
    let sink = Arc::new(Recorder::default());
    let mut cfg = config(&db, Bank::new(false, false), QueryMode::Prepared, 2, 0);
    cfg.duration = Duration::Seconds(2);
    let r = run_bench(cfg, sink.clone(), &StopHandle::default()).expect("run");
    let doc = pgrig_engine::document::of(&r);
    let seconds = sink.seconds.load(Ordering::SeqCst);
    assert!(seconds >= 1, "seconds reported: {seconds}");
    assert_eq!(seconds as usize, doc.series.len());
    let in_series: u64 = doc.series.iter().map(|s| s.tps).sum();
    assert_eq!(sink.second_tx.load(Ordering::SeqCst), in_series);
}
