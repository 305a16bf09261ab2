//! The one error type of the replay layer: a message worded as pgreplay words it (the caller
//! prints it on standard error as is and exits with status 1, as pgreplay does).

use std::fmt;

/// A parse, replay-file or replay failure; the text is pgreplay's message for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl Error {
    pub fn new(msg: impl Into<String>) -> Error {
        Error(msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}
