//! The environment a configuration is resolved in: variables, home directory and OS user name.
//! Injectable so tests never touch the process environment.

use std::collections::HashMap;
use std::ffi::CStr;
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
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into our buffers; result is null or points to `pwd`, whose
    // string fields point into `buf`, which outlives their use below.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated strings inside `buf`.
    let name = unsafe { CStr::from_ptr(pwd.pw_name) }
        .to_string_lossy()
        .into_owned();
    let home = if pwd.pw_dir.is_null() {
        PathBuf::new()
    } else {
        PathBuf::from(
            unsafe { CStr::from_ptr(pwd.pw_dir) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    Some((name, home))
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
