//! `sysbench.sql`'s connections, the Rust half: one pgrig-wire connection per `connect()` on
//! pgrig's own runtime (`pgrig_wire::rt`, as the native path; each call blocks the thread as
//! libpq's do for sysbench). `query` is a simple-protocol query (as sysbench's pgsql driver
//! sends `PQexec`), prepared statements are the extended protocol (its `PQprepare` /
//! `PQexecPrepared`; the statement is described once, at prepare, so an execute is Bind,
//! Execute, Sync), or simple queries with the values inlined under `--db-ps-mode=disable`.
//! Parameters are collected in one flat buffer and rows land in [`Rows`]: nothing allocates per
//! statement. The hot calls come from Lua through LuaJIT's FFI (`ffi.rs`); errors are
//! classified as the pgsql driver does (SQLSTATE 40P01, 40001 and 23505 roll back and restart
//! the event; any other is fatal, printed with the driver's lines) and kept for the Lua half
//! (`prelude.lua`) to turn into error values.

use std::io::Write as _;
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use pgrig_wire::{Backend, Config, Connection, DbError, Error, TransactionStatus};
use pgrig_workloads::sysbench::QueryClass;

use crate::placeholders::{inline, numbered};
use crate::rows::Rows;
use crate::stats::Stats;

/// sysbench's `sysbench.sql.error` codes.
const RESTART_EVENT: i64 = 1;
const FATAL: i64 = 2;

/// SQLSTATEs sysbench's pgsql driver ignores (the event restarts).
const IGNORABLE: [&str; 3] = ["40P01", "40001", "23505"];

/// What a statement gave, as the FFI returns it: no result set, a result set (in
/// [`LuaCon::rows`]), or a failure (in [`LuaCon::take_failure`]).
pub const NO_ROWS: i32 = 0;
pub const ROWS: i32 = 1;
pub const FAILED: i32 = -1;

/// A failed statement: sysbench's error code, SQLSTATE, message, and the driver's lines to
/// print (unless a hook makes the error ignorable).
#[derive(Debug, Clone)]
pub struct Failure {
    pub errcode: i64,
    pub state: String,
    pub msg: String,
    pub lines: String,
}

/// Where and how the thread's connections connect.
pub struct SqlContext {
    pub config: Config,
    pub stats: Arc<Stats>,
    pub ps_disable: bool,
}

/// A prepared statement: its server-side name (empty: inlined client-side), text, and column
/// count (`None`: it returns no rows).
struct Stmt {
    name: String,
    sql: String,
    ncols: Option<usize>,
}

/// One connection (`drv:connect()`).
pub struct LuaCon {
    ctx: Rc<SqlContext>,
    conn: Option<Connection>,
    stmts: Vec<Stmt>,
    /// the next execute's parameters: their text back to back, and each one's length (-1:
    /// NULL)
    params: Vec<u8>,
    param_lens: Vec<i32>,
    /// the last statement's rows (`rs` in Lua reads them, as sysbench's result set is the
    /// connection's)
    pub rows: Rows,
    failure: Option<Failure>,
}

/// Connects; the error is sysbench's `Connection to database failed` line (already printed).
pub fn connect(ctx: &Rc<SqlContext>) -> Result<LuaCon, String> {
    ctx.stats.sql_used.store(true, Relaxed);
    let conn = Connection::connect_rt(&ctx.config).map_err(|e| {
        println!("FATAL: Connection to database failed: {e}\n");
        "connection creation failed".to_string()
    })?;
    Ok(LuaCon {
        ctx: ctx.clone(),
        conn: Some(conn),
        stmts: Vec::new(),
        params: Vec::with_capacity(256),
        param_lens: Vec::with_capacity(8),
        rows: Rows::default(),
        failure: None,
    })
}

/// A statement's class as sysbench 1.0.20's pgsql driver counts it, from its result: rows
/// returned (even none) are a read; a command that affected rows (its tag's count above 0:
/// `INSERT 0 1`, `UPDATE 3`, `SELECT 5` of a CREATE TABLE AS) a write; anything else (`BEGIN`,
/// `COMMIT`, `CREATE TABLE`, `SET`, an `UPDATE 0`) other.
fn result_class(returns_rows: bool, affected: bool) -> QueryClass {
    if returns_rows {
        QueryClass::Read
    } else if affected {
        QueryClass::Write
    } else {
        QueryClass::Other
    }
}

/// Counts a statement that reached the server as sysbench 1.0.20's driver does: a completed
/// one by its result's class; a failed one (ignorable or not, even one a hook or the script
/// catches) as an error only — in no query class (its `rs->counter` is `SB_CNT_ERROR`).
fn count(stats: &Stats, r: &Result<Option<DbError>, Error>, returns_rows: bool, affected: bool) {
    if r.as_ref().is_ok_and(Option::is_none) {
        match result_class(returns_rows, affected) {
            QueryClass::Read => stats.reads.add(1),
            QueryClass::Write => stats.writes.add(1),
            QueryClass::Other => stats.other.add(1),
        }
    } else {
        stats.errors.add(1);
    }
}

impl LuaCon {
    /// The failure of the last statement that returned [`FAILED`].
    pub fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }

    /// A text parameter for the next execute.
    pub fn param_text(&mut self, v: &[u8]) {
        self.params.extend_from_slice(v);
        self.param_lens.push(v.len() as i32);
    }

    /// An integral number as a parameter (as sysbench's `%d`).
    pub fn param_int(&mut self, v: f64) {
        let at = self.params.len();
        let _ = write!(self.params, "{}", v as i64);
        self.param_lens.push((self.params.len() - at) as i32);
    }

    /// A NULL parameter.
    pub fn param_null(&mut self) {
        self.param_lens.push(-1);
    }

    fn take_params(&mut self) -> Vec<Option<String>> {
        let mut at = 0;
        let out = self
            .param_lens
            .iter()
            .map(|&n| {
                (n >= 0).then(|| {
                    let v = &self.params[at..at + n as usize];
                    at += n as usize;
                    String::from_utf8_lossy(v).into_owned()
                })
            })
            .collect();
        self.clear_params();
        out
    }

    fn clear_params(&mut self) {
        self.params.clear();
        self.param_lens.clear();
    }

    /// Records the outcome of a server error: an ignorable one rolls back; others carry the
    /// driver's lines (`simple`: its `PQexec() failed`, else `PQexecPrepared() failed`).
    fn failed(&mut self, e: DbError, sql: &str, simple: bool) -> i32 {
        if IGNORABLE.contains(&e.code.as_str()) {
            if let Some(c) = self.conn.as_mut() {
                if c.transaction_status() != TransactionStatus::Idle {
                    let _ = pgrig_wire::rt::block_on(c.simple_query("ROLLBACK"));
                }
            }
            return self.fail(RESTART_EVENT, e.code, e.message, String::new());
        }
        let lines = if simple {
            format!(
                "FATAL: PQexec() failed: 7 {}\nFATAL: failed query was: {sql}\n",
                e.message
            )
        } else {
            format!("FATAL: PQexecPrepared() failed: 7 {}\n", e.message)
        };
        self.fail(FATAL, e.code, e.message, lines)
    }

    fn fail(&mut self, errcode: i64, state: String, msg: String, lines: String) -> i32 {
        self.rows.reset(None);
        self.failure = Some(Failure {
            errcode,
            state,
            msg,
            lines,
        });
        FAILED
    }

    fn lost(&mut self, e: Error, sql: &str) -> i32 {
        let lines = format!("FATAL: PQexec() failed: 7 {e}\nFATAL: failed query was: {sql}\n");
        self.fail(FATAL, String::new(), e.to_string(), lines)
    }

    /// The end of a statement: its status, the reply's error recorded.
    fn finish(&mut self, r: Result<Option<DbError>, Error>, sql: &str, simple: bool) -> i32 {
        match r {
            Ok(None) if self.rows.ncols().is_some() => ROWS,
            Ok(None) => NO_ROWS,
            Ok(Some(e)) => self.failed(e, sql, simple),
            Err(e) => self.lost(e, sql),
        }
    }

    /// `con:query(sql)`.
    pub fn query(&mut self, sql: &[u8]) -> i32 {
        let text = String::from_utf8_lossy(sql);
        self.clear_params();
        let Some(c) = self.conn.as_mut() else {
            // sysbench's db_query on a closed connection counts nothing
            return self.lost(Error::Closed, &text);
        };
        c.query(sql);
        let (rows, mut affected) = (&mut self.rows, false);
        let r = pgrig_wire::rt::block_on(async {
            c.send().await?;
            reply(c, rows, true, &mut affected).await
        });
        count(&self.ctx.stats, &r, self.rows.ncols().is_some(), affected);
        self.finish(r, &text, true)
    }

    /// `con:prepare(sql)`: the statement's number, or `None` (printed) when it does not
    /// prepare.
    pub fn prepare(&mut self, sql: &str) -> Option<usize> {
        if self.ctx.ps_disable {
            return Some(self.add(String::new(), sql, None));
        }
        let name = format!("sbstmt{}", self.stmts.len() + 1);
        let (text, n) = numbered(sql);
        self.rows.reset(None);
        let c = self.conn.as_mut()?;
        c.parse(&name, &text, n);
        c.describe_statement(&name);
        c.sync();
        let rows = &mut self.rows;
        let r = pgrig_wire::rt::block_on(async {
            c.send().await?;
            reply(c, rows, false, &mut false).await
        });
        let ncols = self.rows.ncols();
        self.rows.reset(None);
        match r {
            Ok(None) => Some(self.add(name, sql, ncols)),
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

    fn add(&mut self, name: String, sql: &str, ncols: Option<usize>) -> usize {
        self.stmts.push(Stmt {
            name,
            sql: sql.to_string(),
            ncols,
        });
        self.stmts.len() - 1
    }

    /// `stmt:execute()` of statement `id` with the parameters given since the last statement.
    pub fn execute(&mut self, id: usize) -> i32 {
        let Some(s) = self.stmts.get(id) else {
            self.clear_params();
            let msg = "execute of a statement that was not prepared".to_string();
            return self.fail(FATAL, String::new(), msg.clone(), format!("FATAL: {msg}\n"));
        };
        if s.name.is_empty() {
            let sql = s.sql.clone();
            let values = self.take_params();
            return self.query(inline(&sql, &values).as_bytes());
        }
        if self.conn.is_none() {
            let sql = s.sql.clone();
            self.clear_params();
            return self.lost(Error::Closed, &sql);
        }
        let returns_rows = s.ncols.is_some();
        let mut affected = false;
        self.rows.reset(s.ncols);
        let (params, lens, rows) = (&self.params, &self.param_lens, &mut self.rows);
        let r = match self.conn.as_mut() {
            Some(c) => {
                c.bind_with("", &s.name, |w| {
                    let mut at = 0;
                    for &n in lens {
                        if n < 0 {
                            w.null();
                        } else {
                            w.bytes(&params[at..at + n as usize]);
                            at += n as usize;
                        }
                    }
                });
                c.execute("", 0);
                c.sync();
                pgrig_wire::rt::block_on(async {
                    c.send().await?;
                    reply(c, rows, false, &mut affected).await
                })
            }
            None => Err(Error::Closed),
        };
        count(&self.ctx.stats, &r, returns_rows, affected);
        self.clear_params();
        match r {
            Ok(None) if self.rows.ncols().is_some() => ROWS,
            Ok(None) => NO_ROWS,
            other => {
                let sql = self.stmts[id].sql.clone();
                self.finish(other, &sql, false)
            }
        }
    }

    /// `stmt:close()`.
    pub fn close_stmt(&mut self, id: usize) {
        let Some(name) = self.stmts.get_mut(id).map(|s| std::mem::take(&mut s.name)) else {
            return;
        };
        if let (false, Some(c)) = (name.is_empty(), self.conn.as_mut()) {
            c.close_statement(&name);
            c.sync();
            let _ = pgrig_wire::rt::block_on(async {
                c.send().await?;
                c.skip_until_ready().await
            });
        }
    }

    /// `con:disconnect()`.
    pub fn disconnect(&mut self) {
        if let Some(c) = self.conn.take() {
            pgrig_wire::rt::block_on(c.close());
        }
    }

    /// `con:reconnect()`: the error is sysbench's message.
    pub fn reconnect(&mut self) -> Result<(), String> {
        self.disconnect();
        let mut fresh = connect(&self.ctx)?;
        self.conn = fresh.conn.take();
        self.ctx.stats.reconnects.add(1);
        Ok(())
    }
}

impl Drop for LuaCon {
    fn drop(&mut self) {
        self.disconnect();
    }
}

/// Reads a reply up to ReadyForQuery into `rows`, returning its first error. `simple`: a
/// simple-protocol reply, whose row descriptions reset `rows` (the last statement's result set
/// is kept, as sysbench's pgsql driver keeps the last `PGresult`).
async fn reply(
    c: &mut Connection,
    rows: &mut Rows,
    simple: bool,
    affected: &mut bool,
) -> Result<Option<DbError>, Error> {
    let (mut err, mut described) = (None, false);
    if simple {
        rows.reset(None);
    }
    loop {
        let mut copy_in = false;
        while let Some(tag) = c.next_tag()? {
            if matches!(tag, b'1' | b'2' | b'3' | b's' | b't' | b'n') {
                c.skip_message()?;
                continue;
            }
            match c.try_recv()? {
                Some(Backend::DataRow(r)) => rows.push_row(r.iter()),
                Some(Backend::RowDescription(d)) => {
                    rows.reset(Some(d.len()));
                    described = true;
                }
                // the statement that ends here had no row description: no result set
                Some(Backend::CommandComplete(t)) => {
                    *affected = t.rows().is_some_and(|n| n > 0);
                    if simple && !std::mem::take(&mut described) {
                        rows.reset(None)
                    }
                }
                Some(Backend::EmptyQueryResponse) if simple && !std::mem::take(&mut described) => {
                    *affected = false;
                    rows.reset(None)
                }
                Some(Backend::Error(e)) if err.is_none() => err = Some(e.to_db_error()),
                Some(Backend::ReadyForQuery(_)) => return Ok(err),
                Some(Backend::CopyInResponse) => copy_in = true,
                _ => {}
            }
            if copy_in {
                c.copy_fail("COPY FROM STDIN is not supported by sysbench's query()");
                c.send().await?;
                copy_in = false;
            }
        }
        c.read_more().await?;
    }
}
