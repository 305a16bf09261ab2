//! Loading any dataset described as a [`LoadPlan`] (sysbench's, YCSB's and TPC-C's tables):
//! drop and create statements in order, then every table's rows through binary (or text) COPY
//! in contiguous row ranges over several connections, with a progress display per table, then
//! the keys and indexes built concurrently (enough `maintenance_work_mem` to sort in memory),
//! then the closing statements (ANALYZE, VACUUM) in order. Ctrl-C cancels what runs on the
//! server and ends with an error.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use pgrig_engine::config::InitConfig;
use pgrig_engine::error::EngineError;
use pgrig_engine::sink::{Level, Sink};
use pgrig_engine::stop::StopHandle;
use pgrig_wire::ConnArgs;

use crate::ctx::{exec, StepCtx};
use crate::dataset::RowSource;
use crate::parallel::{chunk_jobs, run_jobs, Job};
use crate::progress::Meter;

/// A dataset's statements and rows.
#[derive(Default)]
pub struct LoadPlan {
    /// Run first, in order (`DROP TABLE IF EXISTS`, or nothing when existing tables must be an
    /// error).
    pub drop: Vec<String>,
    /// `CREATE TABLE ...`, in order.
    pub create: Vec<String>,
    /// The tables' rows, loaded in this order.
    pub sources: Vec<Box<dyn RowSource + Send>>,
    /// Keys and indexes, built concurrently after the load.
    pub keys: Vec<String>,
    /// Run last, in order (`ANALYZE`, `VACUUM`).
    pub after: Vec<String>,
}

/// How a load went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadReport {
    pub rows: i64,
    pub jobs: usize,
    pub create_s: f64,
    pub copy_s: f64,
    pub keys_s: f64,
    pub after_s: f64,
}

impl LoadReport {
    pub fn total_s(&self) -> f64 {
        self.create_s + self.copy_s + self.keys_s + self.after_s
    }

    /// `done in 3.21 s (create 0.02 s, copy 2.50 s, keys 0.60 s, after 0.09 s), 1000000 rows`.
    pub fn summary(&self) -> String {
        format!(
            "done in {:.2} s (create {:.2} s, copy {:.2} s, keys {:.2} s, after {:.2} s), {} rows, {} connections",
            self.total_s(),
            self.create_s,
            self.copy_s,
            self.keys_s,
            self.after_s,
            self.rows,
            self.jobs
        )
    }
}

/// Loads `plan` with `jobs` connections (0 = from the client's and the server's cores).
pub fn load(
    conn: &ConnArgs,
    plan: &LoadPlan,
    jobs: usize,
    sink: &dyn Sink,
    stop: &StopHandle,
) -> Result<LoadReport, EngineError> {
    load_replacing(conn, &[], plan, jobs, sink, stop)
}

/// [`load`] after running `cleanup` (e.g. the workload's `DROP TABLE IF EXISTS`), so existing
/// tables are replaced.
pub fn load_replacing(
    conn: &ConnArgs,
    cleanup: &[String],
    plan: &LoadPlan,
    jobs: usize,
    sink: &dyn Sink,
    stop: &StopHandle,
) -> Result<LoadReport, EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::fatal(format!("could not start a runtime: {e}")))?;
    let cfg = InitConfig {
        conn: conn.clone(),
        ..InitConfig::default()
    };
    rt.block_on(async {
        let mut connector =
            crate::wire_db::WireConnector::new(conn).map_err(crate::connection_failed)?;
        let mut db = connector
            .connect_first(sink)
            .await
            .map_err(crate::connection_failed)?;
        let parallelism = match jobs {
            0 => crate::auto_jobs(crate::client_cores(), crate::server_cores(&mut db).await),
            n => n,
        };
        let ctx = StepCtx {
            cfg: &cfg,
            sink,
            progress: sink.init_progress(),
            parallelism: parallelism.max(2),
        };
        let work = run_plan(&ctx, &connector, &mut db, cleanup, plan);
        tokio::pin!(work);
        tokio::select! {
            r = &mut work => r,
            _ = stop.requested_async() => {
                connector.cancels.cancel_all().await;
                let outcome = tokio::select! {
                    r = &mut work => r.err(),
                    _ = tokio::time::sleep(Duration::from_secs(10)) => None,
                };
                let mut e = outcome.unwrap_or_else(|| EngineError { lines: Vec::new(), exit_code: 1 });
                e.exit_code = 1;
                e.lines.push((Level::Error, "loading canceled by Ctrl-C; the running statements were canceled on the server".into()));
                Err(e)
            }
        }
    })
}

async fn run_plan(
    ctx: &StepCtx<'_>,
    connector: &crate::wire_db::WireConnector,
    db: &mut crate::wire_db::WireDb,
    cleanup: &[String],
    plan: &LoadPlan,
) -> Result<LoadReport, EngineError> {
    let mut report = LoadReport {
        jobs: ctx.parallelism,
        ..LoadReport::default()
    };
    let t0 = Instant::now();
    for sql in cleanup.iter().chain(&plan.drop).chain(&plan.create) {
        exec(ctx, db, sql).await?;
    }
    report.create_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    for src in &plan.sources {
        let src: &dyn RowSource = src.as_ref();
        let total = src.rows();
        report.rows += total;
        // Several ranges per connection, so a slow range does not hold up the end.
        let jobs = chunk_jobs(src.table(), total, ctx.parallelism * 4);
        let meter = Meter::rows(src.table(), total, true, ctx.progress, ctx.sink);
        let meter = RefCell::new((0, meter));
        let r = run_jobs(ctx, connector, &[], jobs, Some(src), &meter).await;
        meter.borrow_mut().1.finish();
        r?;
    }
    report.copy_s = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    if !plan.keys.is_empty() {
        let rows = plan.sources.iter().map(|s| s.rows()).max().unwrap_or(0);
        let setup = [format!(
            "set maintenance_work_mem = '{}kB'",
            crate::load::sort_memory_kb(rows)
        )];
        let jobs = plan
            .keys
            .iter()
            .map(|sql| Job::Sql {
                sql: sql.clone(),
                rows: 0,
            })
            .collect();
        let meter = RefCell::new((0, Meter::spinner("keys", ctx.progress, ctx.sink)));
        let r = run_jobs(ctx, connector, &setup, jobs, None, &meter).await;
        meter.borrow_mut().1.finish();
        r?;
    }
    report.keys_s = t2.elapsed().as_secs_f64();
    let t3 = Instant::now();
    for sql in &plan.after {
        exec(ctx, db, sql).await?;
    }
    report.after_s = t3.elapsed().as_secs_f64();
    Ok(report)
}
