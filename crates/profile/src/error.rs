//! The profiler's one error type; every message says what failed and what to do about it.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// No perf binary where pgrig looked.
    #[error(
        "cannot profile: perf not found ({what}): install it (Debian: `apt-get install linux-perf`; \
         Ubuntu: `apt-get install linux-tools-$(uname -r)`; Fedora: `dnf install perf`), or set \
         PGRIG_PERF to the perf binary"
    )]
    NotInstalled { what: String },
    /// The kernel refuses to let pgrig sample these processes.
    #[error(
        "cannot profile {what}: perf may not sample them (kernel.perf_event_paranoid is \
         {paranoid}{user}): run pgrig as root (or with CAP_PERFMON and CAP_SYS_PTRACE), or \
         allow it with `sysctl kernel.perf_event_paranoid=1` (-1 to include kernel frames); \
         perf said: {detail}"
    )]
    Forbidden {
        what: String,
        paranoid: String,
        user: String,
        detail: String,
    },
    /// perf failed for another reason.
    #[error("cannot profile {what}: perf failed ({status}): {detail}")]
    Failed {
        what: String,
        status: String,
        detail: String,
    },
    /// perf ran but recorded nothing of these processes.
    #[error(
        "the profile of {what} has no samples: the processes did not run on a CPU while perf \
         recorded ({seconds:.1} s); profile a longer or busier run"
    )]
    NoSamples { what: String, seconds: f64 },
    #[error("cannot profile {0}")]
    Target(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("flame graph: {0}")]
    Render(String),
}

impl ProfileError {
    pub fn io(path: &Path, source: std::io::Error) -> ProfileError {
        ProfileError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
