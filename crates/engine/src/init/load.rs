//! The `g` step (client-side generation with COPY) and the `p` step. With parallelism 1 this is
//! exactly pgbench: one transaction that truncates and then copies branches, tellers and
//! accounts, each with `(freeze on)` when the server is 14+ and the table is an ordinary one.
//! With more connections `pgbench_accounts` is loaded by several connections (see
//! [`super::parallel`]) and the primary keys are built concurrently.

use std::time::Instant;

use super::db::{Connector, InitDb};
use super::ddl;
use super::parallel;
use super::progress::Progress;
use super::rows::Table;
use super::steps::{exec, query_failed, StepCtx};
use crate::error::EngineError;
use crate::sink::Level;

/// Bytes of COPY data collected before a chunk is sent.
pub const CHUNK: usize = 128 * 1024;

pub async fn generate_client_side<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("generating data (client-side)...\n");
    exec(ctx, db, "begin").await?;
    exec(ctx, db, ddl::TRUNCATE_TABLES).await?;
    let accounts = Table::Accounts.total(ctx.cfg.scale);
    let plan = if ctx.parallelism > 1 && accounts >= 2 * ddl::NACCOUNTS {
        parallel::plan(ctx, db).await?
    } else {
        None
    };
    populate(ctx, db, Table::Branches).await?;
    populate(ctx, db, Table::Tellers).await?;
    match plan {
        None => {
            populate(ctx, db, Table::Accounts).await?;
            exec(ctx, db, "commit").await
        }
        Some(plan) => {
            // Commit the truncation first: the other connections must see the empty tables.
            exec(ctx, db, "commit").await?;
            parallel::load_accounts(ctx, connector, &plan).await
        }
    }
}

/// True when COPY may use FREEZE: server 14+ and `table` is an ordinary table.
pub async fn can_freeze<D: InitDb>(db: &mut D, table: &str) -> Result<bool, EngineError> {
    if db.server_version_num() < 140000 {
        return Ok(false);
    }
    let sql = ddl::relkind_query(table);
    let kind = db
        .query_value(&sql)
        .await
        .map_err(|e| query_failed(&e.message, &sql))?;
    Ok(kind.as_deref() == Some("r"))
}

/// pgbench's `initPopulateTable`: one COPY with all rows of `table`, with progress lines.
async fn populate<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    table: Table,
) -> Result<(), EngineError> {
    let freeze = can_freeze(db, table.name()).await?;
    let copy = ddl::copy_statement(table.name(), freeze);
    let total = table.total(ctx.cfg.scale);
    let mut progress = Progress::new(table.name(), total, ctx.cfg.quiet, ctx.tty, Instant::now());
    copy_rows(ctx, db, table, &copy, 0, total, |j| {
        progress
            .due(j)
            .then(|| progress.tick(j, Instant::now()))
            .flatten()
    })
    .await?;
    if let Some(t) = progress.finish() {
        ctx.say(&t);
    }
    Ok(())
}

/// Sends rows `from..to` (0-based) of `table` with the COPY statement `copy`. `on_row(j)` is
/// called with the 1-based number of rows sent so far and may return progress text to print.
pub async fn copy_rows<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    table: Table,
    copy: &str,
    from: i64,
    to: i64,
    mut on_row: impl FnMut(i64) -> Option<String>,
) -> Result<(), EngineError> {
    let started = db.copy_start(copy).await;
    ctx.flush_notices(db);
    if let Err(e) = started {
        return Err(EngineError::fatal(format!(
            "unexpected copy in result: {}",
            e.message.trim_end()
        )));
    }
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 256);
    for k in from..to {
        table.push_row(&mut buf, k);
        if let Some(text) = on_row(k - from + 1) {
            ctx.say(&text);
        }
        if buf.len() >= CHUNK {
            send(db, &buf).await?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        send(db, &buf).await?;
    }
    let ended = db.copy_end().await;
    ctx.flush_notices(db);
    if let Err(e) = ended {
        // libpq reports the server's error through the notice processor, then pgbench fails.
        ctx.say(&format!("{}\n", e.message.trim_end()));
        return Err(EngineError::fatal("PQendcopy failed"));
    }
    Ok(())
}

async fn send<D: InitDb>(db: &mut D, buf: &[u8]) -> Result<(), EngineError> {
    db.copy_data(buf).await.map_err(|e| {
        EngineError::fatal(e.message.trim_end().to_string()).with(Level::Error, "PQputline failed")
    })
}

/// The `p` step: pgbench's three `alter table ... add primary key`, concurrently on separate
/// connections when parallelism allows.
pub async fn primary_keys<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("creating primary keys...\n");
    let keys = ddl::primary_keys(ctx.cfg);
    if ctx.parallelism <= 1 {
        for sql in &keys {
            exec(ctx, db, sql).await?;
        }
        return Ok(());
    }
    parallel::run_concurrently(ctx, connector, db, &keys).await
}
