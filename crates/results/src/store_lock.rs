//! Holding a study in a SQLite store while one process runs it. Two locks, both released by the
//! kernel when the process ends, however it ends, so a killed study never blocks its resume;
//! other studies of the same store lock other bytes and run side by side:
//! - an open-file-description lock on byte `INODE_BASE + study_id` of the store file itself: it
//!   belongs to the file, not to the name, so a hard link or a symbolic link to the store cannot
//!   get round it (`STORE.lock` of another name is another file); it lies far beyond the bytes
//!   SQLite locks, and closing other descriptors of the file does not release it;
//! - a POSIX record lock on byte `study_id` of `STORE.lock` (created 0600 next to the store),
//!   which tells who holds the study: a second process running the same study is refused with
//!   an error naming the holder (pid and command line), or saying that it runs it through
//!   another name of the file.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;

use nix::fcntl::{fcntl, FcntlArg};

use crate::error::StoreError;

/// Where the per-study bytes of the store file's own lock start: 2^40, far beyond the bytes
/// SQLite locks (1 GiB and the 512 bytes after it).
const INODE_BASE: i64 = 1 << 40;

/// The lock; released when dropped (the files are closed).
pub struct StudyLock {
    /// the study id held
    pub id: i64,
    _by_name: File,
    _by_inode: File,
}

/// A lock record for byte `at` of a file.
fn record(kind: libc::c_int, at: i64) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: at as libc::off_t,
        l_len: 1,
        l_pid: 0,
    }
}

/// The text of an OS error as C's strerror gives it.
fn os(e: nix::errno::Errno) -> String {
    pgrig_wire::strerror(&std::io::Error::from(e))
}

fn held(store: &str, study: &str, holder: &str) -> StoreError {
    StoreError::new(
        store,
        format!(
            "study \"{study}\" is being run into this store by {holder}; two runs of one study \
             would repeat its runs: wait for it to finish or stop it (a study resumes where it \
             stopped)"
        ),
    )
}

impl StudyLock {
    /// Takes study `id` of the store at `store` for this process, or says who has it.
    pub fn acquire(store: &str, study: &str, id: i64) -> Result<StudyLock, StoreError> {
        let by_name = lock_by_name(store, study, id)?;
        let by_inode = lock_by_inode(store, study, id)?;
        Ok(StudyLock {
            id,
            _by_name: by_name,
            _by_inode: by_inode,
        })
    }
}

/// Byte `id` of `STORE.lock`, naming the holder when it is taken.
fn lock_by_name(store: &str, study: &str, id: i64) -> Result<File, StoreError> {
    let path = format!("{store}.lock");
    let io = |what: &str, e: std::io::Error| {
        StoreError::new(
            store,
            format!("could not {what} \"{path}\": {}", pgrig_wire::strerror(&e)),
        )
    };
    crate::store_schema::create_private(std::path::Path::new(&path))
        .map_err(|e| io("create", e))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| io("open", e))?;
    let want = record(libc::F_WRLCK, id);
    match fcntl(&file, FcntlArg::F_SETLK(&want)) {
        Ok(_) => Ok(file),
        Err(nix::errno::Errno::EACCES | nix::errno::Errno::EAGAIN) => {
            let mut held_by = record(libc::F_WRLCK, id);
            let holder = match fcntl(&file, FcntlArg::F_GETLK(&mut held_by)) {
                Ok(_) if held_by.l_type != libc::F_UNLCK as libc::c_short => {
                    describe_process(held_by.l_pid)
                }
                _ => "another process".to_string(),
            };
            Err(held(store, study, &holder))
        }
        Err(e) => Err(StoreError::new(
            store,
            format!("could not lock \"{path}\": {}", os(e)),
        )),
    }
}

/// Byte `INODE_BASE + id` of the store file itself, whatever name it was opened by.
fn lock_by_inode(store: &str, study: &str, id: i64) -> Result<File, StoreError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(store)
        .map_err(|e| {
            StoreError::new(
                store,
                format!("could not open it: {}", pgrig_wire::strerror(&e)),
            )
        })?;
    let want = record(libc::F_WRLCK, INODE_BASE.saturating_add(id));
    match fcntl(&file, FcntlArg::F_OFD_SETLK(&want)) {
        Ok(_) => Ok(file),
        Err(nix::errno::Errno::EACCES | nix::errno::Errno::EAGAIN) => Err(held(
            store,
            study,
            "another process, through another name of this file (a hard or symbolic link)",
        )),
        Err(e) => Err(StoreError::new(
            store,
            format!("could not lock it: {}", os(e)),
        )),
    }
}

/// `process 1234 (pgrig study s.toml)`, as far as /proc tells.
fn describe_process(pid: libc::pid_t) -> String {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|s| !s.is_empty());
    match cmd {
        Some(c) => format!("process {pid} ({})", pgrig_wire::mask_passwords(&c)),
        None => format!("process {pid}"),
    }
}
