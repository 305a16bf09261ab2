//! The statements of YCSB's operations as its JDBC binding sends them (`SELECT *` by key,
//! `UPDATE … SET FIELDi = ?` by key, `INSERT` of every field, `SELECT * … WHERE YCSB_KEY >= ?
//! ORDER BY YCSB_KEY LIMIT ?`), one per field where only one field is read or written
//! (`readallfields=false`, `writeallfields=false`), and the catalogue: one transaction type
//! per operation with a share above 0, named as YCSB names its measurements.

use pgrig_engine::workload::{Catalogue, Statement, StmtId, TxType};

use super::choose::OpChooser;
use super::config::{Config, Op};
use super::dataset::field_names;

/// A read or write of all fields (one statement) or of one field (statement `first + i` for
/// field `i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    All(StmtId),
    Field(StmtId),
}

impl Access {
    /// The statement for field `field` (ignored for [`Access::All`]).
    pub fn stmt(self, field: usize) -> StmtId {
        match self {
            Access::All(s) => s,
            Access::Field(first) => first + field as StmtId,
        }
    }
}

/// The statements each operation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stmts {
    pub read: Access,
    pub update: Access,
    pub insert: StmtId,
    pub scan: Access,
    pub rmw_read: Access,
    pub rmw_update: Access,
}

/// The catalogue of a workload and its statement ids.
pub fn catalogue(c: &Config, ops: &OpChooser) -> (Catalogue, Stmts) {
    let mut cat = Catalogue::default();
    let t = &c.table;
    let fields: Vec<String> = field_names(c.fieldcount).collect();
    let by_key = "WHERE YCSB_KEY = $1";
    let scan_tail = "WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2";
    let stmts = Stmts {
        read: reads(&mut cat, c, "read", &fields, &format!("FROM {t} {by_key}")),
        update: updates(&mut cat, c, "update", &fields),
        insert: cat.add(Statement::new("insert", insert_sql(t, &fields))),
        scan: reads(
            &mut cat,
            c,
            "scan",
            &fields,
            &format!("FROM {t} {scan_tail}"),
        ),
        rmw_read: reads(
            &mut cat,
            c,
            "rmw.read",
            &fields,
            &format!("FROM {t} {by_key}"),
        ),
        rmw_update: updates(&mut cat, c, "rmw.update", &fields),
    };
    for (op, share) in &ops.ops {
        let statements = statements_of(*op, &stmts, c.fieldcount);
        cat.transactions.push(TxType {
            name: op.name().to_string(),
            weight: ((share * 1e6).round() as u32).max(1),
            statements,
        });
    }
    (cat, stmts)
}

/// `SELECT * <tail>`, or one `SELECT FIELDi <tail>` per field.
fn reads(cat: &mut Catalogue, c: &Config, name: &str, fields: &[String], tail: &str) -> Access {
    if c.readallfields {
        return Access::All(cat.add(Statement::new(name, format!("SELECT * {tail}"))));
    }
    let first = cat.add(Statement::new(
        format!("{name}.{}", fields[0].to_lowercase()),
        format!("SELECT {} {tail}", fields[0]),
    ));
    for f in &fields[1..] {
        cat.add(Statement::new(
            format!("{name}.{}", f.to_lowercase()),
            format!("SELECT {f} {tail}"),
        ));
    }
    Access::Field(first)
}

/// `UPDATE … SET` every field (`$1..$n`, key `$n+1`), or one statement per field (`$1`, key
/// `$2`).
fn updates(cat: &mut Catalogue, c: &Config, name: &str, fields: &[String]) -> Access {
    let t = &c.table;
    if c.writeallfields {
        let sets: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{f} = ${}", i + 1))
            .collect();
        let sql = format!(
            "UPDATE {t} SET {} WHERE YCSB_KEY = ${}",
            sets.join(", "),
            fields.len() + 1
        );
        return Access::All(cat.add(Statement::new(name, sql)));
    }
    let mut first = None;
    for f in fields {
        let id = cat.add(Statement::new(
            format!("{name}.{}", f.to_lowercase()),
            format!("UPDATE {t} SET {f} = $1 WHERE YCSB_KEY = $2"),
        ));
        first.get_or_insert(id);
    }
    Access::Field(first.unwrap_or(0))
}

fn insert_sql(t: &str, fields: &[String]) -> String {
    let params: Vec<String> = (1..=fields.len() + 1).map(|i| format!("${i}")).collect();
    format!(
        "INSERT INTO {t} (YCSB_KEY, {}) VALUES ({})",
        fields.join(", "),
        params.join(", ")
    )
}

/// The statements transaction type `op` may run, in report order.
fn statements_of(op: Op, s: &Stmts, fields: usize) -> Vec<StmtId> {
    let all = |a: Access| -> Vec<StmtId> {
        match a {
            Access::All(id) => vec![id],
            Access::Field(first) => (0..fields).map(|i| first + i as StmtId).collect(),
        }
    };
    match op {
        Op::Read => all(s.read),
        Op::Update => all(s.update),
        Op::Insert => vec![s.insert],
        Op::Scan => all(s.scan),
        Op::ReadModifyWrite => {
            let mut v = all(s.rmw_read);
            v.extend(all(s.rmw_update));
            v
        }
    }
}
