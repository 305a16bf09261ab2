//! The on-disk layout of one throwaway cluster: `<root>/data` (the data directory),
//! `<root>/sock` (its unix socket directory), `<root>/server.log` and, with TCP, `<root>/pgpass`
//! (the superuser's password for pgrig's own connections); and the files pgrig writes into the
//! data directory (settings include file, pg_hba.conf, extra files).
//!
//! The root belongs to pgrig's account (mode 0700, or 0711 when the server runs as another
//! account, which must pass through it); `data` and `sock` belong to the server's account, mode
//! 0700. So no other account (root aside) can reach the socket or read anything inside, and the
//! server's account cannot replace the log, the password file or the directories themselves.
//! Files pgrig writes into the data directory are opened without following symbolic links.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::LabError;
use crate::options::ServerOptions;
use crate::runas::RunAs;

/// Name of the settings file pgrig writes (and rewrites) inside the data directory.
pub(crate) const PGRIG_CONF: &str = "pgrig.conf";

/// Paths of one cluster.
#[derive(Debug, Clone)]
pub(crate) struct ClusterDir {
    pub root: PathBuf,
    pub data: PathBuf,
    pub sock: PathBuf,
    pub log: PathBuf,
    pub passfile: PathBuf,
}

impl ClusterDir {
    pub fn at(root: PathBuf) -> ClusterDir {
        ClusterDir {
            data: root.join("data"),
            sock: root.join("sock"),
            log: root.join("server.log"),
            passfile: root.join("pgpass"),
            root,
        }
    }

    /// Creates a new, uniquely named cluster root under `base` and its socket directory.
    pub fn create(base: &Path, runas: &RunAs) -> Result<ClusterDir, LabError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::create_dir_all(base)
            .map_err(|e| LabError::io("creating cluster base directory", base, e))?;
        runas.check_traversable(base)?;
        let root = unique_dir(base, "cluster")?;
        let dir = ClusterDir::at(root);
        if runas.switch {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir.root, std::fs::Permissions::from_mode(0o711))
                .map_err(|e| LabError::io("setting permissions", &dir.root, e))?;
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir.sock)
            .map_err(|e| LabError::io("creating socket directory", &dir.sock, e))?;
        runas.chown(&dir.sock)?;
        Ok(dir)
    }

    /// Writes settings, pg_hba.conf and extra files into the (already initialised) data dir.
    pub fn configure(
        &self,
        opts: &ServerOptions,
        port: u16,
        runas: &RunAs,
    ) -> Result<(), LabError> {
        let conf = self.data.join("postgresql.conf");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&conf)
            .map_err(|e| LabError::io("opening postgresql.conf", &conf, e))?;
        writeln!(f, "\ninclude '{PGRIG_CONF}'")
            .map_err(|e| LabError::io("writing postgresql.conf", &conf, e))?;
        self.write_settings(opts, port, runas)?;
        self.write_file("pg_hba.conf", opts.hba_text().as_bytes(), runas)?;
        for (name, contents) in opts.data_files() {
            if name.contains('/') || name.starts_with('.') {
                return Err(LabError::io(
                    "extra file names must be plain file names",
                    self.data.join(&name),
                    std::io::Error::from(std::io::ErrorKind::InvalidInput),
                ));
            }
            self.write_file(&name, &contents, runas)?;
        }
        Ok(())
    }

    /// (Re)writes the settings include file, e.g. with a new port.
    pub fn write_settings(
        &self,
        opts: &ServerOptions,
        port: u16,
        runas: &RunAs,
    ) -> Result<(), LabError> {
        self.write_file(
            PGRIG_CONF,
            opts.conf_lines(port, &self.sock).as_bytes(),
            runas,
        )
    }

    fn write_file(&self, name: &str, contents: &[u8], runas: &RunAs) -> Result<(), LabError> {
        let path = self.data.join(name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| LabError::io("writing file into data directory", &path, e))?;
        f.write_all(contents)
            .map_err(|e| LabError::io("writing file into data directory", &path, e))?;
        runas.chown(&path)
    }

    /// Writes the password file pgrig's own TCP connections use (libpq format, for 127.0.0.1
    /// and localhost on `port`): created anew, mode 0600, owned by pgrig's account.
    pub fn write_passfile(&self, port: u16, user: &str, password: &str) -> Result<(), LabError> {
        let path = &self.passfile;
        let _ = std::fs::remove_file(path); // a port retry writes it again
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| LabError::io("writing the password file", path, e))?;
        let text =
            format!("127.0.0.1:{port}:*:{user}:{password}\nlocalhost:{port}:*:{user}:{password}\n");
        f.write_all(text.as_bytes())
            .map_err(|e| LabError::io("writing the password file", path, e))
    }

    /// Removes the whole cluster directory (errors ignored: it may be gone already).
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Creates `<base>/pgrig-<kind>-<pid>-<n>-<nanos>` with mode 0700 (never reusing a name).
pub(crate) fn unique_dir(base: &Path, kind: &str) -> Result<PathBuf, LabError> {
    use std::os::unix::fs::DirBuilderExt;
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!("pgrig-{kind}-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(LabError::io("creating cluster directory", path, e)),
        }
    }
    Err(LabError::io(
        "creating cluster directory",
        base,
        std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    ))
}

/// Removes leftovers of dead owners under `base`: `pgrig-<kind>-<pid>-*` directories whose
/// creating process is gone, in which no postmaster runs, untouched for a minute. They appear
/// only if a watchdog itself was killed or the machine went down. Errors are ignored.
pub(crate) fn sweep_stale(base: &Path, kind: &str) {
    let prefix = format!("pgrig-{kind}-");
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let owner_alive = !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        let path = entry.path();
        let serving = crate::identity::pid_from_file(&path.join("data"))
            .is_some_and(crate::identity::is_postgres_alive);
        let recent = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age < std::time::Duration::from_secs(60));
        if !owner_alive && !serving && !recent {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Where cluster directories go by default:
/// - `PGRIG_CLUSTER_DIR` if set;
/// - for `fast` (test) clusters, `/dev/shm` when it is a world-writable tmpfs with at least
///   1 GiB free: copying the template and running the server there is ~4x faster than on disk;
/// - else /tmp when root (the server account must be able to traverse every parent), else the
///   system temp dir. Durable (benchmark) clusters therefore always live on disk.
pub(crate) fn default_base_dir(fast: bool) -> PathBuf {
    if let Some(dir) = std::env::var_os("PGRIG_CLUSTER_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    if fast && usable_shm(shm) {
        return shm.to_path_buf();
    }
    if nix::unistd::Uid::effective().is_root() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    }
}

fn usable_shm(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(dir) else {
        return false;
    };
    if !meta.is_dir() || meta.permissions().mode() & 0o1777 != 0o1777 {
        return false;
    }
    // The field types differ between platforms, hence the casts.
    #[allow(clippy::unnecessary_cast)]
    match nix::sys::statvfs::statvfs(dir) {
        Ok(st) => {
            (st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64) >= 1 << 30
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn make(base: &Path, name: &str, age: Duration) -> PathBuf {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let f = std::fs::File::open(&dir).unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
        dir
    }

    #[test]
    fn sweep_removes_only_old_directories_of_dead_owners() {
        let base = unique_dir(&std::env::temp_dir(), "sweeptest").unwrap();
        let hour = Duration::from_secs(3600);
        let dead = dead_pid();
        let stale = make(&base, &format!("pgrig-cluster-{dead}-0-a"), hour);
        let fresh = make(&base, &format!("pgrig-cluster-{dead}-1-b"), Duration::ZERO);
        let live = make(
            &base,
            &format!("pgrig-cluster-{}-2-c", std::process::id()),
            hour,
        );
        let other = make(&base, &format!("something-{dead}"), hour);
        sweep_stale(&base, "cluster");
        assert!(!stale.exists());
        assert!(fresh.exists() && live.exists() && other.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
