//! Detached servers for `pgrig server start|stop|status`: a cluster that outlives the command
//! that started it, found again through a small JSON state file (`<state_dir>/server.json`).
//!
//! Nothing in the state directory is trusted before it is checked: the directory must belong to
//! the effective user and be writable by no one else, the state file is created anew (no
//! symbolic link followed) and renamed into place, and what it names is validated before pgrig
//! signals or deletes anything: the cluster root is a `pgrig-cluster-*` directory owned by the
//! server's account with the usual layout, and the postmaster is the very process started then
//! (pid and start time, see `identity`), never whatever `postmaster.pid` says.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use nix::unistd::Uid;

use super::cluster::Server;
use super::error::LabError;
use super::identity::serving_postmaster;
use super::info::ServerInfo;
use super::options::ServerOptions;
use super::process::{self, StopMode};
use super::runas::RunAs;

const STATE_FILE: &str = "server.json";

/// A detached server and whether its postmaster is alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub info: ServerInfo,
    pub running: bool,
}

/// `$XDG_RUNTIME_DIR/pgrig` if that is set, else `<temp dir>/pgrig-<uid>`.
pub fn default_state_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("pgrig"),
        _ => std::env::temp_dir().join(format!("pgrig-{}", Uid::effective())),
    }
}

/// Starts a server that keeps running after this process exits and records it in `state_dir`.
/// Fails if a recorded server is still running; a stale record is cleaned up. Until the state
/// is written, the watchdog removes everything if this process dies (e.g. during initdb).
pub fn start_detached(state_dir: &Path, opts: ServerOptions) -> Result<ServerInfo, LabError> {
    if let Some(st) = status(state_dir)? {
        if st.running {
            return Err(LabError::State {
                path: state_path(state_dir),
                reason: format!(
                    "a server is already running (pid {}, port {}); stop it first",
                    st.info.pid.unwrap_or(0),
                    st.info.port
                ),
            });
        }
        stop(state_dir)?;
    }
    ensure_state_dir(state_dir)?;
    let server = Server::start(opts)?;
    write_state(state_dir, &server.info())?; // on error `server` drops here and is cleaned up
    Ok(server.into_detached())
}

/// Stops and removes the recorded server. Returns its info, or `None` if nothing was recorded.
pub fn stop(state_dir: &Path) -> Result<Option<ServerInfo>, LabError> {
    let Some(info) = read_state(state_dir)? else {
        return Ok(None);
    };
    let path = state_path(state_dir);
    let uid = validate(&info).map_err(|reason| LabError::State {
        path: path.clone(),
        reason,
    })?;
    match info.postmaster() {
        Some(id)
            if !process::stop_pid(id, uid, &info.data_dir, StopMode::Immediate, STOP_TIMEOUT) =>
        {
            return Err(LabError::State {
                path,
                reason: format!("postmaster {} did not stop", id.pid),
            });
        }
        None if info.pid.is_some() => {
            return Err(LabError::State {
                path,
                reason: "it does not record the postmaster's start time (an older pgrig wrote \
                         it), so pgrig cannot tell that process from another; stop it by hand \
                         and delete the file"
                    .into(),
            })
        }
        _ => {}
    }
    if let Some(pid) = serving_postmaster(uid, &info.data_dir) {
        return Err(LabError::State {
            path,
            reason: format!(
                "it does not name the postmaster that serves {} (pid {pid}); pgrig leaves both                  alone: stop that server by hand and delete the file",
                info.data_dir.display()
            ),
        });
    }
    if std::fs::symlink_metadata(&info.root).is_ok() {
        std::fs::remove_dir_all(&info.root)
            .map_err(|e| LabError::io("removing the server's directory", &info.root, e))?;
    }
    std::fs::remove_file(&path).map_err(|e| LabError::io("removing server state", &path, e))?;
    Ok(Some(info))
}

const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The recorded server, if any, and whether it is running.
pub fn status(state_dir: &Path) -> Result<Option<ServerStatus>, LabError> {
    let Some(info) = read_state(state_dir)? else {
        return Ok(None);
    };
    let uid = validate(&info).map_err(|reason| LabError::State {
        path: state_path(state_dir),
        reason,
    })?;
    let running = info
        .postmaster()
        .is_some_and(|id| id.is_postmaster_of(uid, &info.data_dir));
    Ok(Some(ServerStatus { info, running }))
}

fn state_path(state_dir: &Path) -> PathBuf {
    state_dir.join(STATE_FILE)
}

/// Creates the state directory (0700) if needed and checks it.
fn ensure_state_dir(dir: &Path) -> Result<(), LabError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| LabError::io("creating state directory", parent, e))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(LabError::io("creating state directory", dir, e)),
    }
    check_state_dir(dir).map(|_| ())
}

/// True if the state directory exists; an error if it exists but is not a directory of the
/// effective user that no one else may write.
fn check_state_dir(dir: &Path) -> Result<bool, LabError> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(LabError::io("checking state directory", dir, e)),
    };
    let me = Uid::effective().as_raw();
    let refuse = |why: String| LabError::State {
        path: dir.to_path_buf(),
        reason: format!(
            "refusing to use this state directory: {why} (remove it, or set XDG_RUNTIME_DIR \
             to a private directory)"
        ),
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(refuse("it is not a directory".into()));
    }
    if meta.uid() != me {
        return Err(refuse(format!(
            "it belongs to uid {}, not to you (uid {me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "others may write to it (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    Ok(true)
}

fn read_state(state_dir: &Path) -> Result<Option<ServerInfo>, LabError> {
    if !check_state_dir(state_dir)? {
        return Ok(None);
    }
    let path = state_path(state_dir);
    let refuse = |reason: String| LabError::State {
        path: path.clone(),
        reason,
    };
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refuse("it is a symbolic link; delete it".into()))
        }
        Err(e) => return Err(LabError::io("reading server state", &path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| LabError::io("reading server state", &path, e))?;
    if !meta.is_file() || meta.uid() != Uid::effective().as_raw() || meta.mode() & 0o022 != 0 {
        return Err(refuse(
            "it is not a regular file of yours that only you can write; delete it".into(),
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| LabError::io("reading server state", &path, e))?;
    serde_json::from_str(&text).map(Some).map_err(|e| {
        refuse(format!(
            "unreadable ({e}); delete it if no server is running"
        ))
    })
}

/// Writes the state file: a new file (mode 0600, never through a link) renamed into place.
fn write_state(state_dir: &Path, info: &ServerInfo) -> Result<(), LabError> {
    let path = state_path(state_dir);
    let text = serde_json::to_string_pretty(info).map_err(|e| LabError::State {
        path: path.clone(),
        reason: format!("cannot serialise: {e}"),
    })? + "\n";
    let tmp = state_dir.join(format!(".{STATE_FILE}.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp); // ours (the directory is checked), left by a crash
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        LabError::io("writing server state", &path, e)
    })
}

/// Checks that `info` names a cluster pgrig could have made, and returns the uid its server
/// runs as: a `pgrig-cluster-*` root (absolute, no `..`) of ours with `data`, `sock`,
/// `server.log` and `pgpass` inside, the data directory owned by our account or our server
/// account.
fn validate(info: &ServerInfo) -> Result<u32, String> {
    let root = &info.root;
    let plain = root.is_absolute()
        && root
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    let named = root
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("pgrig-cluster-"));
    if !plain || !named {
        return Err(format!(
            "it names {} as the cluster directory, which pgrig does not create",
            root.display()
        ));
    }
    let layout = info.data_dir == root.join("data")
        && info.socket_dir == root.join("sock")
        && info.log == root.join("server.log")
        && info
            .passfile
            .as_ref()
            .is_none_or(|p| *p == root.join("pgpass"));
    if !layout {
        return Err("its paths are not inside its cluster directory".into());
    }
    let me = Uid::effective().as_raw();
    let server_uid = RunAs::resolve().map(|r| r.uid).ok();
    let uid = info.os_uid.or(server_uid).unwrap_or(me);
    if uid != me && Some(uid) != server_uid {
        return Err(format!(
            "its server account (uid {uid}) is neither you nor pgrig's server account"
        ));
    }
    for (dir, owner) in [(root, me), (&info.data_dir, uid)] {
        if let Ok(meta) = std::fs::symlink_metadata(dir) {
            if !meta.is_dir() || meta.uid() != owner {
                return Err(format!(
                    "{} is not a directory of uid {owner}",
                    dir.display()
                ));
            }
        }
    }
    Ok(uid)
}
