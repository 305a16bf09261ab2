//! The init steps `d t g G v p f` on one connection, with pgbench's stderr messages and error
//! texts, and the step loop that times them for the final `done in ...` line.

use std::time::Instant;

use super::db::{Connector, InitDb};
use super::ddl;
use super::load;
use crate::config::InitConfig;
use crate::error::EngineError;
use crate::sink::{Level, Sink};

/// Everything a step needs besides the connection.
pub struct StepCtx<'a> {
    pub cfg: &'a InitConfig,
    pub sink: &'a dyn Sink,
    /// stderr is a terminal (progress lines end in `\r`)
    pub tty: bool,
    /// connections for loading accounts and building keys (1 = exactly pgbench's way)
    pub parallelism: usize,
}

impl StepCtx<'_> {
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

/// Name of a step in the `done in` line, `None` for characters that are no step (spaces).
pub fn op_name(step: char) -> Option<&'static str> {
    Some(match step {
        'd' => "drop tables",
        't' => "create tables",
        'g' => "client-side generate",
        'G' => "server-side generate",
        'v' => "vacuum",
        'p' => "primary keys",
        'f' => "foreign keys",
        _ => return None,
    })
}

/// Runs all steps in order; returns the final `done in ...` text (without newline).
pub async fn run_steps<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<String, EngineError> {
    let mut total = 0.0;
    let mut stats: Vec<String> = Vec::new();
    for step in ctx.cfg.steps.chars() {
        let Some(op) = op_name(step) else {
            if step == ' ' {
                continue;
            }
            return Err(EngineError::fatal(format!(
                "unrecognized initialization step \"{step}\""
            )));
        };
        let start = Instant::now();
        run_step(ctx, connector, db, step).await?;
        let secs = start.elapsed().as_secs_f64();
        total += secs;
        stats.push(format!("{op} {secs:.2} s"));
    }
    Ok(format!("done in {total:.2} s ({}).", stats.join(", ")))
}

async fn run_step<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
    step: char,
) -> Result<(), EngineError> {
    match step {
        'd' => {
            ctx.say("dropping old tables...\n");
            exec(ctx, db, ddl::DROP_TABLES).await
        }
        't' => create_tables(ctx, db).await,
        'g' => load::generate_client_side(ctx, connector, db).await,
        'G' => generate_server_side(ctx, db).await,
        'v' => {
            ctx.say("vacuuming...\n");
            for sql in ddl::VACUUM {
                exec(ctx, db, sql).await?;
            }
            Ok(())
        }
        'p' => load::primary_keys(ctx, connector, db).await,
        'f' => {
            ctx.say("creating foreign keys...\n");
            for sql in ddl::FOREIGN_KEYS {
                exec(ctx, db, sql).await?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

async fn create_tables<D: InitDb>(ctx: &StepCtx<'_>, db: &mut D) -> Result<(), EngineError> {
    ctx.say("creating tables...\n");
    for sql in ddl::create_tables(ctx.cfg) {
        exec(ctx, db, &sql).await?;
    }
    let parts = ddl::create_partitions(ctx.cfg);
    if !parts.is_empty() {
        ctx.say(&format!("creating {} partitions...\n", ctx.cfg.partitions));
        for sql in parts {
            exec(ctx, db, &sql).await?;
        }
    }
    Ok(())
}

async fn generate_server_side<D: InitDb>(ctx: &StepCtx<'_>, db: &mut D) -> Result<(), EngineError> {
    ctx.say("generating data (server-side)...\n");
    exec(ctx, db, "begin").await?;
    exec(ctx, db, ddl::TRUNCATE_TABLES).await?;
    for sql in ddl::server_side_inserts(ctx.cfg.scale) {
        exec(ctx, db, &sql).await?;
    }
    exec(ctx, db, "commit").await
}
