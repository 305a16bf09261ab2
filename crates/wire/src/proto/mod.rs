//! Sans-IO protocol core: message encoding, borrowed backend-message parsing, the read buffer,
//! the startup/authentication state machine and session tracking. No sockets here, so every
//! piece is testable with byte vectors and any I/O backend (tokio today, io_uring tomorrow) can
//! drive it.

pub mod backend;
pub mod db_error;
pub mod error_position;
pub mod frontend;
pub mod read_buf;
pub mod session;
pub mod startup;

#[cfg(test)]
mod backend_tests;
#[cfg(test)]
pub(crate) mod test_util;

pub use backend::{
    Authentication, Backend, Column, CommandTag, DataRow, ParameterDescription, RowDescription,
    TransactionStatus,
};
pub use db_error::{DbError, ErrorFields};
pub use frontend::ParamWriter;
pub use read_buf::ReadBuf;
pub use session::Session;
pub use startup::{AuthMethod, Startup, Step};
