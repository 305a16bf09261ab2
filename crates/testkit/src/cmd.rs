//! Running external programs from tests: finding the installed pgbench (the differential
//! oracle), and running a command to completion with stdout, stderr and exit status captured.

use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

/// What a finished command produced.
#[derive(Debug, Clone)]
pub struct CmdOutput {
    pub status: ExitStatus,
    /// Exit code, `None` if killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl CmdOutput {
    /// True if the command exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }
}

/// Runs `cmd` to completion (stdin closed), capturing stdout and stderr.
///
/// # Panics
/// If the program cannot be started at all (a test set-up error).
pub fn run(mut cmd: Command) -> CmdOutput {
    cmd.stdin(Stdio::null());
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("pgrig-testkit: cannot run {cmd:?}: {e}"),
    };
    CmdOutput {
        status: out.status,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The installed sysbench 1.0.20, the sysbench drop-in's differential oracle: `PGRIG_SYSBENCH`,
/// else `/usr/bin/sysbench`.
///
/// # Panics
/// When it is not installed: a differential test without its oracle fails.
pub fn sysbench_oracle() -> PathBuf {
    let p = PathBuf::from(std::env::var("PGRIG_SYSBENCH").unwrap_or("/usr/bin/sysbench".into()));
    assert!(
        p.exists(),
        "sysbench 1.0.20 (the oracle of these tests) is not installed at {}: apt-get install sysbench (./test does)",
        p.display()
    );
    p
}

/// The installed pgbench (for differential tests): `PGRIG_PGBENCH` if set, else the one next to
/// the server binaries, else `/usr/bin/pgbench`, else the first on PATH.
pub fn pgbench_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGRIG_PGBENCH") {
        return Some(PathBuf::from(p));
    }
    let mut candidates = Vec::new();
    if let Ok(bins) = pgrig_lab::PgBinaries::discover() {
        candidates.push(bins.tool("pgbench"));
    }
    candidates.push(PathBuf::from("/usr/bin/pgbench"));
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("pgbench")));
    }
    candidates.into_iter().find(|p| is_executable(p))
}

/// The pgbench that differential tests compare with ([`pgbench_path()`]).
///
/// # Panics
/// When no pgbench is installed: a differential test without its oracle must fail, not pass.
pub fn pgbench_oracle() -> PathBuf {
    pgbench_path().unwrap_or_else(|| {
        panic!(
            "pgrig-testkit: the differential oracle pgbench is not installed \
             (install pgbench 15, Debian package postgresql-client-15, or set PGRIG_PGBENCH)"
        )
    })
}

fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}
