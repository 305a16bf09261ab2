//! Shared by the TPC-C tests: a loaded TPC-C database per warehouse count (loaded once per
//! test binary, then copied per test with `CREATE DATABASE ... TEMPLATE`), and a tiny driver that
//! runs a transaction program statement by statement over the simple protocol.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pgrig_engine::sink::NullSink;
use pgrig_engine::stop::StopHandle;
use pgrig_engine::workload::{inline_params, Catalogue, Params, Reply, Rows, Step};
use pgrig_testkit::{fresh_db, TestDb};
use pgrig_wire::{ConnArgs, Connection};
use pgrig_workloads::Options;

/// `pgrig_workloads::build("tpcc", key=value...)`.
pub fn native(pairs: &[(&str, &str)]) -> pgrig_workloads::Native {
    let mut o = Options::new();
    for (k, v) in pairs {
        o.set(k, *v);
    }
    pgrig_workloads::build("tpcc", &o).expect("tpcc builds")
}

pub fn conn_args(conninfo: String) -> ConnArgs {
    ConnArgs {
        dbname: Some(conninfo),
        ..ConnArgs::default()
    }
}

/// Loads TPC-C with `pairs` into `db` with `jobs` connections.
pub fn load_into(
    db: &TestDb,
    pairs: &[(&str, &str)],
    jobs: usize,
) -> pgrig_init::generic::LoadReport {
    let n = native(pairs);
    pgrig_init::generic::load(
        &conn_args(db.conninfo()),
        &n.load,
        jobs,
        &NullSink,
        &StopHandle::default(),
    )
    .unwrap_or_else(|e| panic!("load failed: {:?}", e.lines))
}

/// A database name loaded with `warehouses` warehouses (once per binary), never connected to
/// again so it can serve as a template.
fn template(warehouses: i64) -> &'static TestDb {
    static TEMPLATES: OnceLock<Mutex<HashMap<i64, &'static TestDb>>> = OnceLock::new();
    let mut map = TEMPLATES.get_or_init(Default::default).lock().unwrap();
    map.entry(warehouses).or_insert_with(|| {
        let db = Box::leak(Box::new(fresh_db(&format!("tpcc_tpl_{warehouses}"))));
        let w = warehouses.to_string();
        load_into(db, &[("warehouses", &w)], 2);
        db
    })
}

/// A copy of the loaded database (dropped with the value).
pub struct Db {
    pub name: String,
    tpl: &'static TestDb,
}

impl Db {
    pub fn loaded(warehouses: i64) -> Db {
        let tpl = template(warehouses);
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "t_tpcc_copy_{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        // a template must have no other connection while it is copied
        static COPY: Mutex<()> = Mutex::new(());
        let _g = COPY.lock().unwrap();
        tpl.server()
            .psql(
                "postgres",
                &format!("CREATE DATABASE {name} TEMPLATE {}", tpl.name),
            )
            .expect("copy of the loaded database");
        Db { name, tpl }
    }

    pub fn conninfo(&self) -> String {
        self.tpl.server().conninfo(&self.name)
    }

    pub fn psql(&self, sql: &str) -> String {
        self.tpl
            .server()
            .psql(&self.name, sql)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn int(&self, sql: &str) -> i64 {
        let out = self.psql(sql);
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{sql}: not an integer: {out}"))
    }

    /// `xact_commit + xact_rollback` of this database in `pg_stat_database`, read from another
    /// database (the reading is not counted) once it stops moving (backends flush their
    /// counts when they exit).
    pub fn server_xacts(&self) -> i64 {
        let q = format!(
            "select xact_commit + xact_rollback from pg_stat_database where datname = '{}'",
            self.name
        );
        let read = || {
            let out = self.tpl.server().psql("postgres", &q).unwrap();
            out.trim().parse::<i64>().unwrap()
        };
        let mut last = read();
        for _ in 0..30 {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let next = read();
            if next == last {
                break;
            }
            last = next;
        }
        last
    }

    pub fn wire(&self) -> pgrig_wire::Config {
        pgrig_wire::Config::from_args(&conn_args(self.conninfo()), "tpcc-test").unwrap()
    }

    pub fn driver(&self) -> Driver {
        Driver::new(&self.wire())
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.tpl.server().psql(
            "postgres",
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Runs programs' statements one by one (simple protocol, parameters inlined as the engine
/// does in simple mode).
pub struct Driver {
    conn: Option<Connection>,
    catalogue: Catalogue,
    rows: Rows,
    params: Params,
    /// statements run, by id
    pub executed: Vec<u16>,
}

impl Driver {
    pub fn new(config: &pgrig_wire::Config) -> Driver {
        Driver {
            conn: Some(Connection::connect_rt(config).expect("connect")),
            catalogue: pgrig_workloads::tpcc::sql::catalogue(),
            rows: Rows::default(),
            params: Params::new(),
            executed: Vec::new(),
        }
    }

    /// Runs one transaction: `step` is the program's step function. Returns its last step, or
    /// the server's error (after a ROLLBACK).
    pub fn run(
        &mut self,
        mut step: impl FnMut(Option<&Reply<'_>>, &mut Params) -> Step,
    ) -> Result<Step, String> {
        let mut count: Option<u64> = None;
        loop {
            self.params.clear();
            let s = {
                let reply = count.map(|count| Reply {
                    count,
                    rows: &self.rows,
                });
                step(reply.as_ref(), &mut self.params)
            };
            let Step::Run(id) = s else { return Ok(s) };
            self.executed.push(id);
            let stmt = &self.catalogue.statements[usize::from(id)];
            let mut sql = Vec::new();
            inline_params(&stmt.sql, &self.params, &mut sql);
            let sql = String::from_utf8(sql).unwrap();
            let mut conn = self.conn.take().unwrap();
            let (conn, res) = pgrig_wire::rt::block_on(async move {
                let r = conn.simple_query(&sql).await;
                if r.is_err() {
                    let _ = conn.execute_simple("ROLLBACK").await;
                }
                (conn, r)
            });
            self.conn = Some(conn);
            let res = res.map_err(|e| format!("{}: {e}", stmt.name))?;
            let r = res.into_iter().next().unwrap_or_default();
            self.rows.clear();
            for row in &r.rows {
                self.rows.begin_row(row.len());
                for i in 0..row.len() {
                    self.rows.push_cell(row.get(i).map(str::as_bytes));
                }
            }
            count = Some(r.rows_affected().unwrap_or(r.rows.len() as u64));
        }
    }
}

/// A sink that prints the run's messages (shown when a test fails).
pub struct PrintSink;

impl pgrig_engine::sink::Sink for PrintSink {
    fn message(&self, level: pgrig_engine::sink::Level, text: &str) {
        eprintln!("{level:?}: {text}");
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &pgrig_engine::sink::Progress) {}
}

/// A TPC-C run through the engine with the options `pairs` (seed 3, retries up to 1000).
pub fn run(
    db: &Db,
    pairs: &[(&str, &str)],
    clients: u32,
    duration: pgrig_engine::config::Duration,
    mode: pgrig_script::QueryMode,
) -> pgrig_engine::document::RunDocument {
    let n = native(pairs);
    let cfg = pgrig_engine::config::BenchConfig {
        conn: conn_args(db.conninfo()),
        clients,
        threads: 2.min(clients),
        duration,
        mode,
        max_tries: 1000,
        random_seed: Some(pgrig_engine::config::SeedOption::Value(3)),
        native: Some(pgrig_engine::workload::NativeWorkload(n.workload)),
        ..Default::default()
    };
    let r = pgrig_engine::run_bench(cfg, std::sync::Arc::new(PrintSink), &StopHandle::default())
        .unwrap_or_else(|e| panic!("run failed: {:?}", e.lines));
    pgrig_engine::document::of(&r)
}
