//! Holding a study in a SQLite store while one process runs it: a POSIX record lock on byte
//! `study_id` of `STORE.lock` (created 0600 next to the store). The kernel releases it when the
//! process ends, however it ends, so a killed study never blocks its resume; other studies of
//! the same store lock other bytes and run side by side. A second process running the same
//! study is refused with an error naming the holder (pid and command line).

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;

use nix::fcntl::{fcntl, FcntlArg};

use crate::error::StudyError;

/// The lock; released when dropped (the file is closed).
pub struct StudyLock {
    _file: File,
}

/// A lock record for byte `id` of the file.
fn record(kind: libc::c_int, id: i64) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: id as libc::off_t,
        l_len: 1,
        l_pid: 0,
    }
}

impl StudyLock {
    /// Takes study `id` of the store at `store` for this process, or says who has it.
    pub fn acquire(store: &str, study: &str, id: i64) -> Result<StudyLock, StudyError> {
        let path = format!("{store}.lock");
        crate::store_schema::create_private(std::path::Path::new(&path))
            .map_err(|e| StudyError::store(store, format!("could not create \"{path}\": {e}")))?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| StudyError::store(store, format!("could not open \"{path}\": {e}")))?;
        let want = record(libc::F_WRLCK, id);
        match fcntl(&file, FcntlArg::F_SETLK(&want)) {
            Ok(_) => Ok(StudyLock { _file: file }),
            Err(nix::errno::Errno::EACCES | nix::errno::Errno::EAGAIN) => {
                let mut held = record(libc::F_WRLCK, id);
                let holder = match fcntl(&file, FcntlArg::F_GETLK(&mut held)) {
                    Ok(_) if held.l_type != libc::F_UNLCK as libc::c_short => {
                        describe_process(held.l_pid)
                    }
                    _ => "another process".to_string(),
                };
                Err(StudyError::store(
                    store,
                    format!(
                        "study \"{study}\" is being run into this store by {holder}; two runs of \
                         one study would repeat its runs: wait for it to finish or stop it (a \
                         study resumes where it stopped)"
                    ),
                ))
            }
            Err(e) => Err(StudyError::store(
                store,
                format!("could not lock \"{path}\": {e}"),
            )),
        }
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
