//! Running `initdb` for a data directory (directly, or to build the cached template in
//! `template`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::binaries::PgBinaries;
use crate::error::{tail_lines, LabError};
use crate::runas::{die_with_parent, RunAs};

/// Runs `initdb` into `data_dir`, which is created first (mode 0700, owned by `runas`).
pub(crate) fn run_initdb(
    bins: &PgBinaries,
    runas: &RunAs,
    data_dir: &Path,
    superuser: &str,
) -> Result<(), LabError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(data_dir)
        .map_err(|e| LabError::io("creating data directory", data_dir, e))?;
    runas.chown(data_dir)?;
    let mut cmd = Command::new(bins.tool("initdb"));
    cmd.arg("-D").arg(data_dir).args([
        "-U",
        superuser,
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
    ]);
    if bins.major() >= 14 {
        cmd.arg("--no-instructions");
    }
    cmd.stdin(Stdio::null())
        .current_dir(data_dir.parent().unwrap_or(Path::new("/")));
    runas.apply(&mut cmd);
    die_with_parent(&mut cmd);
    let out = cmd.output().map_err(|e| LabError::Command {
        what: "running initdb".into(),
        command: format!("{cmd:?}"),
        status: format!("could not start: {e}"),
        output: String::new(),
    })?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        return Err(LabError::Command {
            what: "initdb".into(),
            command: format!("{cmd:?}"),
            status: out.status.to_string(),
            output: tail_lines(&text, 20),
        });
    }
    Ok(())
}
