//! [`ServerInfo`]: a serialisable description of a running cluster (state file of detached
//! servers, `pgrig server status` output). It names the password file, never the password.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conn::Target;
use crate::identity::ProcessId;

/// Where a cluster lives and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub root: PathBuf,
    pub data_dir: PathBuf,
    pub socket_dir: PathBuf,
    pub log: PathBuf,
    pub port: u16,
    /// Database superuser.
    pub user: String,
    /// OS account running the server.
    pub os_user: String,
    /// Its uid (the owner the postmaster and the cluster directory must have).
    #[serde(default)]
    pub os_uid: Option<u32>,
    pub bin_dir: PathBuf,
    pub version: String,
    /// Postmaster pid at the time the info was taken.
    pub pid: Option<u32>,
    /// The kernel's start time of that postmaster (see [`ProcessId`]).
    #[serde(default)]
    pub start_time: Option<u64>,
    /// True if the server also listens on 127.0.0.1.
    #[serde(default)]
    pub tcp: bool,
    /// With TCP: the 0600 password file holding the superuser's password.
    #[serde(default)]
    pub passfile: Option<PathBuf>,
}

impl ServerInfo {
    fn target<'a>(&'a self, host: &'a str) -> Target<'a> {
        Target {
            host,
            port: self.port,
            user: &self.user,
            password: None,
            passfile: self.passfile.as_deref(),
        }
    }

    /// The recorded postmaster, if its pid and start time were recorded.
    pub fn postmaster(&self) -> Option<ProcessId> {
        Some(ProcessId {
            pid: self.pid?,
            start_time: self.start_time?,
        })
    }

    /// libpq keyword/value string for `db` over the unix socket.
    pub fn conninfo(&self, db: &str) -> String {
        crate::conn::conninfo(
            Target {
                passfile: None,
                ..self.target(&self.socket_dir.display().to_string())
            },
            db,
        )
    }

    /// libpq keyword/value string for `db` over TCP to 127.0.0.1 (with `passfile`).
    pub fn tcp_conninfo(&self, db: &str) -> String {
        crate::conn::conninfo(self.target("127.0.0.1"), db)
    }

    /// `postgresql://` URI for `db` over TCP to 127.0.0.1 (with `passfile`).
    pub fn tcp_url(&self, db: &str) -> String {
        crate::conn::url(self.target("127.0.0.1"), db)
    }

    /// `PG*` environment for `db` over the unix socket (with `PGPASSFILE` when there is TCP).
    pub fn env(&self, db: &str) -> Vec<(String, String)> {
        crate::conn::env(self.target(&self.socket_dir.display().to_string()), db)
    }

    /// The password file, if the server has one.
    pub fn passfile(&self) -> Option<&Path> {
        self.passfile.as_deref()
    }
}
