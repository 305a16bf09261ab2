//! Output files that hold results (`--json`, reports and their SVGs, exports, `compare -o`,
//! profiles, `-l` logs): private to the user (0600 files, 0700 directories) and written
//! without following a link anyone planted at the name, in a directory others may write to.
//!
//! - [`write`]: the whole content at once: a new file created with `O_CREAT|O_EXCL|O_NOFOLLOW`
//!   beside the name, then renamed over it (a link at the name is replaced, never followed).
//! - [`check`]: the same checks before anything is measured, so a bad destination is found first.
//! - [`create_streaming`]: a file written while a run lasts (`-l` logs): opened with
//!   `O_NOFOLLOW` and truncated only once it is known to be the user's own regular file.
//! - [`create_dir`]: a private directory; an existing one must be a real directory (not a link)
//!   of the user's own.
//!
//! Refused, with an [`std::io::Error`] saying why: a regular file owned by another user (as root
//! too), anything at the name that is not a regular file or a link (directories, FIFOs, devices),
//! and for streamed files a name with several hard links.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A refusal; the callers' messages name the path.
fn refuse(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why.to_string())
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What may stand at an output's name: nothing, a link (replaced, not followed), or a regular
/// file of the user's own.
pub fn check_existing(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => Ok(()),
        Ok(m) if m.is_dir() => Err(refuse("is a directory")),
        Ok(m) if !m.is_file() => Err(refuse("is not a regular file; refusing to replace it")),
        Ok(m) if m.uid() != euid() => {
            Err(refuse("belongs to another user; refusing to replace it"))
        }
        Ok(_) => Ok(()),
    }
}

/// The directory a file named `path` goes into (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A new, private, never-before-existing file beside `path`, and its name.
fn create_temp(path: &Path) -> io::Result<(File, PathBuf)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let base = path.file_name().ok_or_else(|| refuse("names no file"))?;
    loop {
        let mut name = OsString::from(".");
        name.push(base);
        name.push(format!(
            ".pgrig-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = parent(path).join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Checks, before a run, that [`write`] could put a file at `path`: what stands there now
/// ([`check_existing`]) and that the directory takes a new file (one is created and removed).
pub fn check(path: &Path) -> io::Result<()> {
    check_existing(path)?;
    let (_, tmp) = create_temp(path)?;
    std::fs::remove_file(tmp)
}

/// Writes `bytes` as the file `path`: private (0600), through a new file beside it renamed over
/// the name, so a link at the name is replaced and never followed.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    check_existing(path)?;
    let (mut f, tmp) = create_temp(path)?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Opens `path` for writing while a run lasts: created private (0600) if new; an existing one
/// must be the user's own regular file with one link, and is truncated. A link at the name is
/// refused (`O_NOFOLLOW`), dangling or not.
pub fn create_streaming(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse("is a symbolic link; refusing to follow it"),
            _ => e,
        })?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(refuse("is not a regular file"));
    }
    if m.uid() != euid() {
        return Err(refuse("belongs to another user; refusing to overwrite it"));
    }
    if m.nlink() > 1 {
        return Err(refuse("has other hard links; refusing to overwrite it"));
    }
    f.set_len(0)?;
    Ok(f)
}

/// Creates the directory `dir` private (0700) with its missing parents; an existing `dir` must
/// be a directory (not a link to one) owned by the user.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(refuse("is a symbolic link; refusing to follow it"))
        }
        Ok(m) if !m.is_dir() => Err(refuse("is not a directory")),
        Ok(m) if m.uid() != euid() => {
            Err(refuse("belongs to another user; refusing to write into it"))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir),
        Err(e) => Err(e),
    }
}
