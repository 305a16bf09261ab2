//! [`ServerInfo`]: a serialisable description of a running cluster (state file of detached
//! servers, `pgrig server status` output).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    pub bin_dir: PathBuf,
    pub version: String,
    /// Postmaster pid at the time the info was taken.
    pub pid: Option<u32>,
}

impl ServerInfo {
    /// libpq keyword/value string for `db` over the unix socket.
    pub fn conninfo(&self, db: &str) -> String {
        super::conn::conninfo(
            &self.socket_dir.display().to_string(),
            self.port,
            &self.user,
            db,
            None,
        )
    }

    /// `postgresql://` URI for `db` over TCP to 127.0.0.1.
    pub fn tcp_url(&self, db: &str) -> String {
        super::conn::url("127.0.0.1", self.port, &self.user, db, None)
    }

    /// `PG*` environment for `db` over the unix socket.
    pub fn env(&self, db: &str) -> Vec<(String, String)> {
        super::conn::env(
            &self.socket_dir.display().to_string(),
            self.port,
            &self.user,
            db,
            None,
        )
    }
}
