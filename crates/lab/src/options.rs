//! What kind of cluster to start: settings, authentication, TLS, extra files, bootstrap SQL.

use std::path::{Path, PathBuf};

use crate::error::LabError;

/// PEM-encoded server certificate and key (and optionally a CA for client certificates).
#[derive(Clone, Default)]
pub struct TlsFiles {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsFiles {
    // Never print key material into test logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &format_args!("{} bytes", self.key_pem.len()))
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .finish()
    }
}

impl TlsFiles {
    /// Reads certificate and key (and optional CA) from files.
    pub fn from_paths(cert: &Path, key: &Path, ca: Option<&Path>) -> Result<TlsFiles, LabError> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| LabError::io("reading TLS file", p, e));
        Ok(TlsFiles {
            cert_pem: read(cert)?,
            key_pem: read(key)?,
            ca_pem: ca.map(read).transpose()?,
        })
    }
}

/// How to start a throwaway cluster. `ServerOptions::default()` is tuned for fast tests.
///
/// ```no_run
/// # use pgrig_lab::{ServerOptions, Server};
/// let opts = ServerOptions::default()
///     .setting("password_encryption", "md5")
///     .superuser_password("secret")
///     .tcp(true)
///     .hba(["local all all trust", "host all all 127.0.0.1/32 md5"]);
/// let server = Server::start(opts)?;
/// # Ok::<(), pgrig_lab::LabError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `postgresql.conf` settings, applied after the built-in ones (so they win). Values are
    /// given unquoted (`("work_mem", "64MB")`); pgrig quotes them as the configuration reader
    /// reads them (`'` and `\` escaped: see `conf_quote`), so no value ends its string early.
    pub settings: Vec<(String, String)>,
    /// When set, replaces `pg_hba.conf` entirely (`host` lines need [`Self::tcp`]). Default:
    /// trust on the unix socket (whose directory only the server's account, and root, can
    /// enter) and, with `tcp`, `scram-sha-256` from 127.0.0.1.
    pub hba: Option<Vec<String>>,
    /// Files written into the data directory (mode 0600, owned by the server user) before
    /// the first start, e.g. `("server.crt", pem)`.
    pub extra_files: Vec<(String, Vec<u8>)>,
    /// The bootstrap superuser. Default `postgres`.
    pub superuser: String,
    /// Password for the superuser (hashed per `password_encryption` in `settings`). With
    /// `tcp` and no password given, a random one is made (see [`crate::Server::passfile`]).
    pub superuser_password: Option<String>,
    /// Also listen on 127.0.0.1 (same port). Default false: the server listens only on its
    /// unix socket. With the default `hba`, TCP connections need the superuser's password
    /// (`scram-sha-256`), which pgrig keeps in a 0600 password file.
    pub tcp: bool,
    /// SQL statements run once, in single-user mode, before the first start (so they work
    /// whatever `hba` says): e.g. `CREATE ROLE md5user LOGIN PASSWORD 'x'`.
    pub bootstrap_sql: Vec<String>,
    /// Enables TLS with these files (`ssl=on`, `server.crt`/`server.key`/`root.crt`).
    pub tls: Option<TlsFiles>,
    /// `max_connections`. Default 200.
    pub max_connections: u32,
    /// Test tuning: `fsync=off`, `full_page_writes=off`, small shared_buffers, cluster on
    /// tmpfs when possible. Committed data still survives a server crash (`stop_immediate`),
    /// just not an OS crash. Default true; turn it off for clusters that benchmark durable
    /// behaviour.
    pub fast: bool,
    /// Start the watchdog that stops the server and removes its directory when this process
    /// dies, however it dies. Default true; detached servers run without one.
    pub watchdog: bool,
    /// Directory under which the cluster directory is created (the server account must be able
    /// to traverse all its parents). Default: `PGRIG_CLUSTER_DIR`, else `/dev/shm` for `fast`
    /// clusters when it is a roomy tmpfs, else `/tmp` (root) or the system temp dir.
    pub base_dir: Option<PathBuf>,
    /// Directory holding initdb/postgres. Default: discovered (see [`crate::PgBinaries`]).
    pub bin_dir: Option<PathBuf>,
    /// Copy a cached initdb'ed template instead of running initdb every time. Default true
    /// (unless `PGRIG_NO_TEMPLATE` is set).
    pub use_template: bool,
    /// TCP port. Default: a free one is picked (and re-picked if taken meanwhile).
    pub port: Option<u16>,
    /// How long to wait for the server to accept connections. Default 60 s.
    pub start_timeout: std::time::Duration,
    /// Consent to user `settings` that change who can connect or what the server runs
    /// (`include*`, `listen_addresses`, `unix_socket_*`, `hba_file`, `ssl*`, library paths,
    /// shell commands: see `options_check::changes_access`). Default false: they are refused,
    /// so a scratch server stays reachable only by its owner.
    pub allow_access_settings: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            settings: Vec::new(),
            hba: None,
            extra_files: Vec::new(),
            superuser: "postgres".into(),
            superuser_password: None,
            tcp: false,
            bootstrap_sql: Vec::new(),
            tls: None,
            max_connections: 200,
            fast: true,
            watchdog: true,
            base_dir: None,
            bin_dir: None,
            use_template: std::env::var_os("PGRIG_NO_TEMPLATE").is_none(),
            port: None,
            start_timeout: std::time::Duration::from_secs(60),
            allow_access_settings: false,
        }
    }
}

impl ServerOptions {
    /// Consents to settings that change who can connect (see [`Self::allow_access_settings`]).
    pub fn allow_access_settings(mut self, yes: bool) -> Self {
        self.allow_access_settings = yes;
        self
    }

    /// Adds a `postgresql.conf` setting.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Replaces `pg_hba.conf` with these lines.
    pub fn hba<I, S>(mut self, lines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hba = Some(lines.into_iter().map(Into::into).collect());
        self
    }

    /// Listens on 127.0.0.1 too (see [`Self::tcp`]).
    pub fn tcp(mut self, on: bool) -> Self {
        self.tcp = on;
        self
    }

    /// Sets the superuser's password.
    pub fn superuser_password(mut self, password: impl Into<String>) -> Self {
        self.superuser_password = Some(password.into());
        self
    }

    /// Adds a statement to run in single-user mode before the first start.
    pub fn bootstrap_sql(mut self, sql: impl Into<String>) -> Self {
        self.bootstrap_sql.push(sql.into());
        self
    }

    /// Adds a file to the data directory.
    pub fn extra_file(mut self, name: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.extra_files.push((name.into(), contents.into()));
        self
    }

    /// Enables TLS.
    pub fn tls(mut self, files: TlsFiles) -> Self {
        self.tls = Some(files);
        self
    }

    /// Sets `max_connections`.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n;
        self
    }

    /// Turns the test tuning (fsync=off, ...) on or off.
    pub fn fast(mut self, fast: bool) -> Self {
        self.fast = fast;
        self
    }

    /// Turns the owner-death watchdog on or off.
    pub fn watchdog(mut self, on: bool) -> Self {
        self.watchdog = on;
        self
    }

    /// The default `pg_hba.conf` lines: trust on the private unix socket; with `tcp`,
    /// `scram-sha-256` from 127.0.0.1 (the only TCP address the server listens on).
    pub fn default_hba(tcp: bool) -> Vec<String> {
        let mut lines = vec!["local all all trust".to_string()];
        if tcp {
            lines.push("host all all 127.0.0.1/32 scram-sha-256".to_string());
        }
        lines
    }

    /// All settings to write: built-ins (port/sockets/tuning), TLS, then the user's.
    pub(crate) fn conf_lines(&self, port: u16, socket_dir: &Path) -> String {
        let mut out = String::from("# written by pgrig-lab; later lines win\n");
        let mut put = |k: &str, v: &str| out.push_str(&format!("{k} = {}\n", quote(v)));
        put("port", &port.to_string());
        put("listen_addresses", if self.tcp { "127.0.0.1" } else { "" });
        put("unix_socket_directories", &socket_dir.display().to_string());
        put("unix_socket_permissions", "0700");
        put("max_connections", &self.max_connections.to_string());
        put("logging_collector", "off");
        put("log_min_messages", "warning");
        if self.fast {
            put("fsync", "off");
            put("full_page_writes", "off");
            put("shared_buffers", "32MB");
            put("dynamic_shared_memory_type", "mmap");
        }
        if self.tls.is_some() {
            put("ssl", "on");
            put("ssl_cert_file", "server.crt");
            put("ssl_key_file", "server.key");
            if self.tls.as_ref().is_some_and(|t| t.ca_pem.is_some()) {
                put("ssl_ca_file", "root.crt");
            }
        }
        for (k, v) in &self.settings {
            if k.eq_ignore_ascii_case("unix_socket_directories") {
                // pgrig's own directory stays first: its connections, and what it prints as
                // the socket directory, remain true (`extra_socket_dirs` names the others).
                put(k, &format!("{}, {v}", socket_dir.display()));
            } else {
                put(k, v);
            }
        }
        out
    }

    /// The socket directories the user's `unix_socket_directories` adds to pgrig's own (only
    /// with [`Self::allow_access_settings`]), as the user wrote them.
    pub fn extra_socket_dirs(&self) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("unix_socket_directories"))
            .map(|(_, v)| v.as_str())
    }

    /// `pg_hba.conf` contents.
    pub(crate) fn hba_text(&self) -> String {
        let lines = self
            .hba
            .clone()
            .unwrap_or_else(|| Self::default_hba(self.tcp));
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }

    /// Files for the data dir: TLS files, then the user's extra files.
    pub(crate) fn data_files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::new();
        if let Some(tls) = &self.tls {
            files.push(("server.crt".to_string(), tls.cert_pem.clone()));
            files.push(("server.key".to_string(), tls.key_pem.clone()));
            if let Some(ca) = &tls.ca_pem {
                files.push(("root.crt".to_string(), ca.clone()));
            }
        }
        files.extend(self.extra_files.iter().cloned());
        files
    }

    /// Statements for single-user mode (password first). `generated` is a password pgrig made
    /// (always stored as a SCRAM verifier, whatever `password_encryption` says).
    pub(crate) fn bootstrap_statements(&self, generated: Option<&str>) -> Vec<String> {
        let mut stmts = Vec::new();
        if let Some(pw) = generated {
            stmts.push("SET password_encryption = 'scram-sha-256'".to_string());
            stmts.push(format!(
                "ALTER ROLE {} PASSWORD {}",
                quote_ident(&self.superuser),
                quote_literal(pw)
            ));
            stmts.push("RESET password_encryption".to_string());
        } else if let Some(pw) = &self.superuser_password {
            stmts.push(format!(
                "ALTER ROLE {} PASSWORD {}",
                quote_ident(&self.superuser),
                quote_literal(pw)
            ));
        }
        stmts.extend(self.bootstrap_sql.iter().cloned());
        stmts
    }
}

use crate::conf_quote::quote;

pub use pgrig_wire::quote::{ident as quote_ident, literal as quote_literal};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_settings_come_after_builtins_so_they_win() {
        let conf = ServerOptions::default()
            .setting("fsync", "on")
            .conf_lines(5432, Path::new("/tmp/x"));
        let builtin = conf.find("fsync = 'off'").unwrap();
        let user = conf.find("fsync = 'on'").unwrap();
        assert!(user > builtin);
        assert!(conf.contains("unix_socket_directories = '/tmp/x'"));
    }

    #[test]
    fn a_users_socket_directory_is_added_after_pgrigs_own() {
        let opts = ServerOptions::default()
            .allow_access_settings(true)
            .setting("unix_socket_directories", "/srv/sock");
        let conf = opts.conf_lines(5432, Path::new("/tmp/x"));
        assert!(
            conf.ends_with("unix_socket_directories = '/tmp/x, /srv/sock'\n"),
            "{conf}"
        );
        assert_eq!(opts.extra_socket_dirs(), Some("/srv/sock"));
    }

    #[test]
    fn password_becomes_first_bootstrap_statement() {
        let o = ServerOptions::default()
            .superuser_password("p'w")
            .bootstrap_sql("CREATE ROLE x");
        assert_eq!(
            o.bootstrap_statements(None),
            vec!["ALTER ROLE \"postgres\" PASSWORD 'p''w'", "CREATE ROLE x"]
        );
    }

    #[test]
    fn default_hba_trusts_only_the_socket_and_asks_a_password_over_tcp() {
        assert_eq!(ServerOptions::default_hba(false), ["local all all trust"]);
        assert_eq!(
            ServerOptions::default_hba(true)[1],
            "host all all 127.0.0.1/32 scram-sha-256"
        );
        let socket_only = ServerOptions::default().conf_lines(1, Path::new("/s"));
        assert!(
            socket_only.contains("listen_addresses = ''"),
            "{socket_only}"
        );
        let tcp = ServerOptions::default()
            .tcp(true)
            .conf_lines(1, Path::new("/s"));
        assert!(tcp.contains("listen_addresses = '127.0.0.1'"), "{tcp}");
    }

    #[test]
    fn tls_adds_ssl_settings_and_files() {
        let o = ServerOptions::default().tls(TlsFiles {
            cert_pem: b"c".to_vec(),
            key_pem: b"k".to_vec(),
            ca_pem: None,
        });
        assert!(o.conf_lines(1, Path::new("/s")).contains("ssl = 'on'"));
        let names: Vec<_> = o.data_files().into_iter().map(|f| f.0).collect();
        assert_eq!(names, ["server.crt", "server.key"]);
    }
}
