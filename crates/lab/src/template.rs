//! The cached template cluster: `initdb` takes ~0.8 s on a small box, copying its result ~0.1 s.
//! Templates are cached per (bin dir, version, superuser, server account) under
//! `<base>/pgrig-templates-<euid>/`, built in a private directory and renamed into place, so
//! concurrent builders never see a half-made template.
//!
//! The server's account must not be able to change what later clusters inherit: once initdb
//! (run as that account) is done, the template is given to pgrig's own account and nothing in it
//! may be writable by group or others. Before every use the whole tree is checked (owner, modes,
//! only directories and regular files); a template that fails is discarded and built again.
//! Copies are made privately and handed to the server's account only when complete, and only
//! when the copy's digest is the one recorded at build time (`template_digest`): a template
//! changed after it was built, even with owner and modes intact, is discarded and built again.
//! At build time initdb's `postgresql.auto.conf` must hold nothing but its header.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::unistd::{Gid, Uid};

use crate::binaries::PgBinaries;
use crate::error::LabError;
use crate::initdb::run_initdb;
use crate::runas::RunAs;
use crate::template_digest;
use crate::watchdog::Watchdog;

const COMPLETE_MARKER: &str = "pgrig-template-complete";

/// Makes a fresh data directory at `data_dir` (which must not exist) from a cached template,
/// building the template first if needed (or again, if it was tampered with).
pub(crate) fn data_dir_from_template(
    bins: &PgBinaries,
    runas: &RunAs,
    base: &Path,
    data_dir: &Path,
    superuser: &str,
) -> Result<(), LabError> {
    for attempt in 0..2 {
        let template = ensure_template(bins, runas, base, superuser)?;
        copy_tree(&template.join("data"), data_dir)?;
        let recorded = std::fs::read_to_string(template.join(COMPLETE_MARKER)).unwrap_or_default();
        let copied = template_digest::digest(data_dir)
            .map_err(|e| LabError::io("checking the template's copy", data_dir, e))?;
        if recorded.lines().nth(1) == Some(copied.as_str()) {
            return chown_tree(data_dir, runas);
        }
        // Changed since it was built: never hand it on; build it again once.
        let _ = std::fs::remove_dir_all(data_dir);
        let _ = std::fs::remove_dir_all(&template);
        if attempt == 1 {
            return Err(LabError::io(
                "checking the initdb template (its contents changed after it was built)",
                &template,
                std::io::Error::from(std::io::ErrorKind::PermissionDenied),
            ));
        }
    }
    unreachable!("the loop returns")
}

fn template_root(base: &Path) -> PathBuf {
    base.join(format!("pgrig-templates-{}", Uid::effective()))
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
        // the template's format: its marker records the digest (templates of earlier builds
        // of pgrig, which other processes may still be using, live under other names)
        b"digest-v1",
    ]);
    let dir = root.join(format!("pg{}-{key:016x}", bins.major()));
    create_private_dir_all(&root)?;
    if dir.join(COMPLETE_MARKER).exists() {
        if untouched(&dir).is_ok() {
            return Ok(dir);
        }
        // Changed behind our back: never hand it on. (A concurrent builder may be removing it
        // too; if it cannot be removed, the check after the build below fails clearly.)
        let _ = std::fs::remove_dir_all(&dir);
    }
    crate::cluster_dir::sweep_stale(&root, "build");
    let tmp = crate::cluster_dir::unique_dir(&root, "build")?;
    let watchdog = Watchdog::spawn(&tmp)?;
    let result = build(bins, runas, &tmp, superuser).and_then(|()| {
        match std::fs::rename(&tmp, &dir) {
            Ok(()) => Ok(()),
            // Someone else finished first: use theirs.
            Err(_) if dir.join(COMPLETE_MARKER).exists() => Ok(()),
            Err(e) => Err(LabError::io("installing initdb template", &dir, e)),
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    watchdog.dismiss("done");
    result?;
    untouched(&dir).map_err(|why| {
        LabError::io(
            format!("checking the initdb template ({why})"),
            &dir,
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        )
    })?;
    Ok(dir)
}

/// initdb into `<tmp>/data` as the server's account, then take the result back.
fn build(bins: &PgBinaries, runas: &RunAs, tmp: &Path, superuser: &str) -> Result<(), LabError> {
    if runas.switch {
        set_mode(tmp, 0o711)?; // the server's account must reach <tmp>/data
    }
    let data = tmp.join("data");
    run_initdb(bins, runas, &data, superuser)?;
    let me = RunAs {
        name: String::new(),
        uid: Uid::effective().as_raw(),
        gid: Gid::effective().as_raw(),
        switch: runas.switch,
    };
    chown_tree(&data, &me)?;
    template_digest::auto_conf_is_pristine(&data).map_err(|why| {
        LabError::io(
            format!("checking the initdb template ({why}; did another process of the server's account write it?)"),
            &data,
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        )
    })?;
    let digest = template_digest::digest(&data)
        .map_err(|e| LabError::io("reading the initdb template", &data, e))?;
    std::fs::write(
        tmp.join(COMPLETE_MARKER),
        format!("{}\n{digest}\n", bins.version()),
    )
    .map_err(|e| LabError::io("writing template marker", tmp, e))
}

/// Ok if every entry of the template is a directory or regular file of ours that no one else
/// may write; else a description of the first that is not.
fn untouched(dir: &Path) -> Result<(), String> {
    let me = Uid::effective().as_raw();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta =
            std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let kind = meta.file_type();
        if meta.uid() != me || meta.mode() & 0o022 != 0 || !(kind.is_dir() || kind.is_file()) {
            return Err(format!(
                "{} has owner {} and mode {:o}",
                path.display(),
                meta.uid(),
                meta.mode()
            ));
        }
        if kind.is_dir() {
            let entries =
                std::fs::read_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            for entry in entries {
                stack.push(entry.map_err(|e| e.to_string())?.path());
            }
        }
    }
    Ok(())
}

/// Creates `dir` (mode 0711: the server's account passes through to build) unless it exists;
/// refuses one owned by another user or writable by others, since its contents become our
/// clusters.
fn create_private_dir_all(dir: &Path) -> Result<(), LabError> {
    std::fs::DirBuilder::new()
        .mode(0o711)
        .recursive(true)
        .create(dir)
        .map_err(|e| LabError::io("creating template cache", dir, e))?;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| LabError::io("checking template cache", dir, e))?;
    if !meta.is_dir() || meta.uid() != Uid::effective().as_raw() || meta.mode() & 0o022 != 0 {
        return Err(LabError::io(
            "template cache is not a directory owned by us that only we can write (remove it \
             or set PGRIG_NO_TEMPLATE=1)",
            dir,
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    }
    Ok(())
}

/// Recursively copies `from` (checked: directories and regular files only) to `to`, which must
/// not exist; everything stays ours until [`chown_tree`].
fn copy_tree(from: &Path, to: &Path) -> Result<(), LabError> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(to)
        .map_err(|e| LabError::io("creating data directory", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| LabError::io("reading template", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LabError::io("reading template", from, e))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| LabError::io("reading template", &src, e))?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| LabError::io("copying template file", &dst, e))?;
        }
    }
    Ok(())
}

/// Gives `dir` and everything below it (no link followed) to `runas`, when we are root.
fn chown_tree(dir: &Path, runas: &RunAs) -> Result<(), LabError> {
    if !runas.switch {
        return Ok(());
    }
    runas.chown(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| LabError::io("reading data dir", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LabError::io("reading data dir", dir, e))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            chown_tree(&entry.path(), runas)?;
        } else {
            runas.chown(&entry.path())?;
        }
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), LabError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| LabError::io("setting permissions", path, e))
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
