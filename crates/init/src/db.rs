//! What the init steps need from a database connection, as a small trait: the seam between
//! the steps (and future datasets) and the wire driver (`wire_db`).

use std::future::Future;

/// A failed command: libpq-like text (`ERROR:  ...`, no trailing newline) and whether the
/// connection is gone.
#[derive(Debug, Clone, PartialEq)]
pub struct DbFailure {
    pub message: String,
}

impl DbFailure {
    pub fn new(message: impl Into<String>) -> Self {
        DbFailure {
            message: message.into(),
        }
    }
}

pub type DbResult<T> = Result<T, DbFailure>;

/// One connection used by the init steps.
pub trait InitDb {
    /// `PQserverVersion`, e.g. 150004.
    fn server_version_num(&self) -> i32;
    /// Runs a command that returns no rows (`PGRES_COMMAND_OK`).
    fn execute(&mut self, sql: &str) -> impl Future<Output = DbResult<()>>;
    /// Runs a query and returns the first column of its first row (`None` when no row / NULL).
    fn query_value(&mut self, sql: &str) -> impl Future<Output = DbResult<Option<String>>>;
    /// Sends `COPY ... FROM STDIN` and waits until the server is ready for data.
    fn copy_start(&mut self, sql: &str) -> impl Future<Output = DbResult<()>>;
    /// Sends one chunk of COPY data (whole lines).
    fn copy_data(&mut self, data: &[u8]) -> impl Future<Output = DbResult<()>>;
    /// Ends COPY and waits for the command's completion.
    fn copy_end(&mut self) -> impl Future<Output = DbResult<()>>;
    /// Notices received since the last call, as libpq prints them (`NOTICE:  ...`).
    fn take_notices(&mut self) -> Vec<String>;
}

/// Opens further connections (parallel loading, concurrent index builds).
pub trait Connector {
    type Db: InitDb;
    fn connect(&self) -> impl Future<Output = DbResult<Self::Db>>;
}
