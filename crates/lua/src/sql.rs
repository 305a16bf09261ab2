//! `sysbench.sql`'s connections, the Rust half: one pgrig-wire connection per `connect()`,
//! blocking on the thread's own current-thread runtime. `query` is a simple-protocol query (as
//! sysbench's pgsql driver sends `PQexec`), prepared statements are the extended protocol (its
//! `PQprepare`/`PQexecPrepared`), or simple queries with the values inlined under
//! `--db-ps-mode=disable`. Errors are classified as the pgsql driver does: SQLSTATE 40P01,
//! 40001 and 23505 roll back and restart the event (an ignored error); any other is fatal,
//! printed with the driver's lines. The Lua half (`prelude.lua`) turns the outcomes into result
//! sets and error values.

use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use mlua::{IntoLuaMulti, Lua, MultiValue, UserData, UserDataMethods, Value};
use pgrig_wire::{Backend, Config, Connection, DbError, Error, TransactionStatus};

use crate::stats::Stats;

/// sysbench's `sysbench.sql.error` codes.
const RESTART_EVENT: i64 = 1;
const FATAL: i64 = 2;

/// SQLSTATEs sysbench's pgsql driver ignores (the event restarts).
const IGNORABLE: [&str; 3] = ["40P01", "40001", "23505"];

/// Rows as the server's text, `None` for NULL.
type Rows = Vec<Vec<Option<Vec<u8>>>>;

/// What a statement gave: rows (with the column count) if it returns any, or an error.
pub enum Outcome {
    Done(Option<(Rows, usize)>),
    /// sysbench's error code, SQLSTATE, message, and the driver's lines to print (unless a
    /// hook makes the error ignorable)
    Failed {
        errcode: i64,
        state: String,
        msg: String,
        lines: String,
    },
}

impl IntoLuaMulti for Outcome {
    fn into_lua_multi(self, lua: &Lua) -> mlua::Result<MultiValue> {
        match self {
            Outcome::Done(None) => (true, Value::Nil, 0).into_lua_multi(lua),
            Outcome::Done(Some((rows, n))) => {
                let rs = ResultSet {
                    rows,
                    ncols: n,
                    pos: 0,
                };
                (true, lua.create_userdata(rs)?, n).into_lua_multi(lua)
            }
            Outcome::Failed {
                errcode,
                state,
                msg,
                lines,
            } => (false, errcode, state, msg, lines).into_lua_multi(lua),
        }
    }
}

/// A statement's rows, kept on the Rust side until the script fetches them (most scripts never
/// do: sysbench's own tests discard their results).
pub struct ResultSet {
    rows: Rows,
    ncols: usize,
    pos: usize,
}

impl UserData for ResultSet {
    fn add_fields<F: mlua::UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("nrows", |_, rs| Ok(rs.rows.len()));
        f.add_field_method_get("nfields", |_, rs| Ok(rs.ncols));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("fetch_row", |lua, rs, ()| {
            let Some(row) = rs.rows.get(rs.pos) else {
                return Ok(Value::Nil);
            };
            rs.pos += 1;
            let t = lua.create_table_with_capacity(row.len(), 0)?;
            for (i, v) in row.iter().enumerate() {
                if let Some(b) = v {
                    t.raw_set(i + 1, lua.create_string(b)?)?;
                }
            }
            Ok(Value::Table(t))
        });
        m.add_method_mut("free", |_, rs, ()| {
            rs.rows = Vec::new();
            Ok(())
        });
    }
}

/// Where and how the thread's connections connect.
pub struct SqlContext {
    pub rt: Rc<tokio::runtime::Runtime>,
    pub config: Config,
    pub stats: Arc<Stats>,
    pub ps_disable: bool,
}

/// One connection (`drv:connect()`), the userdata behind a Lua connection object.
pub struct RawCon {
    ctx: Rc<SqlContext>,
    conn: Option<Connection>,
    next_stmt: u32,
}

/// Connects; the error is sysbench's `Connection to database failed` line (already printed).
pub fn connect(ctx: &Rc<SqlContext>) -> Result<RawCon, String> {
    ctx.stats.sql_used.store(true, Relaxed);
    let conn = ctx
        .rt
        .block_on(Connection::connect(&ctx.config))
        .map_err(|e| {
            println!("FATAL: Connection to database failed: {e}\n");
            "connection creation failed".to_string()
        })?;
    Ok(RawCon {
        ctx: ctx.clone(),
        conn: Some(conn),
        next_stmt: 0,
    })
}

/// sysbench's `?` placeholders as `$1, $2, ...` (outside quotes), and their count.
pub fn numbered(sql: &str) -> (String, u16) {
    let (mut out, mut n, mut quote) = (String::with_capacity(sql.len() + 8), 0u16, None);
    for ch in sql.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, '?') => {
                n += 1;
                out += &format!("${n}");
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    (out, n)
}

/// `values` inlined into `sql`'s placeholders, as sysbench's client-side emulation writes them
/// (numbers bare, other values quoted).
pub fn inline(sql: &str, values: &[Option<String>]) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut it = values.iter();
    let mut quote = None;
    for ch in sql.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, '?') => {
                match it.next() {
                    Some(Some(v)) if v.parse::<f64>().is_ok() => out += v,
                    Some(Some(v)) => out += &pgrig_wire::quote::literal(v),
                    _ => out += "NULL",
                }
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    out
}

impl RawCon {
    fn conn(&mut self) -> Result<&mut Connection, Error> {
        self.conn.as_mut().ok_or(Error::Closed)
    }

    /// The outcome of a server error: an ignorable one rolls back; others print the driver's
    /// lines (`first`: its `PQexec() failed` or `PQexecPrepared() failed`).
    fn failed(&mut self, e: DbError, sql: &str, simple: bool) -> Outcome {
        if IGNORABLE.contains(&e.code.as_str()) {
            let rt = self.ctx.rt.clone();
            if let Ok(c) = self.conn() {
                if c.transaction_status() != TransactionStatus::Idle {
                    let _ = rt.block_on(c.simple_query("ROLLBACK"));
                }
            }
            return Outcome::Failed {
                errcode: RESTART_EVENT,
                state: e.code,
                msg: e.message,
                lines: String::new(),
            };
        }
        let lines = if simple {
            format!(
                "FATAL: PQexec() failed: 7 {}\nFATAL: failed query was: {sql}\n",
                e.message
            )
        } else {
            format!("FATAL: PQexecPrepared() failed: 7 {}\n", e.message)
        };
        Outcome::Failed {
            errcode: FATAL,
            state: e.code,
            msg: e.message,
            lines,
        }
    }

    fn lost(&mut self, e: Error, sql: &str) -> Outcome {
        Outcome::Failed {
            errcode: FATAL,
            state: String::new(),
            msg: e.to_string(),
            lines: format!("FATAL: PQexec() failed: 7 {e}\nFATAL: failed query was: {sql}\n"),
        }
    }

    /// `con:query(sql)`.
    pub fn query(&mut self, sql: &str) -> Outcome {
        self.ctx.stats.query(sql);
        let rt = self.ctx.rt.clone();
        let r = match self.conn() {
            Ok(c) => rt.block_on(c.simple_query(sql)),
            Err(e) => Err(e),
        };
        match r {
            Ok(results) => Outcome::Done(results.into_iter().last().and_then(|q| {
                (!q.columns.is_empty()).then(|| {
                    let n = q.columns.len();
                    let rows = q
                        .rows
                        .into_iter()
                        .map(|r| r.0.into_iter().map(|v| v.map(String::into_bytes)).collect());
                    (rows.collect(), n)
                })
            })),
            Err(Error::Db(e)) => self.failed(*e, sql, true),
            Err(e) => self.lost(e, sql),
        }
    }

    /// `con:prepare(sql)`: the statement's name, or `None` (printed) when it does not prepare.
    pub fn prepare(&mut self, sql: &str) -> Option<String> {
        if self.ctx.ps_disable {
            return Some(String::new());
        }
        self.next_stmt += 1;
        let name = format!("sbstmt{}", self.next_stmt);
        let (text, n) = numbered(sql);
        let rt = self.ctx.rt.clone();
        let c = self.conn().ok()?;
        c.parse(&name, &text, n);
        c.sync();
        let r = rt.block_on(async {
            c.send().await?;
            c.skip_until_ready().await
        });
        match r {
            Ok(None) => Some(name),
            Ok(Some(e)) => {
                println!("FATAL: PQprepare() failed: {}", e.with_query(text));
                None
            }
            Err(e) => {
                println!("FATAL: PQprepare() failed: {e}");
                None
            }
        }
    }

    /// `stmt:execute()` of statement `name` (`sql` its text) with `values`.
    pub fn execute(&mut self, name: &str, sql: &str, values: &[Option<String>]) -> Outcome {
        if name.is_empty() {
            return self.query(&inline(sql, values));
        }
        self.ctx.stats.query(sql);
        let rt = self.ctx.rt.clone();
        let r = match self.conn() {
            Ok(c) => {
                c.bind(
                    "",
                    name,
                    values.iter().map(|v| v.as_deref().map(str::as_bytes)),
                );
                c.describe_portal("");
                c.execute("", 0);
                c.sync();
                rt.block_on(collect(c))
            }
            Err(e) => Err(e),
        };
        match r {
            Ok((_, Some(e))) => self.failed(e, sql, false),
            Ok((rows, None)) => Outcome::Done(rows),
            Err(e) => self.lost(e, sql),
        }
    }

    fn close_stmt(&mut self, name: &str) {
        let rt = self.ctx.rt.clone();
        if let (false, Ok(c)) = (name.is_empty(), self.conn()) {
            c.close_statement(name);
            c.sync();
            let _ = rt.block_on(async {
                c.send().await?;
                c.skip_until_ready().await
            });
        }
    }

    fn disconnect(&mut self) {
        if let Some(c) = self.conn.take() {
            self.ctx.rt.block_on(c.close());
        }
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.disconnect();
        let mut fresh = connect(&self.ctx)?;
        self.conn = fresh.conn.take();
        self.ctx.stats.reconnects.add(1);
        Ok(())
    }
}

/// Reads an extended-protocol response up to ReadyForQuery: its rows (when it describes any)
/// and its first error.
async fn collect(c: &mut Connection) -> Result<(Option<(Rows, usize)>, Option<DbError>), Error> {
    c.send().await?;
    let (mut rows, mut cols, mut err) = (Vec::new(), None, None);
    loop {
        match c.recv().await? {
            Backend::RowDescription(d) => cols = Some(d.len()),
            Backend::DataRow(r) => rows.push(r.iter().map(|v| v.map(<[u8]>::to_vec)).collect()),
            Backend::Error(e) if err.is_none() => err = Some(e.to_db_error()),
            Backend::ReadyForQuery(_) => return Ok((cols.map(|n| (rows, n)), err)),
            _ => {}
        }
    }
}

impl Drop for RawCon {
    fn drop(&mut self) {
        self.disconnect();
    }
}

impl UserData for RawCon {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("query", |_, this, sql: mlua::LuaString| {
            Ok(this.query(&sql.to_str()?))
        });
        m.add_method_mut("prepare", |_, this, sql: mlua::LuaString| {
            Ok(this.prepare(&sql.to_str()?))
        });
        m.add_method_mut(
            "execute",
            |_, this, (name, sql, values): (String, String, Vec<Value>)| {
                let values: Vec<Option<String>> = values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Some(s.to_string_lossy()),
                        _ => None,
                    })
                    .collect();
                Ok(this.execute(&name, &sql, &values))
            },
        );
        m.add_method_mut("close_stmt", |_, this, name: String| {
            this.close_stmt(&name);
            Ok(())
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            this.disconnect();
            Ok(())
        });
        m.add_method_mut("reconnect", |_, this, ()| Ok(this.reconnect().err()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered("SELECT c FROM t WHERE id = ? AND c <> '?' AND k BETWEEN ? AND ?"),
            (
                "SELECT c FROM t WHERE id = $1 AND c <> '?' AND k BETWEEN $2 AND $3".to_string(),
                3
            )
        );
    }

    #[test]
    fn inlined_values_are_bare_numbers_quoted_text_and_null() {
        let v = [Some("42".to_string()), Some("it's".to_string()), None];
        assert_eq!(
            inline("INSERT INTO t VALUES (?, ?, ?)", &v),
            "INSERT INTO t VALUES (42, 'it''s', NULL)"
        );
    }
}
