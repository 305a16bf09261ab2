//! The directory an output goes into, opened without trusting links others planted: its path is
//! walked one name at a time (`openat` with `O_NOFOLLOW|O_DIRECTORY`), and a symbolic link on
//! the way is followed only when it belongs to the user or to root (the trust the kernel's
//! `protected_symlinks` gives); a link another account owns is refused, naming it. Everything
//! after that is done relative to the directory's descriptor, so the directory cannot be
//! swapped for another between the checks and the write. Also the few `*at` calls the outputs
//! need, as safe wrappers.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Links followed in one path at most (Linux's own limit).
const MAX_LINKS: u32 = 40;

/// A refusal; the callers' messages name the path.
pub(crate) fn refuse(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why.into())
}

pub(crate) fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| refuse("holds a NUL byte"))
}

fn fd_result(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

fn zero(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `openat(dir, name, flags, mode)`.
pub(crate) fn open_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: `c` is a valid C string; `dir` is an open descriptor for the call's duration.
    fd_result(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    })
}

/// Status of `name` in `dir` without following a link (`None`: nothing there).
pub(crate) fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<libc::stat>> {
    let c = cstr(name)?;
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string, open descriptor, `st` is writable and sized for the call.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match zero(rc) {
        Ok(()) => Ok(Some(st)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn is_type(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
}

/// `renameat(dir, from, dir, to)`.
pub(crate) fn rename_at(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    // SAFETY: valid C strings and an open descriptor.
    zero(unsafe { libc::renameat(dir.as_raw_fd(), f.as_ptr(), dir.as_raw_fd(), t.as_ptr()) })
}

/// `unlinkat(dir, name, 0)`.
pub(crate) fn unlink_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: valid C string and an open descriptor.
    zero(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) })
}

/// `mkdirat(dir, name, 0700)`; an existing entry is left for the caller to check.
pub(crate) fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: valid C string and an open descriptor.
    match zero(unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o700) }) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        other => other,
    }
}

/// Clears `O_NONBLOCK` on `f` (opened non-blocking so a FIFO cannot hold the open).
pub(crate) fn set_blocking(f: &File) -> io::Result<()> {
    // SAFETY: fcntl on an open descriptor with integer arguments.
    let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    zero(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) })
}

fn open_dir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    open_at(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )
}

fn cwd() -> io::Result<OwnedFd> {
    // SAFETY: AT_FDCWD is always a valid directory argument.
    let here = unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) };
    open_dir(here, OsStr::new("."))
}

fn root() -> io::Result<OwnedFd> {
    // SAFETY: AT_FDCWD is always a valid directory argument.
    let here = unsafe { BorrowedFd::borrow_raw(libc::AT_FDCWD) };
    open_dir(here, OsStr::new("/"))
}

/// Opens directory `path` (missing directories created 0700 when `create`), following only
/// links that belong to the user or root.
pub(crate) fn open_dir_path(path: &Path, create: bool) -> io::Result<OwnedFd> {
    let mut links = 0;
    walk(cwd()?, path, create, &mut PathBuf::new(), &mut links)
}

/// Walks `path` from `start`; `shown` is the path walked so far (for messages).
fn walk(
    start: OwnedFd,
    path: &Path,
    create: bool,
    shown: &mut PathBuf,
    links: &mut u32,
) -> io::Result<OwnedFd> {
    let mut dir = start;
    for comp in path.components() {
        match comp {
            Component::RootDir => {
                dir = root()?;
                shown.push("/");
            }
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                dir = open_dir(dir.as_fd(), OsStr::new(".."))?;
                shown.push("..");
            }
            Component::Normal(name) => {
                shown.push(name);
                dir = step(dir, name, create, shown, links)?;
            }
        }
    }
    Ok(dir)
}

/// One name of a walk: a directory is entered, a trusted link resolved, a missing directory
/// made when `create`.
fn step(
    dir: OwnedFd,
    name: &OsStr,
    create: bool,
    shown: &mut PathBuf,
    links: &mut u32,
) -> io::Result<OwnedFd> {
    match open_dir(dir.as_fd(), name) {
        Ok(fd) => Ok(fd),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
            mkdir_at(dir.as_fd(), name)?;
            open_dir(dir.as_fd(), name)
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
            let st = lstat_at(dir.as_fd(), name)?.ok_or(e)?;
            if !is_type(&st, libc::S_IFLNK) {
                return Err(refuse(format!("{} is not a directory", shown.display())));
            }
            if st.st_uid != euid() && st.st_uid != 0 {
                return Err(refuse(format!(
                    "{} is a symbolic link another user owns; refusing to follow it",
                    shown.display()
                )));
            }
            *links += 1;
            if *links > MAX_LINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            let target = read_link_at(dir.as_fd(), name)?;
            walk(dir, &target, false, shown, links)
        }
        Err(e) => Err(e),
    }
}

fn read_link_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<PathBuf> {
    let c = cstr(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: valid C string, open descriptor, `buf` writable for its length.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(PathBuf::from(OsStr::from_bytes(&buf)))
}
