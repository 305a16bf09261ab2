//! The SQL sysbench 1.0.20 sends to PostgreSQL, byte for byte (read from the server's
//! statement log): the OLTP statements per table (sysbench's `?` become `$n`, as its pgsql
//! driver prepares them), select_random_*'s multi-line texts, oltp_insert's and bulk_insert's
//! plain queries, and how sysbench counts a query as read, write or other.

use std::fmt::Write;

/// The statement kinds of the OLTP tests (sysbench's `stmt_defs` keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Kind {
    /// sysbench's key for the kind (the statement's report name, with the table number).
    pub fn key(self) -> &'static str {
        match self {
            Kind::PointSelect => "point_selects",
            Kind::SimpleRange => "simple_ranges",
            Kind::SumRange => "sum_ranges",
            Kind::OrderRange => "order_ranges",
            Kind::DistinctRange => "distinct_ranges",
            Kind::IndexUpdate => "index_updates",
            Kind::NonIndexUpdate => "non_index_updates",
            Kind::Delete => "deletes",
            Kind::Insert => "inserts",
        }
    }

    /// The statement on table `sbtest<table>`.
    pub fn sql(self, table: u32) -> String {
        match self {
            Kind::PointSelect => format!("SELECT c FROM sbtest{table} WHERE id=$1"),
            Kind::SimpleRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2"),
            Kind::SumRange => {
                format!("SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN $1 AND $2")
            }
            Kind::OrderRange => {
                format!("SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2 ORDER BY c")
            }
            Kind::DistinctRange => format!(
                "SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2 ORDER BY c"
            ),
            Kind::IndexUpdate => format!("UPDATE sbtest{table} SET k=k+1 WHERE id=$1"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{table} SET c=$1 WHERE id=$2"),
            Kind::Delete => format!("DELETE FROM sbtest{table} WHERE id=$1"),
            Kind::Insert => {
                format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES ($1, $2, $3, $4)")
            }
        }
    }
}

pub const BEGIN: &str = "BEGIN";
pub const COMMIT: &str = "COMMIT";

/// `c`: 10 groups of 11 digits joined by `-` (119 characters).
pub const C_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// `pad`: 5 groups of 11 digits (59 characters).
pub const PAD_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########";

/// oltp_insert's query (sent as a plain query, never prepared): with `--auto_inc` the server
/// numbers the row, else the id comes from `sysbench.rand.unique() - 2^31`.
pub fn insert_query(table: u32, auto_inc: bool) -> String {
    if auto_inc {
        format!("INSERT INTO sbtest{table} (k, c, pad) VALUES ($1, $2, $3)")
    } else {
        format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES ($1, $2, $3, $4)")
    }
}

/// select_random_points's statement: `k IN` `points` placeholders.
pub fn random_points(points: u32) -> String {
    let mut list = String::new();
    for i in 1..=points {
        if i > 1 {
            list.push_str(", ");
        }
        let _ = write!(list, "${i}");
    }
    format!("        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ({list})\n        ")
}

/// select_random_ranges's statement: `ranges` `k BETWEEN` ranges joined by `OR`.
pub fn random_ranges(ranges: u32) -> String {
    let mut list = String::new();
    for i in 0..ranges {
        if i > 0 {
            list.push_str(" OR ");
        }
        let _ = write!(list, "k BETWEEN ${} AND ${}", 2 * i + 1, 2 * i + 2);
    }
    format!("        SELECT count(k)\n          FROM sbtest1\n          WHERE {list}")
}

/// The start of bulk_insert's multi-row INSERT into `sbtest<table>` (rows follow as
/// `(n,n),(n,n)`).
pub fn bulk_insert_head(table: u32) -> String {
    format!("INSERT INTO sbtest{table} VALUES")
}

/// bulk_insert's statement: the head, then `$1`, the rows as written (always a simple query:
/// the rows are inlined, `INSERT INTO sbtest1 VALUES(1,1),(2,2)`, as sysbench sends it).
pub fn bulk_insert(table: u32) -> String {
    format!("{}$1", bulk_insert_head(table))
}

/// sysbench's limit on one multi-row INSERT (its bulk buffer, `BULK_PACKET_SIZE`).
pub const BULK_PACKET_SIZE: usize = 512 * 1024;

/// `CREATE TABLE` as sysbench's `prepare` sends it (PostgreSQL branch; `--secondary` gives
/// MySQL's `KEY xid`, which PostgreSQL rejects, as it does for sysbench).
pub fn create_table(table: u32, auto_inc: bool, secondary: bool) -> String {
    let id = if auto_inc {
        "SERIAL"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if secondary { "KEY xid" } else { "PRIMARY KEY" };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n)  "
    )
}

/// bulk_insert's `CREATE TABLE`.
pub fn create_bulk_table(table: u32) -> String {
    format!(
        "        CREATE TABLE IF NOT EXISTS sbtest{table} (\n          id INTEGER NOT NULL,\n          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))"
    )
}

/// How sysbench counts a query in "queries performed".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryClass {
    Read,
    Write,
    Other,
}

/// The class of a statement's reply as sysbench's pgsql driver decides it: a statement that
/// returns rows (even none) is a read; any other is a write when it affected rows, else other
/// (BEGIN, COMMIT, an UPDATE or DELETE that matched nothing).
pub fn classify(returns_rows: bool, affected: u64) -> QueryClass {
    if returns_rows {
        QueryClass::Read
    } else if affected > 0 {
        QueryClass::Write
    } else {
        QueryClass::Other
    }
}

/// Whether `sql` returns rows (a SELECT).
pub fn returns_rows(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("select"))
}

/// The class sysbench gives `sql` when it runs as intended (writes affect their row).
pub fn nominal_class(sql: &str) -> QueryClass {
    if returns_rows(sql) {
        QueryClass::Read
    } else if sql == BEGIN || sql == COMMIT {
        QueryClass::Other
    } else {
        QueryClass::Write
    }
}
