//! Detached servers for `pgrig server start|stop|status`: a cluster that outlives the command
//! that started it, found again through a small JSON state file (`<state_dir>/server.json`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cluster::Server;
use super::error::LabError;
use super::info::ServerInfo;
use super::options::ServerOptions;
use super::process::{self, StopMode};

const STATE_FILE: &str = "server.json";

/// A detached server and whether its postmaster is alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub info: ServerInfo,
    pub running: bool,
}

/// `$XDG_RUNTIME_DIR/pgrig` if that is set, else `/tmp/pgrig-<uid>`.
pub fn default_state_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("pgrig"),
        _ => std::env::temp_dir().join(format!("pgrig-{}", nix::unistd::Uid::effective())),
    }
}

/// Starts a server that keeps running after this process exits (no watchdog) and records it
/// in `state_dir`. Fails if a recorded server is still running; a stale record is cleaned up.
pub fn start_detached(state_dir: &Path, mut opts: ServerOptions) -> Result<ServerInfo, LabError> {
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
    std::fs::create_dir_all(state_dir)
        .map_err(|e| LabError::io("creating state directory", state_dir, e))?;
    opts.watchdog = false;
    let server = Server::start(opts)?;
    let info = server.info();
    write_state(state_dir, &info)?; // on error `server` drops here and is cleaned up
    Ok(server.into_detached())
}

/// Stops and removes the recorded server. Returns its info, or `None` if nothing was recorded.
pub fn stop(state_dir: &Path) -> Result<Option<ServerInfo>, LabError> {
    let Some(info) = read_state(state_dir)? else {
        return Ok(None);
    };
    let pid = process::pid_from_file(&info.data_dir).or(info.pid);
    if let Some(pid) = pid {
        if !process::stop_pid(pid, StopMode::Immediate, Duration::from_secs(30)) {
            return Err(LabError::State {
                path: state_path(state_dir),
                reason: format!("postmaster {pid} did not stop"),
            });
        }
    }
    if looks_like_cluster_root(&info.root) {
        let _ = std::fs::remove_dir_all(&info.root);
    }
    let path = state_path(state_dir);
    std::fs::remove_file(&path).map_err(|e| LabError::io("removing server state", &path, e))?;
    Ok(Some(info))
}

/// The recorded server, if any, and whether it is running.
pub fn status(state_dir: &Path) -> Result<Option<ServerStatus>, LabError> {
    let Some(info) = read_state(state_dir)? else {
        return Ok(None);
    };
    let pid = process::pid_from_file(&info.data_dir).or(info.pid);
    let running = pid.is_some_and(process::is_postgres_alive);
    Ok(Some(ServerStatus { info, running }))
}

fn state_path(state_dir: &Path) -> PathBuf {
    state_dir.join(STATE_FILE)
}

fn read_state(state_dir: &Path) -> Result<Option<ServerInfo>, LabError> {
    let path = state_path(state_dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LabError::io("reading server state", &path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| LabError::State {
            path,
            reason: format!("unreadable ({e}); delete it if no server is running"),
        })
}

fn write_state(state_dir: &Path, info: &ServerInfo) -> Result<(), LabError> {
    let path = state_path(state_dir);
    let tmp = state_dir.join(format!(".{STATE_FILE}.{}", std::process::id()));
    let text = serde_json::to_string_pretty(info).map_err(|e| LabError::State {
        path: path.clone(),
        reason: format!("cannot serialise: {e}"),
    })?;
    std::fs::write(&tmp, text + "\n").map_err(|e| LabError::io("writing server state", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| LabError::io("writing server state", &path, e))
}

/// Only directories we create (`pgrig-cluster-*`) are ever removed on a state file's word.
fn looks_like_cluster_root(root: &Path) -> bool {
    root.is_absolute()
        && root
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("pgrig-cluster-"))
}
