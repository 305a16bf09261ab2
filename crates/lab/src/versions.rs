//! Finding the server binaries of one major version (a study's `server_version` matrix key):
//! `PGRIG_PG<N>_BINDIR` (e.g. `PGRIG_PG18_BINDIR`), then `PGRIG_PG_BINDIR`, `initdb`/`postgres`
//! on PATH, `pg_config --bindir` and `/usr/lib/postgresql/<N>/bin` — each used only when its
//! `postgres --version` reports that major version.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::binaries::{find_on_path, PgBinaries};

/// The environment variable naming major version `major`'s binary directory.
pub fn env_var(major: u32) -> String {
    format!("PGRIG_PG{major}_BINDIR")
}

/// The binaries of major version `major`, or a description of every place looked at (with
/// the version found there, if any) for the error message.
pub fn find_major(major: u32) -> Result<PgBinaries, String> {
    let mut looked = Vec::new();
    for (what, dir) in candidates(major) {
        let Some(dir) = dir else {
            looked.push(format!("{what} (none)"));
            continue;
        };
        match PgBinaries::in_dir(&dir) {
            Ok(b) if b.major() == major => return Ok(b),
            Ok(b) => looked.push(format!(
                "{what} = {} (PostgreSQL {})",
                dir.display(),
                b.major()
            )),
            Err(_) => looked.push(format!(
                "{what} = {} (no initdb and postgres)",
                dir.display()
            )),
        }
    }
    Err(looked.join(", "))
}

/// Where major version `major` may be, in search order, each with how it was found.
fn candidates(major: u32) -> Vec<(String, Option<PathBuf>)> {
    let var = env_var(major);
    let mut out = vec![
        (var.clone(), std::env::var_os(&var).map(PathBuf::from)),
        (
            "PGRIG_PG_BINDIR".to_string(),
            std::env::var_os("PGRIG_PG_BINDIR").map(PathBuf::from),
        ),
    ];
    let on_path = find_on_path("postgres")
        .and_then(|p| p.canonicalize().ok()?.parent().map(Path::to_path_buf));
    out.push(("PATH".to_string(), on_path));
    let pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    out.push(("pg_config --bindir".to_string(), pg_config));
    let debian = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
    out.push((debian.display().to_string(), Some(debian)));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_version_nowhere_installed_lists_every_place_looked_at() {
        let e = super::find_major(3).unwrap_err();
        for place in [
            "PGRIG_PG3_BINDIR",
            "PGRIG_PG_BINDIR",
            "PATH",
            "/usr/lib/postgresql/3/bin",
        ] {
            assert!(e.contains(place), "{e}");
        }
    }
}
