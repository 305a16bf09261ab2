//! The SQL text pgbench's initialisation sends, spelled exactly like pgbench: table DDL (32/64-bit `aid`, fillfactor, tablespace, unlogged, partitioning), partitions with
//! their bounds, primary and foreign keys, truncation, server-side generation and vacuum.

use crate::dataset::CopyFormat;
use pgrig_engine::config::{InitConfig, PartitionMethod};

/// Scale from which `aid` columns become `bigint` (pgbench's `SCALE_32BIT_THRESHOLD`).
pub const SCALE_32BIT_THRESHOLD: i32 = 20000;
/// Rows per scale unit.
pub const NBRANCHES: i64 = 1;
pub const NTELLERS: i64 = 10;
pub const NACCOUNTS: i64 = 100_000;

pub const DROP_TABLES: &str =
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";
pub const TRUNCATE_TABLES: &str =
    "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// `vacuum analyze` statements of the `v` step, in pgbench's order.
pub const VACUUM: [&str; 4] = [
    "vacuum analyze pgbench_branches",
    "vacuum analyze pgbench_tellers",
    "vacuum analyze pgbench_accounts",
    "vacuum analyze pgbench_history",
];

/// Foreign keys of the `f` step, in pgbench's order.
pub const FOREIGN_KEYS: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
];

const PRIMARY_KEYS: [&str; 3] = [
    "alter table pgbench_branches add primary key (bid)",
    "alter table pgbench_tellers add primary key (tid)",
    "alter table pgbench_accounts add primary key (aid)",
];

struct TableDdl {
    name: &'static str,
    small: &'static str,
    big: &'static str,
    fillfactor: bool,
}

const TABLES: [TableDdl; 4] = [
    TableDdl {
        name: "pgbench_history",
        small: "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
        big: "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
        fillfactor: false,
    },
    TableDdl {
        name: "pgbench_tellers",
        small: "tid int not null,bid int,tbalance int,filler char(84)",
        big: "tid int not null,bid int,tbalance int,filler char(84)",
        fillfactor: true,
    },
    TableDdl {
        name: "pgbench_accounts",
        small: "aid    int not null,bid int,abalance int,filler char(84)",
        big: "aid bigint not null,bid int,abalance int,filler char(84)",
        fillfactor: true,
    },
    TableDdl {
        name: "pgbench_branches",
        small: "bid int not null,bbalance int,filler char(88)",
        big: "bid int not null,bbalance int,filler char(88)",
        fillfactor: true,
    },
];

/// libpq's `PQescapeIdentifier`: always double-quoted, embedded quotes doubled.
pub use pgrig_wire::quote::ident as quote_ident;

/// The effective partitioning: pgbench defaults to range when `--partitions` > 0.
pub fn partition_method(cfg: &InitConfig) -> Option<PartitionMethod> {
    if cfg.partitions > 0 {
        Some(cfg.partition_method.unwrap_or(PartitionMethod::Range))
    } else {
        None
    }
}

fn method_name(m: PartitionMethod) -> &'static str {
    match m {
        PartitionMethod::Range => "range",
        PartitionMethod::Hash => "hash",
    }
}

/// The four `create table` statements of the `t` step, in pgbench's order. `--unlogged-tables`
/// follows pgbench 18 on every server: unpartitioned, all four tables are unlogged; partitioned,
/// all four are logged and only the partitions unlogged (PostgreSQL 18 refuses unlogged
/// partitioned tables, and permanent tables may not reference unlogged ones with
/// `--foreign-keys`). pgbench 15-17 instead make all four unlogged, the partitioned parent too.
pub fn create_tables(cfg: &InitConfig) -> Vec<String> {
    let method = partition_method(cfg);
    TABLES
        .iter()
        .map(|t| {
            let partitioned = method.is_some() && t.name == "pgbench_accounts";
            let unlogged = if cfg.unlogged && method.is_none() {
                " unlogged"
            } else {
                ""
            };
            let cols = if cfg.scale >= SCALE_32BIT_THRESHOLD {
                t.big
            } else {
                t.small
            };
            let mut sql = format!("create{unlogged} table {}({cols})", t.name);
            match method {
                Some(m) if partitioned => {
                    sql.push_str(&format!(" partition by {} (aid)", method_name(m)))
                }
                _ if t.fillfactor => {
                    sql.push_str(&format!(" with (fillfactor={})", cfg.fillfactor))
                }
                _ => {}
            }
            if let Some(ts) = &cfg.tablespace {
                sql.push_str(" tablespace ");
                sql.push_str(&quote_ident(ts));
            }
            sql
        })
        .collect()
}

/// Range partition width: `ceil(naccounts * scale / partitions)`.
pub fn range_part_size(scale: i32, partitions: i32) -> i64 {
    let parts = i64::from(partitions.max(1));
    (NACCOUNTS * i64::from(scale) + parts - 1) / parts
}

/// `create table pgbench_accounts_<p> partition of ...` for p = 1..N (empty when unpartitioned).
pub fn create_partitions(cfg: &InitConfig) -> Vec<String> {
    let Some(method) = partition_method(cfg) else {
        return Vec::new();
    };
    let n = cfg.partitions;
    let unlogged = if cfg.unlogged { " unlogged" } else { "" };
    let part_size = range_part_size(cfg.scale, n);
    (1..=n)
        .map(|p| {
            let bounds = match method {
                PartitionMethod::Range => {
                    let lo = if p == 1 {
                        "minvalue".to_string()
                    } else {
                        (i64::from(p - 1) * part_size + 1).to_string()
                    };
                    let hi = if p < n {
                        (i64::from(p) * part_size + 1).to_string()
                    } else {
                        "maxvalue".to_string()
                    };
                    format!("for values from ({lo}) to ({hi})")
                }
                PartitionMethod::Hash => {
                    format!("for values with (modulus {n}, remainder {})", p - 1)
                }
            };
            format!(
                "create{unlogged} table pgbench_accounts_{p}\n  partition of pgbench_accounts\n  {bounds} with (fillfactor={})",
                cfg.fillfactor
            )
        })
        .collect()
}

/// The three `add primary key` statements of the `p` step.
pub fn primary_keys(cfg: &InitConfig) -> Vec<String> {
    PRIMARY_KEYS
        .iter()
        .map(|k| match &cfg.index_tablespace {
            Some(ts) => format!("{k} using index tablespace {}", quote_ident(ts)),
            None => (*k).to_string(),
        })
        .collect()
}

/// The three inserts of the `G` step (server-side generation).
pub fn server_side_inserts(scale: i32) -> [String; 3] {
    let s = i64::from(scale);
    [
        format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            NBRANCHES * s
        ),
        format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
            NTELLERS * s
        ),
        format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series(1, {}) as aid",
            NACCOUNTS * s
        ),
    ]
}

/// `copy TABLE from stdin`, with `(freeze on)` when the server and table allow it, and
/// `format binary` for binary rows.
pub fn copy_statement(table: &str, freeze: bool, format: CopyFormat) -> String {
    let binary = matches!(format, CopyFormat::Binary { .. });
    match (freeze, binary) {
        (true, false) => format!("copy {table} from stdin with (freeze on)"),
        (true, true) => format!("copy {table} from stdin with (freeze on, format binary)"),
        (false, true) => format!("copy {table} from stdin with (format binary)"),
        (false, false) => format!("copy {table} from stdin"),
    }
}

/// The column types of `table` (`format_type`, comma-separated, in column order).
pub fn column_types_query(table: &str) -> String {
    format!(
        "select string_agg(pg_catalog.format_type(atttypid, NULL), ',' order by attnum) from pg_catalog.pg_attribute \
         where attrelid = '{}'::pg_catalog.regclass and attnum > 0 and not attisdropped",
        table.replace('\'', "''")
    )
}

/// `server-side generate` of accounts rows `from..to` (0-based) into `target` (a table or one
/// of its partitions): pgbench's insert restricted to a key range.
pub fn server_side_accounts_range(target: &str, from: i64, to: i64) -> String {
    format!(
        "insert into {target}(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series({}, {}) as aid",
        from + 1,
        to
    )
}

/// Query for a table's relkind (`r` ordinary, `p` partitioned, ...).
pub fn relkind_query(table: &str) -> String {
    format!("select relkind from pg_catalog.pg_class where oid = '{table}'::pg_catalog.regclass")
}
