//! Datasets and their loaders (`pgrig init`, `pgbench -i`). So far pgbench's: runs the steps of
//! `InitConfig::steps` (`d t g G v p f`) with pgbench's SQL, DDL, rows and stderr messages,
//! ending with `done in ... (...)`.
//!
//! * [`dataset`]: the loading shape (dataset → tables → row sources → keys) other datasets can
//!   reuse; [`pgbench`]: pgbench's tables in that shape; [`ddl`]: the exact SQL texts;
//!   [`rows`]: COPY rows (text and binary).
//! * [`steps`]: the step loop; [`load`]: `g`, `G`, `v`, `p` (pgbench's way with
//!   `--load-jobs 1`, faster by default with identical results); [`parallel`]: the job queue
//!   over several connections; [`copy`]: COPY's format and chunks; [`ctx`]: what every step
//!   works with (and pgbench's `executeStatement`); [`progress`]: pgbench's progress lines, or
//!   the sink's displays.
//! * [`generic`]: any other dataset ([`generic::LoadPlan`]: statements, row sources, keys)
//!   loaded through the same parallel COPY and concurrent key builds.
//! * [`db`]: the small connection trait the steps use; `wire_db` implements it on `pgrig_wire`
//!   and keeps the cancel keys Ctrl-C uses.

mod copy;
mod ctx;
pub mod dataset;
mod db;
mod ddl;
pub mod generic;
mod load;
mod parallel;
mod pgbench;
mod progress;
mod rows;
mod steps;
mod wire_db;

use std::time::Duration;

use pgrig_engine::config::InitConfig;
use pgrig_engine::error::EngineError;
use pgrig_engine::sink::{InitProgress, Level, Sink};
use pgrig_engine::stop::StopHandle;

pub use ddl::SCALE_32BIT_THRESHOLD;

/// pgrig-only knobs of initialisation.
#[derive(Clone, Default)]
pub struct InitOptions {
    /// Connections used to load and build keys (`--load-jobs`): 1 = pgbench's statements in pgbench's order,
    /// 0 = chosen from the client's and the server's cores (the default).
    pub load_parallelism: u32,
    /// Ctrl-C: cancels what the server is doing on every connection and ends with an error.
    pub stop: StopHandle,
}

/// `pgbench -i`: pgbench's steps, messages and results, loaded the faster default way.
pub fn run_init(cfg: &InitConfig, sink: &dyn Sink) -> Result<(), EngineError> {
    run_init_with(cfg, sink, &InitOptions::default())
}

/// The default load parallelism: the client's cores, or the server's when fewer (`None` = the
/// server runs on this host), at least 2 (a second connection overlaps the other's waits), at
/// most 16.
pub fn auto_jobs(client_cores: usize, server_cores: Option<usize>) -> usize {
    client_cores
        .min(server_cores.unwrap_or(client_cores))
        .clamp(2, 16)
}

/// Initialisation with pgrig's extra options.
pub fn run_init_with(
    cfg: &InitConfig,
    sink: &dyn Sink,
    opts: &InitOptions,
) -> Result<(), EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::fatal(format!("could not start a runtime: {e}")))?;
    rt.block_on(async {
        let mut connector = wire_db::WireConnector::new(&cfg.conn).map_err(connection_failed)?;
        let mut db = connector
            .connect_first(sink)
            .await
            .map_err(connection_failed)?;
        let parallelism = match opts.load_parallelism {
            0 => auto_jobs(client_cores(), server_cores(&mut db).await),
            n => n as usize,
        };
        let progress = sink.init_progress();
        let ctx = ctx::StepCtx {
            cfg,
            sink,
            progress,
            parallelism,
        };
        let work = steps::run_steps(&ctx, &connector, &mut db);
        tokio::pin!(work);
        let report = tokio::select! {
            r = &mut work => r?,
            _ = opts.stop.requested_async() => {
                // Cancel what the server is doing on every connection, then let the failing
                // statements come back (briefly).
                connector.cancels.cancel_all().await;
                let outcome = tokio::select! {
                    r = &mut work => r.err(),
                    _ = tokio::time::sleep(Duration::from_secs(10)) => None,
                };
                return Err(canceled(outcome));
            }
        };
        ctx.say(&format!("{}\n", report.done));
        if progress == InitProgress::Displays {
            ctx.say(&report.summary());
        }
        Ok(())
    })
}

fn client_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The server's cores: `None` when it runs on this host, else its `max_parallel_workers`.
async fn server_cores(db: &mut wire_db::WireDb) -> Option<usize> {
    use db::InitDb;
    if db.is_local() {
        return None;
    }
    let v = db
        .query_value("select current_setting('max_parallel_workers')")
        .await
        .ok()
        .flatten()?;
    v.parse::<usize>().ok().map(|n| n.max(1))
}

/// The error after Ctrl-C: what the cancelled statement reported (if it came back), then why.
fn canceled(failed: Option<EngineError>) -> EngineError {
    let mut e = failed.unwrap_or_else(|| EngineError {
        lines: Vec::new(),
        exit_code: 1,
    });
    e.exit_code = 1;
    e.lines.push((
        Level::Error,
        "initialization canceled by Ctrl-C; the running statements were canceled on the server"
            .into(),
    ));
    e.lines.push((
        Level::Hint,
        "The tables may be incomplete: run the initialization again (its \"d\" step drops them)."
            .into(),
    ));
    e
}

fn connection_failed(e: db::DbFailure) -> EngineError {
    EngineError::fatal(e.message.trim_end().to_string()).with(
        Level::Error,
        "could not create connection for initialization",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_jobs_follows_the_smaller_side() {
        assert_eq!(auto_jobs(2, None), 2);
        assert_eq!(auto_jobs(1, None), 2);
        assert_eq!(auto_jobs(32, Some(8)), 8);
        assert_eq!(auto_jobs(4, Some(64)), 4);
        assert_eq!(auto_jobs(64, None), 16);
    }
}
