//! `pgbench -i`: initialisation mode. Runs the steps of `InitConfig::steps` (`d t g G v p f`)
//! with pgbench's SQL, DDL, rows and stderr messages, ending with `done in ... (...)`.
//!
//! * [`ddl`]: the exact SQL texts; [`rows`]: COPY rows; [`progress`]: the `g` progress lines.
//! * [`steps`]: the step loop; [`load`]: COPY loading and primary keys; [`parallel`]: the
//!   opt-in faster loading over several connections ([`InitOptions::load_parallelism`]).
//! * [`db`]: the small connection trait the steps use; `wire_db` implements it on `pgrig_wire`.

mod db;
mod ddl;
mod load;
mod parallel;
mod progress;
mod rows;
mod steps;
mod wire_db;

#[cfg(test)]
mod fake_tests;

use std::io::IsTerminal;

use crate::config::InitConfig;
use crate::error::EngineError;
use crate::sink::{Level, Sink};

pub use ddl::SCALE_32BIT_THRESHOLD;

/// pgrig-only knobs of initialisation (defaults reproduce pgbench exactly).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitOptions {
    /// Connections used to load `pgbench_accounts` and build primary keys (1 = pgbench's way).
    pub load_parallelism: u32,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            load_parallelism: 1,
        }
    }
}

/// `pgbench -i` with pgbench's behaviour.
pub fn run_init(cfg: &InitConfig, sink: &dyn Sink) -> Result<(), EngineError> {
    run_init_with(cfg, sink, &InitOptions::default())
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
        let connector = wire_db::WireConnector::new(&cfg.conn).map_err(connection_failed)?;
        let mut db = db::Connector::connect(&connector)
            .await
            .map_err(connection_failed)?;
        let ctx = steps::StepCtx {
            cfg,
            sink,
            tty: std::io::stderr().is_terminal(),
            parallelism: opts.load_parallelism.max(1) as usize,
        };
        let done = steps::run_steps(&ctx, &connector, &mut db).await?;
        ctx.say(&format!("{done}\n"));
        Ok(())
    })
}

fn connection_failed(e: db::DbFailure) -> EngineError {
    EngineError::fatal(e.message.trim_end().to_string()).with(
        Level::Error,
        "could not create connection for initialization",
    )
}
