//! Faster loading (pgrig-only, opt-in): `pgbench_accounts` over several connections, and the
//! primary keys built concurrently. Rows are the same as pgbench's; only their physical order
//! and visibility flags can differ.
//!
//! * range-partitioned accounts (leaf partitions, no foreign keys pointing at them): one job per
//!   partition, each `begin; truncate PART; copy PART ... with (freeze on); commit`, so FREEZE
//!   is kept (truncating inside the loading transaction is what FREEZE needs).
//! * otherwise (ordinary or hash-partitioned table): aid ranges copied through the table itself
//!   without FREEZE, because only one transaction can own the truncation.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use super::db::{Connector, InitDb};
use super::ddl;
use super::load::{can_freeze, copy_rows};
use super::progress::Progress;
use super::rows::Table;
use super::steps::{exec, query_failed, StepCtx};
use crate::error::EngineError;

/// One COPY of rows `from..to` (0-based) into `target`.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub target: String,
    pub from: i64,
    pub to: i64,
    /// truncate `target` in the job's transaction and COPY with FREEZE
    pub freeze: bool,
}

/// How accounts will be loaded: the jobs, handed out to the connections in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub jobs: Vec<Job>,
}

/// Splits `0..total` into `n` contiguous ranges of nearly equal size.
pub fn split_ranges(total: i64, n: usize) -> Vec<(i64, i64)> {
    let n = (n.max(1) as i64).min(total.max(1));
    (0..n)
        .map(|i| (total * i / n, total * (i + 1) / n))
        .filter(|(a, b)| a < b)
        .collect()
}

/// Parses `FOR VALUES FROM (lo) TO (hi)` of an integer range partition into a row range
/// (0-based, clipped to `0..total`). `None` for anything else.
pub fn range_bound_rows(bound: &str, total: i64) -> Option<(i64, i64)> {
    let rest = bound.strip_prefix("FOR VALUES FROM (")?;
    let (lo, hi) = rest.split_once(") TO (")?;
    let hi = hi.strip_suffix(')')?;
    let value = |v: &str, open: i64| -> Option<i64> {
        match v.trim().trim_matches('\'') {
            "MINVALUE" | "MAXVALUE" => Some(open),
            n => n.parse::<i64>().ok(),
        }
    };
    // aid = k + 1, so aid range [lo, hi) holds rows [lo - 1, hi - 1).
    let from = value(lo, 1)?.saturating_sub(1).clamp(0, total);
    let to = value(hi, total + 1)?.saturating_sub(1).clamp(0, total);
    Some((from, to))
}

/// Partition jobs when every row of `0..total` falls into exactly one listed partition.
pub fn partition_jobs(listing: &str, total: i64, freeze: bool) -> Option<Vec<Job>> {
    let mut jobs = Vec::new();
    for line in listing.lines().filter(|l| !l.is_empty()) {
        let mut f = line.splitn(3, '|');
        let (name, kind, bound) = (f.next()?, f.next()?, f.next()?);
        if kind != "r" {
            return None;
        }
        let (from, to) = range_bound_rows(bound, total)?;
        if from < to {
            jobs.push(Job {
                target: name.to_string(),
                from,
                to,
                freeze,
            });
        }
    }
    jobs.sort_by_key(|j| j.from);
    let mut next = 0;
    for j in &jobs {
        if j.from != next {
            return None;
        }
        next = j.to;
    }
    (next == total).then_some(jobs)
}

async fn value<D: InitDb>(db: &mut D, sql: &str) -> Result<Option<String>, EngineError> {
    db.query_value(sql)
        .await
        .map_err(|e| query_failed(&e.message, sql))
}

/// Decides how to load accounts (called inside the loading transaction, after truncation).
pub async fn plan<D: InitDb>(ctx: &StepCtx<'_>, db: &mut D) -> Result<Option<Plan>, EngineError> {
    let total = Table::Accounts.total(ctx.cfg.scale);
    let kind = value(db, &ddl::relkind_query("pgbench_accounts")).await?;
    let n = ctx.parallelism;
    let chunks = |target: &str| Plan {
        jobs: split_ranges(total, n)
            .into_iter()
            .map(|(from, to)| Job {
                target: target.to_string(),
                from,
                to,
                freeze: false,
            })
            .collect(),
    };
    if kind.as_deref() != Some("p") {
        return Ok(Some(chunks("pgbench_accounts")));
    }
    let strat = value(
        db,
        "select partstrat from pg_catalog.pg_partitioned_table where partrelid = 'pgbench_accounts'::pg_catalog.regclass",
    )
    .await?;
    let referenced = value(
        db,
        "select count(*) from pg_catalog.pg_constraint c join pg_catalog.pg_inherits i on i.inhrelid = c.confrelid \
         where c.contype = 'f' and i.inhparent = 'pgbench_accounts'::pg_catalog.regclass",
    )
    .await?;
    if strat.as_deref() == Some("r") && referenced.as_deref() == Some("0") {
        let listing = value(
            db,
            "select string_agg(c.relname || '|' || c.relkind || '|' || pg_catalog.pg_get_expr(c.relpartbound, c.oid), E'\\n') \
             from pg_catalog.pg_inherits i join pg_catalog.pg_class c on c.oid = i.inhrelid \
             where i.inhparent = 'pgbench_accounts'::pg_catalog.regclass",
        )
        .await?
        .unwrap_or_default();
        let freeze = db.server_version_num() >= 140000;
        if let Some(jobs) = partition_jobs(&listing, total, freeze) {
            return Ok(Some(Plan { jobs }));
        }
    }
    Ok(Some(chunks("pgbench_accounts")))
}

/// Runs the plan's jobs over up to `parallelism` new connections, with one shared progress.
pub async fn load_accounts<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    plan: &Plan,
) -> Result<(), EngineError> {
    let total = Table::Accounts.total(ctx.cfg.scale);
    let queue = RefCell::new(plan.jobs.iter().collect::<VecDeque<_>>());
    let progress = RefCell::new((
        0i64,
        Progress::new(
            Table::Accounts.name(),
            total,
            ctx.cfg.quiet,
            ctx.tty,
            Instant::now(),
        ),
    ));
    let workers = ctx.parallelism.min(plan.jobs.len()).max(1);
    let mut futs: Vec<Pin<Box<dyn Future<Output = Result<(), EngineError>> + '_>>> = Vec::new();
    for _ in 0..workers {
        let (queue, progress) = (&queue, &progress);
        futs.push(Box::pin(async move {
            let mut db = connect(connector).await?;
            loop {
                let job = queue.borrow_mut().pop_front();
                let Some(job) = job else { return Ok(()) };
                run_job(ctx, &mut db, job, progress).await?;
            }
        }));
    }
    try_join_all(futs).await?;
    if let Some(t) = progress.borrow().1.finish() {
        ctx.say(&t);
    }
    Ok(())
}

async fn connect<C: Connector>(connector: &C) -> Result<C::Db, EngineError> {
    connector.connect().await.map_err(|e| {
        EngineError::fatal(e.message.trim_end().to_string()).with(
            crate::sink::Level::Error,
            "could not create connection for initialization",
        )
    })
}

async fn run_job<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    job: &Job,
    progress: &RefCell<(i64, Progress)>,
) -> Result<(), EngineError> {
    let mut freeze = false;
    if job.freeze {
        exec(ctx, db, "begin").await?;
        exec(ctx, db, &format!("truncate table {}", job.target)).await?;
        freeze = can_freeze(db, &job.target).await?;
    }
    let copy = ddl::copy_statement(&job.target, freeze);
    copy_rows(ctx, db, Table::Accounts, &copy, job.from, job.to, |_| {
        let mut p = progress.borrow_mut();
        p.0 += 1;
        let j = p.0;
        if p.1.due(j) {
            p.1.tick(j, Instant::now())
        } else {
            None
        }
    })
    .await?;
    if job.freeze {
        exec(ctx, db, "commit").await?;
    }
    Ok(())
}

/// Runs `stmts` at the same time, the first on `db` and each other one on a new connection.
pub async fn run_concurrently<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
    stmts: &[String],
) -> Result<(), EngineError> {
    let Some((first, rest)) = stmts.split_last() else {
        return Ok(());
    };
    let mut futs: Vec<Pin<Box<dyn Future<Output = Result<(), EngineError>> + '_>>> = Vec::new();
    futs.push(Box::pin(exec(ctx, db, first)));
    for sql in rest {
        futs.push(Box::pin(async move {
            let mut conn = connect(connector).await?;
            exec(ctx, &mut conn, sql).await
        }));
    }
    try_join_all(futs).await
}

/// Polls all futures to completion on the current task; stops at the first error.
pub async fn try_join_all<'a, E>(
    mut futs: Vec<Pin<Box<dyn Future<Output = Result<(), E>> + 'a>>>,
) -> Result<(), E> {
    std::future::poll_fn(move |cx| {
        let mut i = 0;
        while i < futs.len() {
            match futs[i].as_mut().poll(cx) {
                Poll::Ready(Ok(())) => {
                    drop(futs.swap_remove(i));
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => i += 1,
            }
        }
        if futs.is_empty() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_everything_once() {
        let r = split_ranges(1_000_001, 4);
        assert_eq!(r.first().map(|x| x.0), Some(0));
        assert_eq!(r.last().map(|x| x.1), Some(1_000_001));
        assert!(r.windows(2).all(|w| w[0].1 == w[1].0));
        assert_eq!(split_ranges(3, 8).len(), 3);
    }

    #[test]
    fn range_bounds_become_row_ranges() {
        assert_eq!(
            range_bound_rows("FOR VALUES FROM (MINVALUE) TO (66668)", 200_000),
            Some((0, 66_667))
        );
        assert_eq!(
            range_bound_rows("FOR VALUES FROM (66668) TO (133335)", 200_000),
            Some((66_667, 133_334))
        );
        assert_eq!(
            range_bound_rows("FOR VALUES FROM (133335) TO (MAXVALUE)", 200_000),
            Some((133_334, 200_000))
        );
        assert_eq!(
            range_bound_rows("FOR VALUES WITH (modulus 3, remainder 0)", 10),
            None
        );
    }

    #[test]
    fn partition_listing_must_cover_all_rows() {
        let ok =
            "a_2|r|FOR VALUES FROM (51) TO (MAXVALUE)\na_1|r|FOR VALUES FROM (MINVALUE) TO (51)";
        let jobs = partition_jobs(ok, 100, true).unwrap_or_default();
        assert_eq!(jobs.len(), 2);
        assert_eq!(
            (jobs[0].target.as_str(), jobs[0].from, jobs[0].to),
            ("a_1", 0, 50)
        );
        assert_eq!((jobs[1].from, jobs[1].to), (50, 100));
        let gap =
            "a_1|r|FOR VALUES FROM (MINVALUE) TO (40)\na_2|r|FOR VALUES FROM (51) TO (MAXVALUE)";
        assert_eq!(partition_jobs(gap, 100, true), None);
        let sub = "a_1|p|FOR VALUES FROM (MINVALUE) TO (MAXVALUE)";
        assert_eq!(partition_jobs(sub, 100, true), None);
    }
}
