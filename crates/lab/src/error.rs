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

    /// The postmaster did not come up. `log` is `None` when the log went with the cluster
    /// directory (a failed first start removes everything); its tail is in the message.
    #[error(
        "PostgreSQL server did not start: {reason}; {}{}",
        log_note(log),
        tail_suffix(log_tail)
    )]
    StartFailed {
        reason: String,
        log: Option<PathBuf>,
        log_tail: String,
    },

    /// A server option that cannot work or would break the configuration.
    #[error("invalid {option}: {reason}")]
    Option { option: String, reason: String },

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

fn log_note(log: &Option<PathBuf>) -> String {
    match log {
        Some(path) => format!("log {}", path.display()),
        None => "server log (removed with the cluster directory)".into(),
    }
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
    /// For a failed first start: the cluster directory (and the log in it) is removed, so the
    /// message must not send anyone to the log file; its tail is in the message already.
    pub(crate) fn log_removed(self) -> Self {
        match self {
            LabError::StartFailed {
                reason, log_tail, ..
            } => LabError::StartFailed {
                reason,
                log: None,
                log_tail,
            },
            other => other,
        }
    }

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

/// Reads a file in a directory the server's account may write, without following a symbolic
/// link planted at its name (which could make pgrig, maybe root, show another file).
pub(crate) fn read_private(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The last `lines` lines of a file, or a note that it could not be read.
pub(crate) fn file_tail(path: &std::path::Path, lines: usize) -> String {
    match read_private(path) {
        Ok(bytes) => tail_lines(&String::from_utf8_lossy(&bytes), lines),
        Err(e) => format!("(could not read {}: {e})", path.display()),
    }
}
