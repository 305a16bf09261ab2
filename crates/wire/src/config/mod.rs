//! Connection parameters resolved the way libpq (as configured by Debian) does it.
//!
//! Precedence, as for pgbench's `PQconnectdbParams(expand_dbname)` call: `-h/-p/-U`, then the
//! values set by a conninfo string or URI given as the database name, then `PG*` environment
//! variables, then defaults (socket directory `/var/run/postgresql`, port 5432, user = OS user,
//! dbname = user). Passwords come from the parameters, `PGPASSWORD`, or the password file at
//! connect time.

mod conninfo;
mod env;
#[cfg(test)]
mod mask_proptest;
mod options;
mod pgpass;
mod uri;

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use conninfo::is_connection_string;
pub use env::{Environment, MapEnv, ProcessEnv};
pub use options::RawOptions;
pub use pgpass::{lookup as pgpass_lookup, read_file as read_pgpass_file};
pub use pgrig_text::{mask_passwords, MASK};

use crate::error::Error;

/// Debian's compiled-in socket directory.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
pub const DEFAULT_PORT: u16 = 5432;

/// What the command line gives: `-h`, `-p`, `-U` and the database name argument (`-d` or
/// positional), each possibly a conninfo string/URI in the case of `dbname`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnArgs {
    /// `-h/--host`
    pub host: Option<String>,
    /// `-p/--port`
    pub port: Option<String>,
    /// `-U/--username`
    pub user: Option<String>,
    /// `-d/--dbname` or the first positional argument; may be a conninfo string or URI.
    pub dbname: Option<String>,
}

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A host name or IP address (TCP).
    Tcp(String),
    /// A Unix-domain socket directory.
    Unix(PathBuf),
}

/// One host to try, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    /// A numeric address that replaces name resolution (`hostaddr`).
    pub hostaddr: Option<IpAddr>,
    pub port: u16,
}

impl Target {
    /// The host string as libpq uses it for `.pgpass` matching (`host` else `hostaddr`).
    pub fn host_str(&self) -> String {
        match (&self.host, self.hostaddr) {
            (Host::Tcp(h), _) if !h.is_empty() => h.clone(),
            (Host::Tcp(_), Some(a)) => a.to_string(),
            (Host::Tcp(h), None) => h.clone(),
            (Host::Unix(p), _) => p.display().to_string(),
        }
    }

    /// The socket file for a Unix-domain target.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.host {
            Host::Unix(dir) => Some(dir.join(format!(".s.PGSQL.{}", self.port))),
            Host::Tcp(_) => None,
        }
    }
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    Allow,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(s: &str) -> Result<SslMode, Error> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(Error::config(format!("invalid sslmode value: \"{other}\""))),
        })
    }
}

/// A password that never shows up in `Debug` output (and has no `Display`).
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(p: impl Into<String>) -> Password {
        Password(p.into())
    }

    /// The secret itself; use only to authenticate.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Password({MASK})")
    }
}

/// Fully resolved connection parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Hosts to try in order (libpq's multi-host lists).
    pub targets: Vec<Target>,
    pub user: String,
    pub dbname: String,
    pub password: Option<Password>,
    /// The password file to consult when no password is given (`None`: no home directory).
    pub passfile: Option<PathBuf>,
    /// Command-line options for the server (`-c name=value ...`).
    pub options: Option<String>,
    pub application_name: Option<String>,
    /// Sent as `application_name` when `application_name` is not set (pgbench: `pgbench`).
    pub fallback_application_name: Option<String>,
    pub client_encoding: Option<String>,
    pub sslmode: SslMode,
    /// Root certificates (`sslrootcert`, default `~/.postgresql/root.crt`).
    pub sslrootcert: Option<PathBuf>,
    /// Client certificate and key (default `~/.postgresql/postgresql.crt` / `.key`, used if present).
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    /// Send the host name as TLS SNI (`sslsni`, default on).
    pub sslsni: bool,
    /// Per-host connection timeout (`connect_timeout`; values under 2 s become 2 s like libpq).
    pub connect_timeout: Option<Duration>,
}

impl Config {
    /// Resolves command-line parameters in the process environment, like pgbench's
    /// `PQconnectdbParams` call; `fallback_application_name` is e.g. `"pgbench"` (empty: none).
    pub fn from_args(args: &ConnArgs, fallback_application_name: &str) -> Result<Config, Error> {
        Config::from_args_in(args, fallback_application_name, &ProcessEnv)
    }

    /// Resolves command-line parameters in the given environment.
    pub fn from_args_in(
        args: &ConnArgs,
        fallback_application_name: &str,
        env: &dyn Environment,
    ) -> Result<Config, Error> {
        let mut o = RawOptions::new();
        for (key, value) in [
            ("host", &args.host),
            ("port", &args.port),
            ("user", &args.user),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                o.set(key, v)?;
            }
        }
        if let Some(db) = args.dbname.as_deref().filter(|v| !v.is_empty()) {
            if is_connection_string(db) {
                apply_connection_string(&mut o, db)?;
            } else {
                o.set("dbname", db)?;
            }
        }
        if !fallback_application_name.is_empty() {
            o.set("fallback_application_name", fallback_application_name)?;
        }
        Config::from_options(o, env)
    }

    /// Parses a conninfo string or URI and resolves it in the process environment.
    pub fn parse(conninfo: &str) -> Result<Config, Error> {
        Config::parse_in(conninfo, &ProcessEnv)
    }

    /// Parses a conninfo string or URI and resolves it in the given environment.
    pub fn parse_in(conninfo: &str, env: &dyn Environment) -> Result<Config, Error> {
        let mut o = RawOptions::new();
        apply_connection_string(&mut o, conninfo)?;
        Config::from_options(o, env)
    }

    /// Resolves raw options: environment variables, then defaults.
    pub fn from_options(mut o: RawOptions, env: &dyn Environment) -> Result<Config, Error> {
        o.fill_from_env(|name| env.var(name));
        resolve::resolve(&o, env)
    }

    /// The database name.
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The password file path, if any.
    pub fn passfile(&self) -> Option<&Path> {
        self.passfile.as_deref()
    }
}

fn apply_connection_string(o: &mut RawOptions, s: &str) -> Result<(), Error> {
    let pairs = if uri::has_uri_prefix(s) {
        uri::parse(s)
    } else {
        conninfo::parse(s)
    }
    // the messages quote the string they failed on: never with its password
    .map_err(|e| match e {
        Error::Config(m) => Error::Config(mask_passwords(&m)),
        e => e,
    })?;
    for (k, v) in pairs {
        o.set(&k, v)?;
    }
    Ok(())
}

mod resolve;
#[cfg(test)]
mod resolve_tests;
