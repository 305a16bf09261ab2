//! Knowing a postmaster again. `postmaster.pid` is written by the server's account and can say
//! anything, and a pid alone can be reused, so pgrig records the postmaster it started as pid
//! plus the kernel's start time of that process, and checks before any signal that the process
//! with that pid still started then, is a `postgres` owned by the server's account and serves
//! the expected data directory.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::read_private;

/// A process as the kernel knows it: pid and start time (clock ticks after boot, field 22 of
/// `/proc/<pid>/stat`). A reused pid has a later start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    pub start_time: u64,
}

impl ProcessId {
    /// The running process `pid`, if there is one.
    pub fn of(pid: u32) -> Option<ProcessId> {
        let stat = Stat::read(pid)?;
        Some(ProcessId {
            pid,
            start_time: stat.start_time,
        })
    }

    /// True while this very process lives (not a zombie) as a `postgres` owned by `uid` whose
    /// command line names `data` as its data directory.
    pub fn is_postmaster_of(&self, uid: u32, data: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Some(stat) = Stat::read(self.pid) else {
            return false;
        };
        if stat.start_time != self.start_time
            || stat.comm != "postgres"
            || matches!(stat.state, 'Z' | 'X')
        {
            return false;
        }
        let owner = std::fs::metadata(format!("/proc/{}", self.pid)).map(|m| m.uid());
        owner.is_ok_and(|o| o == uid) && serves(self.pid, data)
    }
}

/// A live `postgres` owned by `uid` serving `data`, as named by its `postmaster.pid` (only ever
/// used to decide not to delete a directory, never to signal).
pub(crate) fn serving_postmaster(uid: u32, data: &Path) -> Option<u32> {
    let pid = pid_from_file(data)?;
    let id = ProcessId::of(pid)?;
    id.is_postmaster_of(uid, data).then_some(pid)
}

/// The postmaster pid recorded in the data directory, if any.
pub(crate) fn pid_from_file(data: &Path) -> Option<u32> {
    let bytes = read_private(&data.join("postmaster.pid")).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().next()?.trim().parse().ok()
}

/// True if `pid` is a live (not zombie) process named `postgres`.
pub(crate) fn is_postgres_alive(pid: u32) -> bool {
    Stat::read(pid).is_some_and(|s| s.comm == "postgres" && s.state != 'Z' && s.state != 'X')
}

/// True if the command line of `pid` is `... -D <data> ...`.
fn serves(pid: u32, data: &Path) -> bool {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = bytes.split(|b| *b == 0).collect();
    args.windows(2)
        .any(|w| w[0] == b"-D" && w[1] == data.as_os_str().as_encoded_bytes())
}

/// The fields of `/proc/<pid>/stat` pgrig uses.
pub(crate) struct Stat {
    pub comm: String,
    pub state: char,
    pub ppid: u32,
    pub start_time: u64,
}

impl Stat {
    pub fn read(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text[open + 1..close].to_string();
        // After the comm: state is field 3 of the whole line, ppid 4, starttime 22.
        let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
        Some(Stat {
            comm,
            state: rest.first()?.chars().next()?,
            ppid: rest.get(1)?.parse().ok()?,
            start_time: rest.get(19)?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_has_a_stable_identity_that_is_not_a_postmaster() {
        let me = ProcessId::of(std::process::id()).unwrap();
        assert_eq!(ProcessId::of(std::process::id()), Some(me));
        assert!(!me.is_postmaster_of(0, Path::new("/nonexistent")));
        let older = ProcessId {
            start_time: me.start_time.wrapping_sub(1),
            ..me
        };
        assert!(older != me);
    }
}
