//! Creating data directories: `initdb` directly, or a copy of a cached initdb'ed template.
//!
//! `initdb` takes ~0.8 s on a small box; copying its result takes ~0.1 s. Templates are cached
//! per (bin dir, version, superuser, server account) under `<base>/pgrig-templates-<euid>/`,
//! built in a private directory and renamed into place, so concurrent builders never see a
//! half-made template.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::binaries::PgBinaries;
use super::error::{tail_lines, LabError};
use super::runas::RunAs;

const COMPLETE_MARKER: &str = "pgrig-template-complete";

/// Runs `initdb` into `data_dir` (whose parent must be writable by `runas`).
pub(crate) fn run_initdb(
    bins: &PgBinaries,
    runas: &RunAs,
    data_dir: &Path,
    superuser: &str,
) -> Result<(), LabError> {
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
    cmd.env_remove("PGDATA")
        .stdin(Stdio::null())
        .current_dir(data_dir.parent().unwrap_or(Path::new("/")));
    runas.apply(&mut cmd);
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

/// Makes a fresh data directory at `data_dir` (which must not exist) from a cached template,
/// building the template first if needed.
pub(crate) fn data_dir_from_template(
    bins: &PgBinaries,
    runas: &RunAs,
    base: &Path,
    data_dir: &Path,
    superuser: &str,
) -> Result<(), LabError> {
    let template = ensure_template(bins, runas, base, superuser)?;
    copy_tree(&template.join("data"), data_dir, runas)
}

fn template_root(base: &Path) -> PathBuf {
    base.join(format!("pgrig-templates-{}", nix::unistd::Uid::effective()))
}

fn ensure_template(
    bins: &PgBinaries,
    runas: &RunAs,
    base: &Path,
    superuser: &str,
) -> Result<PathBuf, LabError> {
    let root = template_root(base);
    let key = fnv1a(&[
        bins.bin_dir().as_os_str().as_encoded_bytes(),
        bins.version().as_bytes(),
        superuser.as_bytes(),
        runas.uid.to_string().as_bytes(),
    ]);
    let dir = root.join(format!("pg{}-{key:016x}", bins.major()));
    if dir.join(COMPLETE_MARKER).exists() {
        return Ok(dir);
    }
    create_private_dir_all(&root)?;
    super::cluster_dir::sweep_stale(&root, "build");
    let tmp = super::cluster_dir::unique_dir(&root, "build")?;
    let result = (|| {
        runas.chown(&tmp)?;
        run_initdb(bins, runas, &tmp.join("data"), superuser)?;
        std::fs::write(tmp.join(COMPLETE_MARKER), bins.version())
            .map_err(|e| LabError::io("writing template marker", &tmp, e))?;
        match std::fs::rename(&tmp, &dir) {
            Ok(()) => Ok(()),
            // Someone else finished first: use theirs.
            Err(_) if dir.join(COMPLETE_MARKER).exists() => Ok(()),
            Err(e) => Err(LabError::io("installing initdb template", &dir, e)),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result.map(|()| dir)
}

/// Creates `dir` (mode 0755) unless it exists; refuses one owned by another user, since its
/// contents become our clusters.
fn create_private_dir_all(dir: &Path) -> Result<(), LabError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new()
        .mode(0o755)
        .recursive(true)
        .create(dir)
    {
        Ok(()) => {}
        Err(e) => return Err(LabError::io("creating template cache", dir, e)),
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| LabError::io("checking template cache", dir, e))?;
    if !meta.is_dir() || meta.uid() != nix::unistd::Uid::effective().as_raw() {
        return Err(LabError::io(
            "template cache is not a directory owned by us (remove it or set PGRIG_NO_TEMPLATE=1)",
            dir,
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    }
    Ok(())
}

/// Recursively copies `from` to `to` (which must not exist), giving everything to `runas`.
fn copy_tree(from: &Path, to: &Path, runas: &RunAs) -> Result<(), LabError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(to)
        .map_err(|e| LabError::io("creating data directory", to, e))?;
    runas.chown(to)?;
    let entries = std::fs::read_dir(from).map_err(|e| LabError::io("reading template", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LabError::io("reading template", from, e))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| LabError::io("reading template", &src, e))?;
        if kind.is_dir() {
            copy_tree(&src, &dst, runas)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src)
                .map_err(|e| LabError::io("reading template link", &src, e))?;
            std::os::unix::fs::symlink(&target, &dst)
                .map_err(|e| LabError::io("copying template link", &dst, e))?;
            runas.chown(&dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| LabError::io("copying template file", &dst, e))?;
            runas.chown(&dst)?;
        }
    }
    Ok(())
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(std::iter::once(&0u8)) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}
