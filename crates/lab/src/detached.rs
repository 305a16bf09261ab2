//! Detached servers for `pgrig server start|stop|status`: a cluster that outlives the command
//! that started it, found again through a small JSON state file (`<state_dir>/server.json`).
//!
//! The state file is checked on the way in (`state_file`), and what it names is validated before
//! pgrig signals or deletes anything: the cluster root is a `pgrig-cluster-*` directory of ours
//! with the usual layout and a data directory of the server's account, and the postmaster is the
//! very process started then (pid and start time, see `identity`), never whatever
//! `postmaster.pid` says.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use nix::unistd::Uid;

use crate::cluster::Server;
use crate::error::LabError;
use crate::identity::serving_postmaster;
use crate::info::ServerInfo;
use crate::options::ServerOptions;
use crate::process::{self, StopMode};
use crate::runas::RunAs;
use crate::state_file::{ensure_state_dir, read_state, state_path, write_state};

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
