//! A small blocking SQL client for the study's own statements (settings, collectors, setup
//! files), on pgrig-wire with a private current-thread runtime. Never on the benchmark path.

use pgrig_wire::{Config, Connection};

use crate::error::StudyError;

pub struct Db {
    rt: tokio::runtime::Runtime,
    conn: Option<Connection>,
    /// What the connection goes to (for messages; never contains a password).
    pub label: String,
}

/// Rows of text values (`None` = NULL).
pub type Rows = Vec<Vec<Option<String>>>;

impl Db {
    /// Connects with a conninfo string or URI.
    pub fn connect(conninfo: &str, label: &str) -> Result<Db, StudyError> {
        let cfg = Config::parse(conninfo)
            .map_err(|e| StudyError::sql(format!("connecting to {label}"), e))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StudyError::Other(format!("could not start a runtime: {e}")))?;
        let conn = rt
            .block_on(Connection::connect(&cfg))
            .map_err(|e| StudyError::sql(format!("connecting to {label}"), e))?;
        Ok(Db {
            rt,
            conn: Some(conn),
            label: label.to_string(),
        })
    }

    /// Runs `sql` (one or more statements); the rows of the last statement that returned any.
    pub fn query(&mut self, sql: &str) -> Result<Rows, StudyError> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| StudyError::Other("connection closed".into()))?;
        let results = self
            .rt
            .block_on(conn.simple_query(sql))
            .map_err(|e| StudyError::sql(format!("on {}", self.label), e))?;
        Ok(results
            .into_iter()
            .rev()
            .find(|r| !r.columns.is_empty())
            .map(|r| r.rows.into_iter().map(|row| row.0).collect())
            .unwrap_or_default())
    }

    /// Runs one statement as it is (with `COPY … FROM STDIN`, sends `copy_data`); the driver's
    /// error as it is, for callers that place it themselves.
    pub fn execute(&mut self, sql: &str, copy_data: Option<&str>) -> Result<(), pgrig_wire::Error> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(pgrig_wire::Error::Closed);
        };
        match copy_data {
            Some(data) => self
                .rt
                .block_on(conn.copy_in(sql, [data.as_bytes()]))
                .map(drop),
            None => self.rt.block_on(conn.simple_query(sql)).map(drop),
        }
    }

    /// The first column of the first row, if any.
    pub fn scalar(&mut self, sql: &str) -> Result<Option<String>, StudyError> {
        Ok(self
            .query(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .flatten())
    }

    /// The runtime and the connection, for a caller that drives the protocol itself (the
    /// query studies' measured executions); None once the connection is gone.
    pub(crate) fn parts(&mut self) -> Option<(&tokio::runtime::Runtime, &mut Connection)> {
        let conn = self.conn.as_mut()?;
        Some((&self.rt, conn))
    }

    /// `server_version_num` of the server.
    pub fn version_num(&self) -> i32 {
        self.conn
            .as_ref()
            .map(|c| c.server_version_num())
            .unwrap_or(0)
    }

    /// `server_version` as the server reports it.
    pub fn version(&self) -> String {
        self.conn
            .as_ref()
            .map(|c| c.server_version().to_string())
            .unwrap_or_default()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.rt.block_on(c.close());
        }
    }
}

pub use pgrig_wire::quote::{ident, literal as lit};
