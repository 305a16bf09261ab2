//! The few statements `prepare`, `cleanup` and `run`'s checks send themselves, on one blocking
//! pgrig-wire connection made as sysbench's driver makes it (`--pgsql-*`).

use pgrig_wire::{Config, Connection, DbError, Error};

use super::general::{Exit, Pg, Phase};

pub struct Db {
    rt: tokio::runtime::Runtime,
    conn: Option<Connection>,
}

impl Db {
    /// Connects; a failure is sysbench's `FATAL: Connection to database failed: ...`.
    pub fn connect(pg: &Pg, phase: Phase) -> Result<Db, Exit> {
        let failed = |e: &dyn std::fmt::Display| {
            let msg = format!("Connection to database failed: {e}\n");
            phase.failed(&msg, "connection creation failed")
        };
        let cfg = Config::from_args(&pg.conn_args(), "").map_err(|e| failed(&e))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Exit::fatal(format!("could not start a runtime: {e}")))?;
        let conn = rt
            .block_on(Connection::connect(&cfg))
            .map_err(|e| failed(&e))?;
        Ok(Db {
            rt,
            conn: Some(conn),
        })
    }

    /// The server's version as it reported it at connection.
    pub fn server_version(&self) -> String {
        (self.conn.as_ref()).map_or(String::new(), |c| c.server_version().to_string())
    }

    /// Runs one statement, results ignored.
    pub fn exec(&mut self, sql: &str) -> Result<(), Error> {
        let conn = self.conn.as_mut().ok_or(Error::Closed)?;
        self.rt.block_on(conn.simple_query(sql)).map(drop)
    }

    /// Whether `sql` prepares (the server's error, with the text for its `LINE` context, if
    /// not): sysbench prepares every statement before its threads start.
    pub fn prepare_error(&mut self, sql: &str, params: u16) -> Result<Option<DbError>, Error> {
        let conn = self.conn.as_mut().ok_or(Error::Closed)?;
        conn.parse("", sql, params);
        conn.sync();
        self.rt
            .block_on(async {
                conn.send().await?;
                conn.skip_until_ready().await
            })
            .map(|e| e.map(|e| e.with_query(sql)))
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.rt.block_on(c.close());
        }
    }
}

/// sysbench's report of a failed statement run with `PQexec` (its driver's three FATAL lines).
pub fn exec_failed(sql: &str, e: &Error) -> Exit {
    let (state, msg) = match e {
        Error::Db(d) => (d.code.clone(), d.message.clone()),
        other => (String::new(), other.to_string()),
    };
    Exit::fatal(format!(
        "PQexec() failed: 7 {msg}\nFATAL: failed query was: {sql}\nFATAL: `sysbench.cmdline.call_command' function failed: SQL error, errno = 0, state = '{state}': {msg}"
    ))
}
