//! Finding the PostgreSQL server binaries: `PGRIG_PG_BINDIR`, then `initdb`/`postgres` on PATH,
//! then `pg_config --bindir`, then the newest `/usr/lib/postgresql/*/bin`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::error::LabError;

/// A directory holding a matching `initdb` and `postgres`, and the version they report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBinaries {
    bin_dir: PathBuf,
    version: String,
    major: u32,
}

impl PgBinaries {
    /// Finds the server binaries (see the module doc for the search order). The answer is
    /// cached for the life of the process.
    pub fn discover() -> Result<PgBinaries, LabError> {
        static FOUND: OnceLock<Result<PgBinaries, String>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let mut searched = Vec::new();
                let found = candidate_dirs(&mut searched).find_map(|dir| Self::probe(&dir));
                found.ok_or_else(|| searched.join(", "))
            })
            .clone()
            .map_err(|searched| LabError::NoBinaries { searched })
    }

    /// Uses the binaries in `dir`, which must hold `initdb` and `postgres`.
    pub fn in_dir(dir: &Path) -> Result<PgBinaries, LabError> {
        Self::probe(dir).ok_or_else(|| LabError::NoBinaries {
            searched: dir.display().to_string(),
        })
    }

    fn probe(dir: &Path) -> Option<PgBinaries> {
        let dir = dir.canonicalize().ok()?;
        if !is_executable(&dir.join("initdb")) || !is_executable(&dir.join("postgres")) {
            return None;
        }
        let out = Command::new(dir.join("postgres"))
            .arg("--version")
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let major = parse_major(&version)?;
        Some(PgBinaries {
            bin_dir: dir,
            version,
            major,
        })
    }

    /// The directory holding the binaries (symlinks resolved).
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// What `postgres --version` printed, e.g. `postgres (PostgreSQL) 15.18 (Debian ...)`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The release part of [`Self::version`], e.g. `15.18 (Debian ...)`.
    pub fn release(&self) -> &str {
        release_of(&self.version)
    }

    /// The major version, e.g. 15.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// Path of a tool in the bin dir (`initdb`, `postgres`, `psql`, `pgbench`, ...).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// `psql` from the bin dir, else the first on PATH.
    pub fn psql(&self) -> PathBuf {
        let own = self.tool("psql");
        if is_executable(&own) {
            own
        } else {
            find_on_path("psql").unwrap_or(own)
        }
    }
}

/// Candidate directories in search order, computed lazily (pg_config only runs if needed).
/// `searched` collects a description of each source for the error message.
fn candidate_dirs(searched: &mut Vec<String>) -> impl Iterator<Item = PathBuf> + '_ {
    let sources: [fn() -> Vec<PathBuf>; 4] = [
        || {
            std::env::var_os("PGRIG_PG_BINDIR")
                .map(PathBuf::from)
                .into_iter()
                .collect()
        },
        || {
            ["initdb", "postgres"]
                .iter()
                .filter_map(|name| find_on_path(name))
                .filter_map(|p| p.canonicalize().ok()?.parent().map(Path::to_path_buf))
                .collect()
        },
        || match Command::new("pg_config").arg("--bindir").output() {
            Ok(out) if out.status.success() => {
                vec![PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())]
            }
            _ => Vec::new(),
        },
        debian_bin_dirs,
    ];
    let names = [
        "PGRIG_PG_BINDIR",
        "PATH",
        "pg_config --bindir",
        "/usr/lib/postgresql/*/bin",
    ];
    sources
        .into_iter()
        .zip(names)
        .flat_map(move |(source, name)| {
            searched.push(name.to_string());
            source()
        })
}

/// `/usr/lib/postgresql/<major>/bin`, newest first.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, p)| p).collect()
}

pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// `15.18 (Debian ...)` from `postgres (PostgreSQL) 15.18 (Debian ...)`; other text unchanged.
pub fn release_of(version: &str) -> &str {
    version
        .strip_prefix("postgres (PostgreSQL) ")
        .unwrap_or(version)
}

/// Major version from `postgres (PostgreSQL) 15.18 (...)` or `... 16beta1`.
fn parse_major(version: &str) -> Option<u32> {
    let word = version
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    let digits: String = word.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parse_major;

    #[test]
    fn parses_major_version_from_release_and_beta_strings() {
        assert_eq!(
            parse_major("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            Some(15)
        );
        assert_eq!(parse_major("postgres (PostgreSQL) 17beta2"), Some(17));
        assert_eq!(parse_major("postgres (PostgreSQL) 9.6.24"), Some(9));
        assert_eq!(parse_major("garbage"), None);
    }
}
