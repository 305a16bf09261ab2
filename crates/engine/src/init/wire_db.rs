//! [`InitDb`] on a `pgrig_wire::Connection`: simple-protocol statements, first-value queries,
//! COPY FROM STDIN driven message by message, and notices in libpq's printed form.

use pgrig_wire::{Backend, Connection};

use super::db::{Connector, DbFailure, DbResult, InitDb};
use crate::config::ConnArgs;

/// CopyData messages are flushed to the socket once this much is queued.
const SEND_AT: usize = 64 * 1024;

fn failure(e: pgrig_wire::Error) -> DbFailure {
    DbFailure::new(e.to_string())
}

/// Opens connections with the resolved parameters of `-h -p -U -d` and the environment.
pub struct WireConnector {
    config: pgrig_wire::Config,
}

impl WireConnector {
    pub fn new(conn: &ConnArgs) -> DbResult<Self> {
        let args = pgrig_wire::ConnArgs {
            host: conn.host.clone(),
            port: conn.port.clone(),
            user: conn.user.clone(),
            dbname: conn.dbname.clone(),
        };
        let config = pgrig_wire::Config::from_args(&args, "pgbench").map_err(failure)?;
        Ok(WireConnector { config })
    }
}

impl Connector for WireConnector {
    type Db = WireDb;

    async fn connect(&self) -> DbResult<WireDb> {
        let conn = Connection::connect(&self.config).await.map_err(failure)?;
        Ok(WireDb { conn })
    }
}

pub struct WireDb {
    conn: Connection,
}

impl InitDb for WireDb {
    fn server_version_num(&self) -> i32 {
        self.conn.server_version_num()
    }

    async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute_simple(sql).await.map_err(failure)
    }

    async fn query_value(&mut self, sql: &str) -> DbResult<Option<String>> {
        let results = self.conn.simple_query(sql).await.map_err(failure)?;
        Ok(results
            .first()
            .and_then(|r| r.rows.first())
            .and_then(|row| row.get(0))
            .map(str::to_owned))
    }

    async fn copy_start(&mut self, sql: &str) -> DbResult<()> {
        self.conn.query(sql.as_bytes());
        self.conn.send().await.map_err(failure)?;
        loop {
            match self.conn.recv().await.map_err(failure)? {
                Backend::CopyInResponse => return Ok(()),
                Backend::Error(e) => {
                    let e = e.to_db_error();
                    self.conn.skip_until_ready().await.map_err(failure)?;
                    return Err(DbFailure::new(e.to_string()));
                }
                Backend::ReadyForQuery(_) => {
                    return Err(DbFailure::new(
                        "the statement did not start COPY FROM STDIN",
                    ))
                }
                _ => {}
            }
        }
    }

    async fn copy_data(&mut self, data: &[u8]) -> DbResult<()> {
        for piece in data.chunks(SEND_AT) {
            self.conn.copy_data(piece);
            if self.conn.pending_bytes() >= SEND_AT {
                self.conn.send().await.map_err(failure)?;
            }
        }
        Ok(())
    }

    async fn copy_end(&mut self) -> DbResult<()> {
        self.conn.copy_done();
        self.conn.send().await.map_err(failure)?;
        let mut error = None;
        loop {
            match self.conn.recv().await.map_err(failure)? {
                Backend::Error(e) => {
                    error.get_or_insert_with(|| e.to_db_error());
                }
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(DbFailure::new(e.to_string())),
            None => Ok(()),
        }
    }

    fn take_notices(&mut self) -> Vec<String> {
        self.conn
            .take_notices()
            .into_iter()
            .map(|n| n.to_string())
            .collect()
    }
}
