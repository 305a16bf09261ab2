//! The one error type of the lab's server management, with messages that say what failed,
//! which command ran and what the server log said.

use std::path::PathBuf;

/// Everything that can go wrong while finding, starting, using or stopping a cluster.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// No usable `initdb` + `postgres` pair was found.
    #[error(
        "PostgreSQL server binaries (initdb, postgres) not found; searched: {searched}. \
         Install the Debian package `postgresql` (apt-get install postgresql), or point \
         PGRIG_PG_BINDIR at the directory holding initdb and postgres"
    )]
    NoBinaries { searched: String },

    /// An external command could not be run or exited unsuccessfully.
    #[error("{what} failed: `{command}` {status}{}", tail_suffix(output))]
    Command {
        what: String,
        command: String,
        status: String,
        output: String,
    },

    /// A file-system operation failed.
    #[error("{what} ({}): {source}", path.display())]
    Io {
        what: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The unprivileged account that runs the server could not be resolved.
    #[error(
        "cannot run PostgreSQL as user `{name}`: {reason} (initdb/postgres refuse to run as \
         root; set PGRIG_SERVER_USER to an existing unprivileged user)"
    )]
    User { name: String, reason: String },

    /// The postmaster did not come up.
    #[error("PostgreSQL server did not start: {reason}; log {}{}", log.display(), tail_suffix(log_tail))]
    StartFailed {
        reason: String,
        log: PathBuf,
        log_tail: String,
    },

    /// A `psql` invocation failed.
    #[error(
        "psql on database `{db}` failed ({status}) running: {sql}{}",
        tail_suffix(stderr)
    )]
    Psql {
        db: String,
        sql: String,
        status: String,
        stderr: String,
    },

    /// The detached-server state file is missing, unreadable or inconsistent.
    #[error("server state {}: {reason}", path.display())]
    State { path: PathBuf, reason: String },
}

fn tail_suffix(text: &str) -> String {
    let t = text.trim();
    if t.is_empty() {
        String::new()
    } else {
        format!("\n--- output (tail) ---\n{t}")
    }
}

impl LabError {
    pub(crate) fn io(
        what: impl Into<String>,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        LabError::Io {
            what: what.into(),
            path: path.into(),
            source,
        }
    }
}

/// The last `lines` lines of `text` (for error messages).
pub(crate) fn tail_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let start = all.len().saturating_sub(lines);
    all[start..].join("\n")
}

/// The last `lines` lines of a file, or a note that it could not be read.
pub(crate) fn file_tail(path: &std::path::Path, lines: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => tail_lines(&String::from_utf8_lossy(&bytes), lines),
        Err(e) => format!("(could not read {}: {e})", path.display()),
    }
}
