//! What every step and loader works with: the step context (configuration, sink, progress
//! style, parallelism) and pgbench's `executeStatement` with its `query failed` error.

use crate::db::InitDb;
use pgrig_engine::config::InitConfig;
use pgrig_engine::error::EngineError;
use pgrig_engine::sink::{InitProgress, Level, Sink};

/// Everything a step needs besides the connection.
pub struct StepCtx<'a> {
    pub cfg: &'a InitConfig,
    pub sink: &'a dyn Sink,
    /// how progress shows (pgbench's lines, or the sink's displays)
    pub progress: InitProgress,
    /// connections for loading accounts and building keys (1 = pgbench's statements in pgbench's order)
    pub parallelism: usize,
}

impl StepCtx<'_> {
    /// Exactly pgbench's way (`--load-jobs 1`): same statements, same formats, one connection.
    pub fn exact(&self) -> bool {
        self.parallelism <= 1
    }

    pub fn say(&self, text: &str) {
        self.sink.message(Level::Raw, text);
    }

    /// Prints notices the way libpq's default notice processor does.
    pub fn flush_notices<D: InitDb>(&self, db: &mut D) {
        for n in db.take_notices() {
            self.say(&format!("{n}\n"));
        }
    }
}

/// pgbench's `query failed: ...` + `Query was: ...` error (exit 1).
pub fn query_failed(message: &str, sql: &str) -> EngineError {
    EngineError::fatal(format!("query failed: {}", message.trim_end()))
        .with(Level::Detail, format!("Query was: {sql}"))
}

/// pgbench's `executeStatement`.
pub async fn exec<D: InitDb>(ctx: &StepCtx<'_>, db: &mut D, sql: &str) -> Result<(), EngineError> {
    let r = db.execute(sql).await;
    ctx.flush_notices(db);
    r.map_err(|e| query_failed(&e.message, sql))
}
