//! Work over several connections: a queue of [`Job`]s (COPY a row range into a table or
//! partition, or run one statement) drained by up to `parallelism` connections, each opened
//! with the same setup statements, with one shared progress [`Meter`]. Also the plan that
//! splits a table's rows into jobs: one job per range partition (rows go straight into the
//! partition), else contiguous key ranges through the table itself.
//!
//! Nothing here changes what ends up in the tables: the jobs write exactly the rows (and the
//! same non-frozen visibility) a single connection would; only their physical order across
//! partitions or pages can differ.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use crate::copy::{copy_format, copy_rows};
use crate::ctx::{exec, query_failed, StepCtx};
use crate::dataset::{CopyFormat, RowSource};
use crate::db::{Connector, InitDb};
use crate::ddl::quote_ident;
use crate::progress::Meter;
use pgrig_engine::error::EngineError;

/// Futures run side by side on the current task.
type Futs<'a, E> = Vec<Pin<Box<dyn Future<Output = Result<(), E>> + 'a>>>;

/// One unit of work for a connection.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    /// COPY rows `from..to` (0-based) of the source into `target`.
    Copy { target: String, from: i64, to: i64 },
    /// Run `sql`; when done, `rows` rows count as progress.
    Sql { sql: String, rows: i64 },
}

/// Splits `0..total` into `n` contiguous ranges of nearly equal size.
pub fn split_ranges(total: i64, n: usize) -> Vec<(i64, i64)> {
    let n = (n.max(1) as i64).min(total.max(1));
    (0..n)
        .map(|i| (total * i / n, total * (i + 1) / n))
        .filter(|(a, b)| a < b)
        .collect()
}

/// Parses `FOR VALUES FROM (lo) TO (hi)` of an integer range partition into a key range
/// `[lo, hi)` (`MINVALUE`/`MAXVALUE` as `i64::MIN`/`i64::MAX`). `None` for anything else.
pub fn range_bound_keys(bound: &str) -> Option<(i64, i64)> {
    let rest = bound.strip_prefix("FOR VALUES FROM (")?;
    let (lo, hi) = rest.split_once(") TO (")?;
    let hi = hi.strip_suffix(')')?;
    let value = |v: &str, open: i64| -> Option<i64> {
        match v.trim().trim_matches('\'') {
            "MINVALUE" | "MAXVALUE" => Some(open),
            n => n.parse::<i64>().ok(),
        }
    };
    Some((value(lo, i64::MIN)?, value(hi, i64::MAX)?))
}

/// One row of the partition listing: name, relkind, bound expression.
pub struct Partition {
    pub name: String,
    pub kind: String,
    pub bound: String,
}

/// Parses the `name|relkind|bound` lines of [`PARTITIONS_SQL`].
pub fn parse_partitions(listing: &str) -> Vec<Partition> {
    listing
        .lines()
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            let mut f = line.splitn(3, '|');
            Some(Partition {
                name: f.next()?.to_string(),
                kind: f.next()?.to_string(),
                bound: f.next()?.to_string(),
            })
        })
        .collect()
}

/// The direct partitions of `pgbench_accounts`, one `name|relkind|bound` line each.
pub const PARTITIONS_SQL: &str = "select string_agg(c.relname || '|' || c.relkind::text || '|' || pg_catalog.pg_get_expr(c.relpartbound, c.oid), E'\\n' order by c.relname) \
     from pg_catalog.pg_inherits i join pg_catalog.pg_class c on c.oid = i.inhrelid \
     where i.inhparent = 'pgbench_accounts'::pg_catalog.regclass";

/// COPY jobs straight into range partitions when every row falls into exactly one listed
/// leaf partition; `None` otherwise (hash partitions, sub-partitions, gaps).
pub fn partition_jobs(parts: &[Partition], source: &dyn RowSource) -> Option<Vec<Job>> {
    let total = source.rows();
    let mut ranges = Vec::new();
    for p in parts {
        if p.kind != "r" {
            return None;
        }
        let (lo, hi) = range_bound_keys(&p.bound)?;
        let (from, to) = source.rows_for_keys(lo, hi);
        if from < to {
            ranges.push((from, to, p.name.clone()));
        }
    }
    ranges.sort();
    let mut next = 0;
    for (from, to, _) in &ranges {
        if *from != next {
            return None;
        }
        next = *to;
    }
    (next == total).then(|| {
        ranges
            .into_iter()
            .map(|(from, to, name)| Job::Copy {
                target: quote_ident(&name),
                from,
                to,
            })
            .collect()
    })
}

/// COPY jobs of contiguous row ranges through `table` itself.
pub fn chunk_jobs(table: &str, total: i64, n: usize) -> Vec<Job> {
    split_ranges(total, n)
        .into_iter()
        .map(|(from, to)| Job::Copy {
            target: table.to_string(),
            from,
            to,
        })
        .collect()
}

/// The partitions of `pgbench_accounts` (empty when it is not partitioned).
pub async fn partitions<D: InitDb>(db: &mut D) -> Result<Vec<Partition>, EngineError> {
    let listing = db
        .query_value(PARTITIONS_SQL)
        .await
        .map_err(|e| query_failed(&e.message, PARTITIONS_SQL))?
        .unwrap_or_default();
    Ok(parse_partitions(&listing))
}

/// Runs `jobs` over up to `ctx.parallelism` new connections (each first runs `setup`), with
/// `source` for COPY jobs and `meter` for progress. Stops at the first error.
pub async fn run_jobs<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    setup: &[String],
    jobs: Vec<Job>,
    source: Option<&dyn RowSource>,
    meter: &RefCell<(i64, Meter)>,
) -> Result<(), EngineError> {
    let workers = ctx.parallelism.min(jobs.len()).max(1);
    let queue = RefCell::new(jobs.into_iter().collect::<VecDeque<_>>());
    let mut futs: Futs<'_, EngineError> = Vec::new();
    for _ in 0..workers {
        let queue = &queue;
        futs.push(Box::pin(async move {
            let mut db = connect(connector).await?;
            for sql in setup {
                exec(ctx, &mut db, sql).await?;
            }
            loop {
                let job = queue.borrow_mut().pop_front();
                let Some(job) = job else { return Ok(()) };
                run_job(ctx, &mut db, &job, source, meter).await?;
            }
        }));
    }
    try_join_all(futs).await
}

async fn connect<C: Connector>(connector: &C) -> Result<C::Db, EngineError> {
    connector.connect().await.map_err(|e| {
        EngineError::fatal(e.message.trim_end().to_string()).with(
            pgrig_engine::sink::Level::Error,
            "could not create connection for initialization",
        )
    })
}

async fn run_job<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    job: &Job,
    source: Option<&dyn RowSource>,
    meter: &RefCell<(i64, Meter)>,
) -> Result<(), EngineError> {
    match job {
        Job::Sql { sql, rows } => {
            exec(ctx, db, sql).await?;
            let mut m = meter.borrow_mut();
            m.0 += rows;
            m.1.add(*rows);
            Ok(())
        }
        Job::Copy { target, from, to } => {
            let Some(source) = source else {
                return Ok(());
            };
            let format = if ctx.exact() {
                CopyFormat::Text
            } else {
                copy_format(db, target, source).await?
            };
            let copy = crate::ddl::copy_statement(target, false, format);
            copy_rows(ctx, db, source, &copy, format, *from, *to, |_| {
                let mut m = meter.borrow_mut();
                m.0 += 1;
                let j = m.0;
                m.1.row(j)
            })
            .await
        }
    }
}

/// Runs `stmts` at the same time, the first on `db` and each other one on a new connection
/// (each new connection first runs `setup`). All run to their end; when several fail, the
/// error of the earliest in `stmts` is returned (the one pgbench, running them in order,
/// would have reported).
pub async fn run_concurrently<C: Connector>(
    ctx: &StepCtx<'_>,
    connector: &C,
    db: &mut C::Db,
    setup: &[String],
    stmts: &[String],
) -> Result<(), EngineError> {
    let Some((first, rest)) = stmts.split_first() else {
        return Ok(());
    };
    let mut futs: Futs<'_, EngineError> = Vec::new();
    futs.push(Box::pin(async move {
        for sql in setup {
            exec(ctx, db, sql).await?;
        }
        exec(ctx, db, first).await
    }));
    for sql in rest {
        futs.push(Box::pin(async move {
            let mut conn = connect(connector).await?;
            for s in setup {
                exec(ctx, &mut conn, s).await?;
            }
            exec(ctx, &mut conn, sql).await
        }));
    }
    join_all_first_error(futs).await
}

/// Polls all futures to completion; returns the error of the lowest-numbered failing one.
pub async fn join_all_first_error<'a, E>(mut futs: Futs<'a, E>) -> Result<(), E> {
    let mut results: Vec<Option<Result<(), E>>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if results[i].is_some() {
                continue;
            }
            match f.as_mut().poll(cx) {
                Poll::Ready(r) => results[i] = Some(r),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results
        .into_iter()
        .flatten()
        .find(|r| r.is_err())
        .unwrap_or(Ok(()))
}

/// Polls all futures to completion on the current task; stops at the first error.
pub async fn try_join_all<'a, E>(mut futs: Futs<'a, E>) -> Result<(), E> {
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
    use super::super::rows::{Rows, Table};
    use super::*;

    fn accounts(scale: i32) -> Rows {
        Rows {
            table: Table::Accounts,
            scale,
        }
    }

    #[test]
    fn ranges_cover_everything_once() {
        let r = split_ranges(1_000_001, 4);
        assert_eq!(r.first().map(|x| x.0), Some(0));
        assert_eq!(r.last().map(|x| x.1), Some(1_000_001));
        assert!(r.windows(2).all(|w| w[0].1 == w[1].0));
        assert_eq!(split_ranges(3, 8).len(), 3);
    }

    #[test]
    fn range_bounds_become_key_ranges() {
        assert_eq!(
            range_bound_keys("FOR VALUES FROM (MINVALUE) TO (66668)"),
            Some((i64::MIN, 66_668))
        );
        assert_eq!(
            range_bound_keys("FOR VALUES FROM (133335) TO (MAXVALUE)"),
            Some((133_335, i64::MAX))
        );
        assert_eq!(
            range_bound_keys("FOR VALUES WITH (modulus 3, remainder 0)"),
            None
        );
    }

    #[test]
    fn partition_listing_must_cover_all_rows() {
        let src = accounts(1);
        let ok = parse_partitions(
            "a_2|r|FOR VALUES FROM (50001) TO (MAXVALUE)\na_1|r|FOR VALUES FROM (MINVALUE) TO (50001)",
        );
        let jobs = partition_jobs(&ok, &src).unwrap_or_default();
        assert_eq!(
            jobs,
            vec![
                Job::Copy {
                    target: "\"a_1\"".into(),
                    from: 0,
                    to: 50_000
                },
                Job::Copy {
                    target: "\"a_2\"".into(),
                    from: 50_000,
                    to: 100_000
                }
            ]
        );
        let gap = parse_partitions(
            "a_1|r|FOR VALUES FROM (MINVALUE) TO (40)\na_2|r|FOR VALUES FROM (51) TO (MAXVALUE)",
        );
        assert_eq!(partition_jobs(&gap, &src), None);
        let sub = parse_partitions("a_1|p|FOR VALUES FROM (MINVALUE) TO (MAXVALUE)");
        assert_eq!(partition_jobs(&sub, &src), None);
        let hash = parse_partitions("a_1|r|FOR VALUES WITH (modulus 1, remainder 0)");
        assert_eq!(partition_jobs(&hash, &src), None);
    }
}
