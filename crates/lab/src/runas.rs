//! Which OS account runs initdb and postgres.
//!
//! initdb and postgres refuse to run as root. When we are root, they run as an unprivileged
//! account instead: `PGRIG_SERVER_USER` if set, else [`SERVER_ACCOUNT`], an account pgrig creates
//! for the purpose on first use (a system account with no home, no login shell, its own group,
//! used by nothing else; never `nobody`, which other daemons run as and which would then reach
//! the server through its `trust` socket). The data and socket directories are chowned to that
//! account, and the cluster lives under /tmp so it can traverse to it. When we are not root,
//! everything runs as us.
//!
//! Server commands get a minimal, explicit environment (nothing of pgrig's own: no `PG*`, no
//! credentials), so `COPY ... FROM PROGRAM 'env'` on the server shows only what is set here.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use nix::unistd::{Gid, Uid, User};

use crate::error::LabError;

/// The account scratch servers run as when pgrig runs as root and `PGRIG_SERVER_USER` is not
/// set: created on first use ([`server_account`]).
pub const SERVER_ACCOUNT: &str = "pgrig-server";

fn lookup(name: &str) -> Result<Option<User>, LabError> {
    User::from_name(name).map_err(|e| LabError::User {
        name: name.to_string(),
        reason: format!("user lookup failed: {e}"),
    })
}

/// [`SERVER_ACCOUNT`], created when missing: `useradd --system`, no home, `nologin`, its own
/// group. Threads of this process create it one at a time; another process creating it at the
/// same time (useradd then finds `/etc/passwd` locked or the name taken) is waited for, up to
/// 10 s.
fn server_account() -> Result<User, LabError> {
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = CREATING.lock().unwrap_or_else(|e| e.into_inner());
    let useradd = ["/usr/sbin/useradd", "/sbin/useradd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("useradd");
    let mut why = String::new();
    for _ in 0..100 {
        if let Some(user) = lookup(SERVER_ACCOUNT)? {
            return Ok(user);
        }
        let out = Command::new(useradd)
            .args(["--system", "--no-create-home", "--home-dir", "/nonexistent"])
            .args(["--shell", "/usr/sbin/nologin", "--user-group"])
            .args([
                "--comment",
                "pgrig scratch PostgreSQL servers",
                SERVER_ACCOUNT,
            ])
            .output();
        match out {
            Ok(o) if o.status.success() => continue,
            Ok(o) => why = String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(e) => {
                why = format!("{useradd} could not run: {e}");
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if let Some(user) = lookup(SERVER_ACCOUNT)? {
        return Ok(user);
    }
    Err(LabError::User {
        name: SERVER_ACCOUNT.to_string(),
        reason: format!(
            "it does not exist and could not be created ({why}); create it, or set \
             PGRIG_SERVER_USER to an unprivileged account used for nothing else"
        ),
    })
}

/// The account the server processes run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// True when we are root and must switch to `uid`/`gid` for server commands.
    pub switch: bool,
}

impl RunAs {
    /// Resolves the account for the current process.
    pub fn resolve() -> Result<RunAs, LabError> {
        if !Uid::effective().is_root() {
            let uid = Uid::effective();
            let name = User::from_uid(uid)
                .ok()
                .flatten()
                .map(|u| u.name)
                .unwrap_or_else(|| uid.to_string());
            return Ok(RunAs {
                name,
                uid: uid.as_raw(),
                gid: Gid::effective().as_raw(),
                switch: false,
            });
        }
        let (name, user) = match std::env::var("PGRIG_SERVER_USER") {
            Ok(name) => {
                let user = lookup(&name)?.ok_or_else(|| LabError::User {
                    name: name.clone(),
                    reason: "no such user".into(),
                })?;
                (name, user)
            }
            Err(_) => (SERVER_ACCOUNT.to_string(), server_account()?),
        };
        if user.uid.is_root() {
            return Err(LabError::User {
                name,
                reason: "it is root".into(),
            });
        }
        Ok(RunAs {
            name,
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            switch: true,
        })
    }

    /// Makes `cmd` run as this account (std also clears supplementary groups when root sets
    /// uid) with the minimal server environment.
    pub fn apply(&self, cmd: &mut Command) {
        if self.switch {
            cmd.uid(self.uid).gid(self.gid);
        }
        cmd.env_clear();
        for (key, value) in server_env() {
            cmd.env(key, value);
        }
    }

    /// Checks that this account can reach `dir` (execute permission on every ancestor), so a
    /// bad base directory (e.g. under /root) fails with a clear message instead of a server
    /// log full of "permission denied".
    pub fn check_traversable(&self, dir: &Path) -> Result<(), LabError> {
        use std::os::unix::fs::MetadataExt;
        if !self.switch {
            return Ok(());
        }
        for ancestor in dir.ancestors() {
            let Ok(meta) = std::fs::metadata(ancestor) else {
                continue;
            };
            let mode = meta.mode();
            let ok = mode & 0o001 != 0
                || (meta.uid() == self.uid && mode & 0o100 != 0)
                || (meta.gid() == self.gid && mode & 0o010 != 0);
            if !ok {
                return Err(LabError::User {
                    name: self.name.clone(),
                    reason: format!(
                        "it cannot enter {} (needed to reach {}); put clusters under /tmp \
                         (PGRIG_CLUSTER_DIR or ServerOptions::base_dir)",
                        ancestor.display(),
                        dir.display()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Gives `path` (not following symlinks) to this account, when we are root.
    pub fn chown(&self, path: &Path) -> Result<(), LabError> {
        if !self.switch {
            return Ok(());
        }
        std::os::unix::fs::lchown(path, Some(self.uid), Some(self.gid))
            .map_err(|e| LabError::io("changing owner for the server user", path, e))
    }
}

/// The whole environment of server processes: a fixed `PATH`, the C locale (initdb runs with
/// `--locale=C`), and `TZ`/`LD_LIBRARY_PATH` when pgrig has them (initdb picks its `timezone`
/// setting from `TZ`; relocated builds may need their library path).
pub(crate) fn server_env() -> Vec<(String, std::ffi::OsString)> {
    let mut env = vec![
        ("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("LANG".to_string(), "C".into()),
        ("LC_ALL".to_string(), "C".into()),
    ];
    for key in ["TZ", "LD_LIBRARY_PATH"] {
        if let Some(value) = std::env::var_os(key) {
            env.push((key.to_string(), value));
        }
    }
    env
}

/// Makes a short-lived helper (initdb, single-user postgres) die with the thread that waits for
/// it, so killing pgrig does not leave it writing into a directory the watchdog is removing.
/// Set after the uid switch (a credential change would clear it).
pub(crate) fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
