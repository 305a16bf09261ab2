//! Shared helpers for pgrig-wire's integration tests: configs resolved in an isolated
//! environment (a temporary home, so the real `~/.pgpass` and `~/.postgresql/` never leak in)
//! and a current-thread runtime per test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use pgrig_wire::config::MapEnv;
use pgrig_wire::{Config, Connection};

/// An isolated environment whose home directory is a fresh temporary directory.
pub struct TestEnv {
    pub home: tempfile::TempDir,
    pub env: MapEnv,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let home = tempfile::tempdir().unwrap();
        let env = MapEnv::new("nobody", home.path());
        TestEnv { home, env }
    }

    pub fn with(mut self, name: &str, value: &str) -> TestEnv {
        self.env = self.env.with(name, value);
        self
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Writes a file under the home directory with mode 0600 and returns its path.
    pub fn write_private(&self, rel: &str, contents: &[u8]) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.home().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// Resolves a conninfo string or URI in this environment.
    pub fn config(&self, conninfo: &str) -> Config {
        Config::parse_in(conninfo, &self.env).unwrap()
    }
}

/// Runs `f` on a current-thread runtime (what the benchmark workers use).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Connects with `conninfo` in a fresh isolated environment.
pub async fn connect(conninfo: &str) -> Connection {
    let env = TestEnv::new();
    Connection::connect(&env.config(conninfo))
        .await
        .unwrap_or_else(|e| panic!("connect failed: {e}"))
}

/// libpq keyword/value quoting.
pub fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}
