//! The init steps `d t g G v p f` on one connection, with pgbench's stderr messages and error
//! texts, and the step loop that times them for the final `done in ...` line.

use std::time::Instant;

use crate::ctx::{exec, StepCtx};
use crate::dataset::Dataset;
use crate::db::{Connector, InitDb};
use crate::ddl;
use crate::load;
use crate::pgbench::Pgbench;
use crate::progress::Meter;
use pgrig_engine::error::EngineError;

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

/// What the steps did: the final `done in ...` text (without newline) and each step's time.
#[derive(Debug, Default)]
pub struct StepsReport {
    pub done: String,
    pub timings: Vec<(&'static str, f64)>,
}

impl StepsReport {
    /// The per-step summary printed on a terminal after the `done in` line.
    pub fn summary(&self) -> String {
        let total: f64 = self.timings.iter().map(|t| t.1).sum();
        let mut out = String::new();
        for (op, secs) in &self.timings {
            let share = if total > 0.0 {
                100.0 * secs / total
            } else {
                0.0
            };
            let width = (share / 4.0).round() as usize;
            out.push_str(&format!(
                "  {op:<22}{secs:>9.2} s {share:>5.1}%  {}\n",
                "#".repeat(width)
            ));
        }
        out.push_str(&format!("  {:<22}{total:>9.2} s\n", "total"));
        out
    }
}

/// Runs all steps in order; returns the final `done in ...` text and the step times.
pub async fn run_steps<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<StepsReport, EngineError> {
    let mut total = 0.0;
    let mut stats: Vec<String> = Vec::new();
    let mut timings = Vec::new();
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
        timings.push((op, secs));
    }
    Ok(StepsReport {
        done: format!("done in {total:.2} s ({}).", stats.join(", ")),
        timings,
    })
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
        'G' => load::generate_server_side(ctx, connector, db).await,
        'v' => load::vacuum(ctx, connector, db).await,
        'p' => load::primary_keys(ctx, connector, db).await,
        'f' => {
            ctx.say("creating foreign keys...\n");
            let mut meter = Meter::spinner("foreign keys", ctx.progress, ctx.sink);
            for sql in Pgbench::new(ctx.cfg).foreign_key_statements() {
                exec(ctx, db, &sql).await?;
            }
            meter.finish();
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
