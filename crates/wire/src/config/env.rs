//! The environment a configuration is resolved in: variables, home directory and OS user name.
//! Injectable so tests never touch the process environment.

use std::collections::HashMap;
use std::path::PathBuf;

pub trait Environment {
    /// An environment variable (`None` if unset or not UTF-8).
    fn var(&self, name: &str) -> Option<String>;
    /// The home directory (`$HOME`, else the password database), for `~/.pgpass` and
    /// `~/.postgresql/`.
    fn home_dir(&self) -> Option<PathBuf>;
    /// The effective OS user name, libpq's default user.
    fn user_name(&self) -> Option<String>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    /// A variable that is set but not UTF-8 is still used (lossily converted), never ignored:
    /// ignoring `PGDATABASE` would benchmark another database without a word.
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn home_dir(&self) -> Option<PathBuf> {
        match std::env::var_os("HOME") {
            Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
            _ => passwd_entry().map(|(_, home)| home),
        }
    }

    fn user_name(&self) -> Option<String> {
        passwd_entry().map(|(name, _)| name)
    }
}

/// `(name, home)` of the effective user from the password database.
fn passwd_entry() -> Option<(String, PathBuf)> {
    let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).ok()??;
    Some((user.name, user.dir))
}

/// A fixed environment for tests and embedding.
#[derive(Debug, Clone, Default)]
pub struct MapEnv {
    pub vars: HashMap<String, String>,
    pub home: Option<PathBuf>,
    pub user: Option<String>,
}

impl MapEnv {
    pub fn new(user: &str, home: impl Into<PathBuf>) -> MapEnv {
        MapEnv {
            vars: HashMap::new(),
            home: Some(home.into()),
            user: Some(user.into()),
        }
    }

    pub fn with(mut self, name: &str, value: &str) -> MapEnv {
        self.vars.insert(name.into(), value.into());
        self
    }
}

impl Environment for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn user_name(&self) -> Option<String> {
        self.user.clone()
    }
}
