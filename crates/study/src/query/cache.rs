//! `cache = "cold"`: before every measured execution the throwaway server is restarted (its
//! shared buffers are empty) and the operating system's page cache is dropped (`sync`, then
//! `3` into `/proc/sys/vm/drop_caches`), so the data is read from the disk again. Only root may
//! drop the page cache, and a cluster on a memory file system (tmpfs) has no disk to read
//! from: both are refused with the reason before anything runs.

use std::io::Write;
use std::path::Path;

use crate::error::StudyError;
use crate::managed::Managed;

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Whether this process may drop the page cache; the reason when not.
pub fn permitted() -> Result<(), String> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .map(drop)
        .map_err(|e| {
            format!(
                "cache = \"cold\" drops the OS page cache through {DROP_CACHES}, which this process may not write ({e}; \
                 it needs root, and a container may mount /proc/sys read-only); run pgrig as root or use cache = \"warm\""
            )
        })
}

/// Restarts the throwaway server and drops the OS page cache.
pub fn make_cold(m: &mut Managed) -> Result<(), StudyError> {
    if let Some(server) = &m.server {
        on_disk(server.data_dir())?;
    }
    m.restart()?;
    nix::unistd::sync();
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .and_then(|mut f| f.write_all(b"3\n"))
        .map_err(|e| {
            StudyError::Refused(format!(
                "could not drop the OS page cache ({DROP_CACHES}): {e}"
            ))
        })
}

/// Refuses a data directory on tmpfs, where dropping caches cannot make reads come from a disk.
fn on_disk(data: &Path) -> Result<(), StudyError> {
    match nix::sys::statfs::statfs(data) {
        Ok(fs) if fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC => Err(StudyError::Refused(format!(
            "cache = \"cold\": the throwaway server's data ({}) is on a memory file system (tmpfs), which has no disk to read from; \
             set fast = false or PGRIG_CLUSTER_DIR to a directory on a disk",
            data.display()
        ))),
        _ => Ok(()),
    }
}
