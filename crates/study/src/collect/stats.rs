//! Server-wide counters snapshotted before and after a run, under the same names on every
//! server version: pg_stat_database (the benchmark database), checkpointer/bgwriter (PG 17
//! split them), pg_stat_wal (PG 14+; PG 18 moved its write/sync counts to pg_stat_io) and
//! pg_stat_io's relation I/O (PG 16+); and relation sizes (heap incl. TOAST, indexes, total)
//! after every round.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::db::{lit, Db};
use crate::error::StudyError;
use crate::spec::RelationSizes;

/// Named counters of one view.
pub type Counters = BTreeMap<String, f64>;

/// One snapshot of the server's cumulative counters.
#[derive(Debug, Clone, Default)]
pub struct StatsSnapshot {
    pub database: Counters,
    pub checkpointer: Counters,
    pub wal: Counters,
    /// pg_stat_io's relation I/O (PostgreSQL 16+; empty before).
    pub io: Counters,
}

fn counters(db: &mut Db, sql: &str) -> Result<Counters, StudyError> {
    let rows = db.query(sql)?;
    let mut out = Counters::new();
    for r in rows {
        if let (Some(Some(k)), Some(v)) = (r.first(), r.get(1)) {
            out.insert(
                k.clone(),
                v.as_deref().and_then(|s| s.parse().ok()).unwrap_or(0.0),
            );
        }
    }
    Ok(out)
}

/// `SELECT 'a', a::float8 FROM v UNION ALL ...`: one (name, value) row per column.
fn unpivot(view: &str, cols: &[(&str, &str)], filter: &str) -> String {
    cols.iter()
        .map(|(name, expr)| {
            format!(
                "SELECT {}, ({expr})::float8 FROM {view} {filter}",
                lit(name)
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

impl StatsSnapshot {
    pub fn take(db: &mut Db) -> Result<StatsSnapshot, StudyError> {
        let v = db.version_num();
        Ok(StatsSnapshot {
            database: database(db)?,
            checkpointer: checkpointer(db, v)?,
            wal: wal(db, v)?,
            io: io(db, v)?,
        })
    }

    /// `self - before`, view by view, as JSON.
    pub fn delta_json(&self, before: &StatsSnapshot) -> Value {
        let d = |a: &Counters, b: &Counters| -> Value {
            let m: serde_json::Map<String, Value> = a
                .iter()
                .map(|(k, v)| (k.clone(), number(v - b.get(k).copied().unwrap_or(0.0))))
                .collect();
            Value::Object(m)
        };
        json!({
            "database": d(&self.database, &before.database),
            "checkpointer": d(&self.checkpointer, &before.checkpointer),
            "wal": d(&self.wal, &before.wal),
            "io": d(&self.io, &before.io),
        })
    }
}

/// pg_stat_database for the benchmark database.
fn database(db: &mut Db) -> Result<Counters, StudyError> {
    let cols = [
        ("commits", "xact_commit"),
        ("rollbacks", "xact_rollback"),
        ("blocks_read", "blks_read"),
        ("blocks_hit", "blks_hit"),
        ("tuples_returned", "tup_returned"),
        ("tuples_fetched", "tup_fetched"),
        ("tuples_inserted", "tup_inserted"),
        ("tuples_updated", "tup_updated"),
        ("tuples_deleted", "tup_deleted"),
        ("temp_files", "temp_files"),
        ("temp_bytes", "temp_bytes"),
        ("deadlocks", "deadlocks"),
        ("conflicts", "conflicts"),
    ];
    let filter = "WHERE datname = current_database()";
    counters(db, &unpivot("pg_stat_database", &cols, filter))
}

/// Checkpoints and buffer writes under one set of names: pg_stat_bgwriter before 17;
/// pg_stat_checkpointer plus what stayed in pg_stat_bgwriter from 17 (whose `buffers_backend`
/// moved to pg_stat_io: `io.client_writes`).
fn checkpointer(db: &mut Db, v: i32) -> Result<Counters, StudyError> {
    if v < 170000 {
        let cols = [
            ("checkpoints_timed", "checkpoints_timed"),
            ("checkpoints_requested", "checkpoints_req"),
            ("buffers_checkpoint", "buffers_checkpoint"),
            ("buffers_clean", "buffers_clean"),
            ("buffers_backend", "buffers_backend"),
            ("buffers_alloc", "buffers_alloc"),
        ];
        return counters(db, &unpivot("pg_stat_bgwriter", &cols, ""));
    }
    let cols = [
        ("checkpoints_timed", "num_timed"),
        ("checkpoints_requested", "num_requested"),
        ("buffers_checkpoint", "buffers_written"),
    ];
    let mut c = counters(db, &unpivot("pg_stat_checkpointer", &cols, ""))?;
    let cols = [
        ("buffers_clean", "buffers_clean"),
        ("buffers_alloc", "buffers_alloc"),
    ];
    c.extend(counters(db, &unpivot("pg_stat_bgwriter", &cols, ""))?);
    Ok(c)
}

/// pg_stat_wal (14+). WAL writes and syncs: pg_stat_wal's `wal_write`/`wal_sync` before 18,
/// pg_stat_io's `wal` object from 18 (which dropped them from pg_stat_wal).
fn wal(db: &mut Db, v: i32) -> Result<Counters, StudyError> {
    if v < 140000 {
        return Ok(Counters::new());
    }
    let mut cols = vec![
        ("wal_records", "wal_records"),
        ("wal_fpi", "wal_fpi"),
        ("wal_bytes", "wal_bytes"),
        ("wal_buffers_full", "wal_buffers_full"),
    ];
    if v < 180000 {
        cols.extend([("wal_writes", "wal_write"), ("wal_syncs", "wal_sync")]);
    }
    let mut c = counters(db, &unpivot("pg_stat_wal", &cols, ""))?;
    if v >= 180000 {
        let cols = [
            ("wal_writes", "COALESCE(sum(writes), 0)"),
            ("wal_syncs", "COALESCE(sum(fsyncs), 0)"),
        ];
        c.extend(counters(
            db,
            &unpivot("pg_stat_io", &cols, "WHERE object = 'wal'"),
        )?);
    }
    Ok(c)
}

/// pg_stat_io (16+): relation I/O summed over backend types and contexts, and the writes
/// client backends had to do themselves (pg_stat_bgwriter's `buffers_backend` before 17).
fn io(db: &mut Db, v: i32) -> Result<Counters, StudyError> {
    if v < 160000 {
        return Ok(Counters::new());
    }
    let sum = |col: &'static str| -> String { format!("COALESCE(sum({col}), 0)") };
    let names = [
        "reads",
        "writes",
        "writebacks",
        "extends",
        "hits",
        "evictions",
        "fsyncs",
    ];
    let exprs: Vec<(&str, String)> = names.iter().map(|n| (*n, sum(n))).collect();
    let mut cols: Vec<(&str, &str)> = exprs.iter().map(|(n, e)| (*n, e.as_str())).collect();
    cols.push((
        "client_writes",
        "COALESCE(sum(writes) FILTER (WHERE backend_type = 'client backend'), 0)",
    ));
    counters(
        db,
        &unpivot("pg_stat_io", &cols, "WHERE object = 'relation'"),
    )
}

/// Whole numbers as JSON integers, others as floats.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The size columns of [`relation_sizes`], after the name, in the order of [`SIZE_KEYS`]:
/// `heap` (main fork + the TOAST relation with its index, as before), `indexes`, `total`, then
/// the parts `pg_total_relation_size` adds up — `main`, `fsm`, `vm`, `init` (forks of the table),
/// `toast` (the TOAST relation's total, its index included) and `indexes` again.
const SIZE_COLS: &str = "pg_relation_size(c.oid) + COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0), \
     pg_indexes_size(c.oid), pg_total_relation_size(c.oid), \
     pg_relation_size(c.oid, 'main'), pg_relation_size(c.oid, 'fsm'), pg_relation_size(c.oid, 'vm'), \
     pg_relation_size(c.oid, 'init'), COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0)";

/// The keys of one relation's sizes, in [`SIZE_COLS`]' order.
pub const SIZE_KEYS: [&str; 8] = [
    "heap", "indexes", "total", "main", "fsm", "vm", "init", "toast",
];

/// Relation sizes: `{"name": {"heap": b, "indexes": b, "total": b, "main": b, "fsm": b, "vm": b,
/// "init": b, "toast": b}}` in bytes (main + fsm + vm + init + toast + indexes = total). A listed
/// name that is not a table is also looked up as `pgbench_NAME`; names are reported as listed.
pub fn relation_sizes(db: &mut Db, which: &RelationSizes) -> Result<Value, StudyError> {
    let size_cols = SIZE_COLS;
    let mut out = serde_json::Map::new();
    let row_json = |r: &[Option<String>]| -> Value {
        let n = |i: usize| {
            r.get(i)
                .cloned()
                .flatten()
                .and_then(|s| s.parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .unwrap_or(0)
        };
        let m: serde_json::Map<String, Value> = SIZE_KEYS
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), json!(n(i + 1))))
            .collect();
        Value::Object(m)
    };
    match which {
        RelationSizes::All(false) => {}
        RelationSizes::All(true) => {
            let rows = db.query(&format!(
                "SELECT c.relname, {size_cols} FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                 AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1"
            ))?;
            for r in rows {
                if let Some(Some(name)) = r.first() {
                    out.insert(name.clone(), row_json(&r));
                }
            }
        }
        RelationSizes::Tables(names) => {
            for name in names {
                let mut found = None;
                for candidate in [name.clone(), format!("pgbench_{name}")] {
                    let rows = db.query(&format!(
                        "SELECT c.relname, {size_cols} FROM pg_class c WHERE c.oid = to_regclass({})",
                        lit(&candidate)
                    ))?;
                    if let Some(r) = rows.into_iter().next() {
                        found = Some(row_json(&r));
                        break;
                    }
                }
                out.insert(name.clone(), found.unwrap_or(Value::Null));
            }
        }
    }
    Ok(Value::Object(out))
}
