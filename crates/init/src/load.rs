//! The loading steps on a [`Dataset`]: `g` (client-side COPY), `G` (server-side generation) and
//! `p` (keys).
//!
//! With `--load-jobs 1` each is exactly pgbench's: one transaction that truncates and copies
//! branches, tellers and accounts (accounts with `(freeze on)` when the server is 14+ and the
//! table an ordinary one), the three keys one after the other. pgrig's default keeps the result
//! identical and spends less time:
//! * an ordinary table on a 14+ server: still one `COPY ... FREEZE` (FREEZE only works in the
//!   transaction that truncated the table, and unfrozen rows would cost a full rewrite in
//!   `vacuum` to get pgbench's frozen state back), in binary format when the columns are
//!   pgbench's (no text parsing on the server);
//! * a partitioned table: rows copied over several connections, straight into each range
//!   partition, or in key ranges through a hash-partitioned parent (pgbench does not freeze
//!   partitions either, so the visibility is the same);
//! * `G`: key ranges inserted over several connections;
//! * keys built concurrently, each connection with a `maintenance_work_mem` large enough to
//!   sort in memory, partition keys before the parent key (which then adopts them).

use std::cell::RefCell;

use crate::copy::{copy_format, copy_rows};
use crate::ctx::{exec, query_failed, StepCtx};
use crate::dataset::{CopyFormat, Dataset, RowSource};
use crate::db::{Connector, InitDb};
use crate::ddl;
use crate::parallel::{self, chunk_jobs, partition_jobs, Job};
use crate::pgbench::Pgbench;
use crate::progress::Meter;
use pgrig_engine::error::EngineError;
use pgrig_engine::sink::InitProgress;

/// How the largest table is loaded.
enum Plan {
    /// In the truncating transaction, on the main connection.
    Serial { freeze: bool },
    /// After committing the truncation, over several connections.
    Parallel(Vec<Job>),
}

pub async fn generate_client_side<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("generating data (client-side)...\n");
    exec(ctx, db, "begin").await?;
    exec(ctx, db, ddl::TRUNCATE_TABLES).await?;
    let dataset = Pgbench::new(ctx.cfg);
    let sources = dataset.sources();
    let Some((big, small)) = sources.split_last() else {
        return exec(ctx, db, "commit").await;
    };
    // pgbench 15 inserts branches and tellers row by row: not frozen, no progress lines.
    for src in small {
        let copy = ddl::copy_statement(src.table(), false, CopyFormat::Text);
        copy_rows(
            ctx,
            db,
            *src,
            &copy,
            CopyFormat::Text,
            0,
            src.rows(),
            |_| None,
        )
        .await?;
    }
    match plan(ctx, db, *big).await? {
        Plan::Serial { freeze } => {
            let format = if ctx.exact() {
                CopyFormat::Text
            } else {
                copy_format(db, big.table(), *big).await?
            };
            let copy = ddl::copy_statement(big.table(), freeze, format);
            let mut meter = Meter::rows(
                big.table(),
                big.rows(),
                ctx.cfg.quiet,
                ctx.progress,
                ctx.sink,
            );
            copy_rows(ctx, db, *big, &copy, format, 0, big.rows(), |j| {
                meter.row(j)
            })
            .await?;
            finish(ctx, &mut meter);
            exec(ctx, db, "commit").await
        }
        Plan::Parallel(jobs) => {
            // The other connections must see the truncated tables.
            exec(ctx, db, "commit").await?;
            let meter = RefCell::new((
                0,
                Meter::rows(
                    big.table(),
                    big.rows(),
                    ctx.cfg.quiet,
                    ctx.progress,
                    ctx.sink,
                ),
            ));
            let r = parallel::run_jobs(ctx, connector, &[], jobs, Some(*big), &meter).await;
            finish(ctx, &mut meter.borrow_mut().1);
            r
        }
    }
}

fn finish(ctx: &StepCtx<'_>, meter: &mut Meter) {
    if let Some(t) = meter.finish() {
        ctx.say(&t);
    }
}

async fn relkind<D: InitDb>(db: &mut D, table: &str) -> Result<Option<String>, EngineError> {
    let sql = ddl::relkind_query(table);
    db.query_value(&sql)
        .await
        .map_err(|e| query_failed(&e.message, &sql))
}

/// Chooses how to load `src` (called inside the loading transaction, after truncation).
async fn plan<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    src: &dyn RowSource,
) -> Result<Plan, EngineError> {
    let kind = relkind(db, src.table()).await?;
    let way = choose(
        kind.as_deref(),
        db.server_version_num(),
        ctx.parallelism,
        src.rows(),
    );
    Ok(match way {
        Way::Serial { freeze } => Plan::Serial { freeze },
        Way::Chunks => Plan::Parallel(chunk_jobs(src.table(), src.rows(), ctx.parallelism)),
        Way::Partitions => {
            let parts = parallel::partitions(db).await?;
            Plan::Parallel(
                partition_jobs(&parts, src)
                    .unwrap_or_else(|| chunk_jobs(src.table(), src.rows(), ctx.parallelism)),
            )
        }
    })
}

/// How a table is loaded, decided from what the server says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// One COPY, frozen when the server allows it (as pgbench does).
    Serial { freeze: bool },
    /// Ranges of the key over several connections (only where pgbench does not freeze either).
    Chunks,
    /// One connection per partition.
    Partitions,
}

/// The loading decision: an ordinary table on a server ≥ 14 is always one `COPY … FREEZE` (its
/// pages must end up frozen like pgbench's; several connections cannot freeze); small loads
/// and `parallelism` 1 are serial; otherwise ranges (ordinary table, older server) or
/// partitions (a partitioned table) load in parallel.
fn choose(relkind: Option<&str>, server_version: i32, parallelism: usize, rows: i64) -> Way {
    let ordinary = relkind == Some("r");
    let freeze = ordinary && server_version >= 140000;
    if parallelism <= 1 || rows < 2 * ddl::NACCOUNTS || freeze {
        return Way::Serial { freeze };
    }
    match relkind {
        Some("r") => Way::Chunks,
        Some("p") => Way::Partitions,
        _ => Way::Serial { freeze: false },
    }
}

/// The `G` step. pgbench's: one transaction truncating and inserting all rows with
/// `generate_series`. Faster: branches and tellers like that, then accounts in key ranges (per
/// range partition, or through the table) over several connections.
pub async fn generate_server_side<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("generating data (server-side)...\n");
    exec(ctx, db, "begin").await?;
    exec(ctx, db, ddl::TRUNCATE_TABLES).await?;
    let [branches, tellers, accounts] = ddl::server_side_inserts(ctx.cfg.scale);
    exec(ctx, db, &branches).await?;
    exec(ctx, db, &tellers).await?;
    let dataset = Pgbench::new(ctx.cfg);
    let sources = dataset.sources();
    let Some(big) = sources.last() else {
        return exec(ctx, db, "commit").await;
    };
    let total = big.rows();
    if ctx.parallelism <= 1 || total < 2 * ddl::NACCOUNTS {
        let mut meter = Meter::spinner("server-side generate", ctx.progress, ctx.sink);
        let r = exec(ctx, db, &accounts).await;
        meter.finish();
        r?;
        return exec(ctx, db, "commit").await;
    }
    let parts = match relkind(db, big.table()).await?.as_deref() {
        Some("p") => parallel::partitions(db).await?,
        _ => Vec::new(),
    };
    exec(ctx, db, "commit").await?;
    // Several chunks per connection, so the bar moves and a slow chunk does not hold up the end.
    let copies = partition_jobs(&parts, *big)
        .unwrap_or_else(|| chunk_jobs(big.table(), total, ctx.parallelism * 4));
    let jobs = copies
        .into_iter()
        .filter_map(|j| match j {
            Job::Copy { target, from, to } => Some(Job::Sql {
                sql: ddl::server_side_accounts_range(&target, from, to),
                rows: to - from,
            }),
            Job::Sql { .. } => None,
        })
        .collect();
    let meter = RefCell::new((0, server_side_meter(ctx, big.table(), total)));
    let r = parallel::run_jobs(ctx, connector, &[], jobs, None, &meter).await;
    meter.borrow_mut().1.finish();
    r
}

/// pgbench prints no progress for `G`: a bar only on a terminal.
fn server_side_meter(ctx: &StepCtx<'_>, table: &str, total: i64) -> Meter {
    match ctx.progress {
        InitProgress::Displays => Meter::rows(table, total, false, ctx.progress, ctx.sink),
        InitProgress::Lines { .. } => Meter::Off,
    }
}

/// `maintenance_work_mem` (kB) that lets a key over `rows` rows sort in memory, capped at 1 GB.
pub fn sort_memory_kb(rows: i64) -> i64 {
    (rows.saturating_mul(80) / 1024).clamp(64 * 1024, 1024 * 1024)
}

/// The `p` step: pgbench's `alter table ... add primary key` statements; faster: concurrently
/// on separate connections with enough sort memory, partitions' keys first.
pub async fn primary_keys<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("creating primary keys...\n");
    let dataset = Pgbench::new(ctx.cfg);
    let keys = dataset.key_statements();
    let mut meter = Meter::spinner("primary keys", ctx.progress, ctx.sink);
    let r = primary_keys_on(ctx, connector, db, &dataset, &keys).await;
    meter.finish();
    r
}

async fn primary_keys_on<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
    dataset: &Pgbench<'_>,
    keys: &[String],
) -> Result<(), EngineError> {
    if ctx.exact() {
        for sql in keys {
            exec(ctx, db, sql).await?;
        }
        return Ok(());
    }
    let sources = dataset.sources();
    let big_rows = sources.last().map(|s| s.rows()).unwrap_or(0);
    let Some((big_key, small_keys)) = keys.split_last() else {
        return Ok(());
    };
    let parts = match relkind(db, "pgbench_accounts").await?.as_deref() {
        Some("p") => parallel::partitions(db).await?,
        _ => Vec::new(),
    };
    if parts.is_empty() {
        let setup = [format!(
            "set maintenance_work_mem = '{}kB'",
            sort_memory_kb(big_rows).max(current_sort_memory(db).await?)
        )];
        return parallel::run_concurrently(ctx, connector, db, &setup, keys).await;
    }
    // Each leaf partition gets its own key (same name, same index tablespace) concurrently;
    // the parent's key then adopts them instead of building them one by one.
    let per_part = big_rows / parts.len() as i64 + 1;
    let setup = [format!(
        "set maintenance_work_mem = '{}kB'",
        sort_memory_kb(per_part).max(current_sort_memory(db).await?)
    )];
    let suffix = big_key
        .strip_prefix("alter table pgbench_accounts ")
        .unwrap_or("add primary key (aid)");
    let mut jobs: Vec<Job> = small_keys
        .iter()
        .map(|sql| Job::Sql {
            sql: sql.clone(),
            rows: 0,
        })
        .collect();
    jobs.extend(parts.iter().filter(|p| p.kind == "r").map(|p| Job::Sql {
        sql: format!("alter table {} {suffix}", ddl::quote_ident(&p.name)),
        rows: 0,
    }));
    let meter = RefCell::new((0, Meter::Off));
    parallel::run_jobs(ctx, connector, &setup, jobs, None, &meter).await?;
    exec(ctx, db, big_key).await
}

/// The session's `maintenance_work_mem` in kB (so pgrig never lowers it).
async fn current_sort_memory<D: InitDb>(db: &mut D) -> Result<i64, EngineError> {
    let sql = "select setting from pg_catalog.pg_settings where name = 'maintenance_work_mem'";
    let v = db
        .query_value(sql)
        .await
        .map_err(|e| query_failed(&e.message, sql))?;
    Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
}

/// The `v` step: pgbench's four `vacuum analyze`; faster, for a partitioned accounts table,
/// first a plain `vacuum` of each partition concurrently (pgbench's statements then find the
/// pages already all-visible).
pub async fn vacuum<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    ctx.say("vacuuming...\n");
    let mut meter = Meter::spinner("vacuum", ctx.progress, ctx.sink);
    let r = vacuum_on(ctx, connector, db).await;
    meter.finish();
    r
}

async fn vacuum_on<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
) -> Result<(), EngineError> {
    if !ctx.exact() && relkind(db, "pgbench_accounts").await?.as_deref() == Some("p") {
        if ctx.cfg.unlogged {
            exec(ctx, db, FLUSH_ASYNC_COMMITS).await?;
        }
        let parts = parallel::partitions(db).await?;
        let jobs = parts
            .iter()
            .filter(|p| p.kind == "r")
            .map(|p| Job::Sql {
                sql: format!("vacuum {}", ddl::quote_ident(&p.name)),
                rows: 0,
            })
            .collect::<Vec<_>>();
        if jobs.len() > 1 {
            let meter = RefCell::new((0, Meter::Off));
            parallel::run_jobs(ctx, connector, &[], jobs, None, &meter).await?;
        }
    }
    for sql in ddl::VACUUM {
        exec(ctx, db, sql).await?;
    }
    Ok(())
}

/// A statement that commits synchronously (it writes the catalog), flushing the WAL past every
/// earlier commit. Loading unlogged partitions over several connections commits those
/// transactions asynchronously (they write no WAL), and until the WAL is flushed past them no
/// hint bit can be set for any transaction sharing their commit-log page group, so the `v`
/// step would leave the logged branches' and tellers' pages not all-visible, unlike pgbench's
/// one-connection load. Statistics are recomputed by the `vacuum analyze` that follows.
pub const FLUSH_ASYNC_COMMITS: &str = "analyze pgbench_branches";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_tables_freeze_on_14_and_load_in_parallel_only_where_nothing_freezes() {
        let big = 10 * ddl::NACCOUNTS;
        assert_eq!(
            choose(Some("r"), 150018, 4, big),
            Way::Serial { freeze: true }
        );
        assert_eq!(
            choose(Some("r"), 140000, 1, big),
            Way::Serial { freeze: true }
        );
        assert_eq!(choose(Some("r"), 130012, 4, big), Way::Chunks);
        assert_eq!(
            choose(Some("r"), 130012, 1, big),
            Way::Serial { freeze: false }
        );
        assert_eq!(
            choose(Some("r"), 130012, 4, ddl::NACCOUNTS),
            Way::Serial { freeze: false },
            "one scale's rows are not worth a second connection"
        );
        assert_eq!(choose(Some("p"), 150018, 4, big), Way::Partitions);
        assert_eq!(
            choose(Some("p"), 150018, 1, big),
            Way::Serial { freeze: false }
        );
        assert_eq!(choose(None, 150018, 4, big), Way::Serial { freeze: false });
    }

    #[test]
    fn sort_memory_grows_with_rows_within_limits() {
        assert_eq!(sort_memory_kb(1), 64 * 1024);
        assert_eq!(sort_memory_kb(10_000_000), 781_250);
        assert_eq!(sort_memory_kb(i64::MAX), 1024 * 1024);
    }
}
