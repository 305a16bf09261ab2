//! Output files that hold results (`--json`, reports and their SVGs, exports, `compare -o`,
//! profiles, `-l` logs): private to the user (0600 files, 0700 directories) and written
//! without following a link anyone planted at the name, in a directory others may write to.
//!
//! - [`write`](fn@write): the whole content at once: a new file created with `O_CREAT|O_EXCL|O_NOFOLLOW`
//!   beside the name, then renamed over it (a link at the name is replaced, never followed).
//! - [`check`]: the same checks before anything is measured, so a bad destination is found first.
//! - [`create_streaming`]: a file written while a run lasts (`-l` logs, `capture -o`,
//!   `replay -f -o`): opened with `O_NOFOLLOW|O_NONBLOCK` (a FIFO at the name is refused at
//!   once instead of waiting for a reader) and truncated only once it is known to be the user's
//!   own regular file.
//! - [`create_dir`]: a private directory; an existing one must be a real directory (not a link)
//!   of the user's own.
//!
//! The directory each goes into is opened by walking its path (`at`): a symbolic link on the way
//! is followed only when the user or root owns it, and the file is then made relative to that
//! directory's descriptor.
//!
//! Refused, with an [`std::io::Error`] saying why: a regular file owned by another user (as root
//! too), anything at the name that is not a regular file or a link (directories, FIFOs, devices),
//! a link another user owns in the directory's path, and for streamed files a name with several
//! hard links.

mod at;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use at::{euid, is_type, lstat_at, open_at, refuse};

/// The directory a file named `path` goes into (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The directory `path` goes into, opened by walking its path (see `at`), and the file's name.
fn open_parent(path: &Path) -> io::Result<(OwnedFd, &OsStr)> {
    let name = path.file_name().ok_or_else(|| refuse("names no file"))?;
    Ok((at::open_dir_path(parent(path), false)?, name))
}

/// What may stand at `name` in `dir`: nothing, a link (replaced, not followed), or a regular
/// file of the user's own.
fn check_entry(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    match lstat_at(dir.as_fd(), name)? {
        None => Ok(()),
        Some(st) if is_type(&st, libc::S_IFLNK) => Ok(()),
        Some(st) if is_type(&st, libc::S_IFDIR) => Err(refuse("is a directory")),
        Some(st) if !is_type(&st, libc::S_IFREG) => {
            Err(refuse("is not a regular file; refusing to replace it"))
        }
        Some(st) if st.st_uid != euid() => {
            Err(refuse("belongs to another user; refusing to replace it"))
        }
        Some(_) => Ok(()),
    }
}

/// What may stand at an output's name: nothing, a link (replaced, not followed), or a regular
/// file of the user's own; and its directory must be reachable without a link another user
/// owns.
pub fn check_existing(path: &Path) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    check_entry(&dir, name)
}

/// A new, private, never-before-existing file in `dir` beside `base`, and its name.
fn create_temp(dir: &OwnedFd, base: &OsStr) -> io::Result<(File, OsString)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    loop {
        let mut name = OsString::from(".");
        name.push(base);
        name.push(format!(
            ".pgrig-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        match open_at(dir.as_fd(), &name, flags, 0o600) {
            Ok(fd) => return Ok((File::from(fd), name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Checks, before a run, that [`write`](fn@write) could put a file at `path`: what stands there now
/// ([`check_existing`]) and that the directory takes a new file (one is created and removed).
pub fn check(path: &Path) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    check_entry(&dir, name)?;
    let (_, tmp) = create_temp(&dir, name)?;
    at::unlink_at(dir.as_fd(), &tmp)
}

/// Writes `bytes` as the file `path`: private (0600), through a new file beside it renamed over
/// the name, so a link at the name is replaced and never followed.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    check_entry(&dir, name)?;
    let (mut f, tmp) = create_temp(&dir, name)?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| at::rename_at(dir.as_fd(), &tmp, name));
    if written.is_err() {
        let _ = at::unlink_at(dir.as_fd(), &tmp);
    }
    written
}

/// Opens `path` for writing while a run lasts: created private (0600) if new; an existing one
/// must be the user's own regular file with one link, and is truncated. A link at the name is
/// refused (`O_NOFOLLOW`), dangling or not; so is a FIFO or device, at once (checked before
/// the open, and the open is non-blocking, so a FIFO without a reader cannot hold it).
pub fn create_streaming(path: &Path) -> io::Result<File> {
    let (dir, name) = open_parent(path)?;
    if let Some(st) = lstat_at(dir.as_fd(), name)? {
        if !is_type(&st, libc::S_IFREG) && !is_type(&st, libc::S_IFLNK) {
            return Err(refuse("is not a regular file"));
        }
    }
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let fd = open_at(dir.as_fd(), name, flags, 0o600).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => refuse("is a symbolic link; refusing to follow it"),
        Some(libc::ENXIO) => refuse("is not a regular file"),
        _ => e,
    })?;
    let f = File::from(fd);
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
    at::set_blocking(&f)?;
    f.set_len(0)?;
    Ok(f)
}

/// Creates the directory `dir` private (0700) with its missing parents; an existing `dir` must
/// be a directory (not a link to one) owned by the user.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let Some(name) = dir.file_name() else {
        return at::open_dir_path(dir, false).map(drop);
    };
    let parent = at::open_dir_path(parent(dir), true)?;
    at::mkdir_at(parent.as_fd(), name)?;
    match lstat_at(parent.as_fd(), name)? {
        Some(st) if is_type(&st, libc::S_IFLNK) => {
            Err(refuse("is a symbolic link; refusing to follow it"))
        }
        Some(st) if !is_type(&st, libc::S_IFDIR) => Err(refuse("is not a directory")),
        Some(st) if st.st_uid != euid() => {
            Err(refuse("belongs to another user; refusing to write into it"))
        }
        Some(_) => Ok(()),
        None => Err(io::Error::from(io::ErrorKind::NotFound)),
    }
}
