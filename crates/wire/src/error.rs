//! The crate's single error type.
//!
//! Texts follow libpq's wording where pgbench prints them (connection failures, authentication,
//! lost connections), so a caller can print `{error}` and match what users know from pgbench.

use std::fmt;
use std::io;

use crate::proto::DbError;

/// libpq's text when the server asks for a password and none is known.
pub(crate) const NO_PASSWORD: &str = "fe_sendauth: no password supplied";

/// Everything that can go wrong in pgrig-wire.
#[derive(Debug)]
pub enum Error {
    /// Invalid connection parameters (conninfo string, URI, environment, option values).
    Config(String),
    /// Connection establishment failed for every host tried. `message` is libpq's full text
    /// (`connection to server at "h", port 5432 failed: ...`, one line group per attempt).
    /// `db` holds the server's error when the last attempt was refused by the server
    /// (e.g. authentication failure, unknown database), so callers can look at its SQLSTATE.
    Connect {
        message: String,
        db: Option<Box<DbError>>,
    },
    /// The server reported an error for a command (ErrorResponse).
    Db(Box<DbError>),
    /// Reading from or writing to an established connection failed.
    Io(io::Error),
    /// The server closed the connection unexpectedly.
    Closed,
    /// The server sent something that violates the protocol.
    Protocol(String),
    /// The caller used the API in a way the protocol cannot express (NUL inside a string,
    /// more than 65535 parameters, ...).
    Usage(String),
}

impl Error {
    pub(crate) fn protocol(msg: impl Into<String>) -> Error {
        Error::Protocol(msg.into())
    }

    pub(crate) fn usage(msg: impl Into<String>) -> Error {
        Error::Usage(msg.into())
    }

    pub(crate) fn config(msg: impl Into<String>) -> Error {
        Error::Config(msg.into())
    }

    /// The server error behind this error, if any.
    pub fn db_error(&self) -> Option<&DbError> {
        match self {
            Error::Db(e) => Some(e),
            Error::Connect { db: Some(e), .. } => Some(e),
            _ => None,
        }
    }

    /// The SQLSTATE of the server error behind this error, if any.
    pub fn code(&self) -> Option<&str> {
        self.db_error().map(|e| e.code.as_str())
    }

    /// libpq's `PQconnectionNeedsPassword`: the (last) server tried asked for a password and
    /// none was known, so asking the user for one and connecting again may succeed.
    pub fn needs_password(&self) -> bool {
        match self {
            Error::Connect { message, .. } => message
                .lines()
                .rev()
                .find(|l| !l.starts_with('\t'))
                .is_some_and(|l| l.ends_with(NO_PASSWORD)),
            _ => false,
        }
    }

    /// True when the connection can no longer be used (lost, closed, protocol violation).
    pub fn is_fatal(&self) -> bool {
        match self {
            Error::Io(_) | Error::Closed | Error::Protocol(_) | Error::Connect { .. } => true,
            Error::Db(e) => matches!(e.severity.as_str(), "FATAL" | "PANIC"),
            Error::Config(_) | Error::Usage(_) => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) | Error::Usage(m) => f.write_str(m),
            Error::Connect { message, .. } => f.write_str(message),
            Error::Db(e) => fmt::Display::fmt(e, f),
            Error::Io(e) => write!(f, "could not communicate with server: {}", strerror(e)),
            Error::Closed => f.write_str(
                "server closed the connection unexpectedly\n\
                 \tThis probably means the server terminated abnormally\n\
                 \tbefore or while processing the request.",
            ),
            Error::Protocol(m) => write!(f, "protocol error: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Db(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe => Error::Closed,
            _ => Error::Io(e),
        }
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Error {
        Error::Db(Box::new(e))
    }
}

/// An OS error's text the way C's `strerror` prints it (`pgrig_text::strerror`, re-exported).
pub use pgrig_text::strerror;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_reads_like_libpq() {
        assert!(Error::Closed
            .to_string()
            .starts_with("server closed the connection unexpectedly"));
    }
}
