//! pgrig-wire: a lean PostgreSQL client for benchmarking.
//!
//! * [`config`]: connection parameters resolved like libpq (`-h -p -U -d`, conninfo strings,
//!   URIs, `PG*` environment variables, `.pgpass`).
//! * [`proto`]: the sans-IO protocol core (encoding, borrowed parsing, startup/auth).
//! * [`Connection`]: the thin tokio adapter with an allocation-free hot path.
//! * [`rt`]: pgrig's own single-threaded runtime that benchmark connections move onto.

pub mod config;
mod conn;
mod error;
pub mod proto;
pub mod quote;
pub mod rt;

pub use config::{mask_passwords, Config, ConnArgs, Environment, Host, ProcessEnv, SslMode};
pub use conn::{
    Addr, CancelToken, Connection, CopyIn, NoticeHandler, Notices, QueryResult, SimpleRow,
};
pub use error::{strerror, Error};
pub use proto::{
    Backend, DataRow, DbError, ErrorFields, ParamWriter, RowDescription, TransactionStatus,
};
