//! The state of `pgrig server`: `<state_dir>/server.json`. The directory must belong to the
//! effective user and be writable by no one else (else it is refused); the file is read without
//! following a symbolic link and must be a regular file of ours; it is written as a new file
//! (`O_EXCL|O_NOFOLLOW`, mode 0600) renamed into place.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::unistd::Uid;

use crate::error::LabError;
use crate::info::ServerInfo;

const STATE_FILE: &str = "server.json";

pub(crate) fn state_path(state_dir: &Path) -> PathBuf {
    state_dir.join(STATE_FILE)
}

/// Creates the state directory (0700) if needed and checks it.
pub(crate) fn ensure_state_dir(dir: &Path) -> Result<(), LabError> {
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

pub(crate) fn read_state(state_dir: &Path) -> Result<Option<ServerInfo>, LabError> {
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
pub(crate) fn write_state(state_dir: &Path, info: &ServerInfo) -> Result<(), LabError> {
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
