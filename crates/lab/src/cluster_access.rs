//! How to reach a [`Server`] and what it is: socket directory, port, superuser, password file,
//! connection strings, `PG*` environments, paths, version, and `psql` as the superuser.

use std::path::Path;

use crate::binaries::PgBinaries;
use crate::cluster::Server;
use crate::error::{file_tail, LabError};
use crate::options::ServerOptions;
use crate::{conn, psql};

impl Server {
    /// Directory holding the unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir.sock
    }

    /// TCP port (on 127.0.0.1; the unix socket uses the same number).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser name.
    pub fn user(&self) -> &str {
        &self.opts.superuser
    }

    /// The superuser password given in the options, if any (a password pgrig generated for
    /// TCP is not returned: it stays in [`Self::passfile`]).
    pub fn password(&self) -> Option<&str> {
        self.opts.superuser_password.as_deref()
    }

    /// True if the server listens on 127.0.0.1 as well as on its socket.
    pub fn tcp(&self) -> bool {
        self.opts.tcp
    }

    /// With TCP: the 0600 password file (libpq format) holding the superuser's password, for
    /// `PGPASSFILE` or the `passfile` connection parameter.
    pub fn passfile(&self) -> Option<&Path> {
        self.opts.tcp.then_some(self.dir.passfile.as_path())
    }

    /// OS account the server processes run as.
    pub fn os_user(&self) -> &str {
        &self.runas.name
    }

    /// `postgres --version` output.
    pub fn version(&self) -> &str {
        self.bins.version()
    }

    /// Major version, e.g. 15.
    pub fn major_version(&self) -> u32 {
        self.bins.major()
    }

    /// Directory of the server binaries.
    pub fn bin_dir(&self) -> &Path {
        self.bins.bin_dir()
    }

    /// The binaries in use.
    pub fn binaries(&self) -> &PgBinaries {
        &self.bins
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.dir.data
    }

    /// The cluster's root directory (data dir, socket dir and log inside).
    pub fn root_dir(&self) -> &Path {
        &self.dir.root
    }

    /// The server log file.
    pub fn log_path(&self) -> &Path {
        &self.dir.log
    }

    /// The last `lines` lines of the server log.
    pub fn log_tail(&self, lines: usize) -> String {
        file_tail(&self.dir.log, lines)
    }

    /// The options the server was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.opts
    }

    /// Where to connect; the password file only for TCP (the socket needs none).
    fn target<'a>(&'a self, host: &'a str) -> conn::Target<'a> {
        conn::Target {
            host,
            port: self.port,
            user: self.user(),
            password: self.password(),
            passfile: self.passfile().filter(|_| !host.starts_with('/')),
        }
    }

    fn socket_host(&self) -> String {
        self.dir.sock.display().to_string()
    }

    /// libpq keyword/value string for `db` over the unix socket (a given password included).
    pub fn conninfo(&self, db: &str) -> String {
        conn::conninfo(self.target(&self.socket_host()), db)
    }

    /// libpq keyword/value string for `db` over TCP to 127.0.0.1 (with `passfile`).
    pub fn tcp_conninfo(&self, db: &str) -> String {
        conn::conninfo(self.target("127.0.0.1"), db)
    }

    /// `postgresql://` URI for `db` over the unix socket (socket dir as percent-encoded host).
    pub fn url(&self, db: &str) -> String {
        conn::url(self.target(&self.socket_host()), db)
    }

    /// `postgresql://` URI for `db` over TCP to 127.0.0.1 (with `passfile`).
    pub fn tcp_url(&self, db: &str) -> String {
        conn::url(self.target("127.0.0.1"), db)
    }

    /// `PGHOST`/`PGPORT`/`PGUSER`/`PGDATABASE` for `db` over the socket (and `PGPASSWORD` if a
    /// password was given, `PGPASSFILE` with TCP).
    pub fn env(&self, db: &str) -> Vec<(String, String)> {
        let passfile = self.passfile();
        conn::env(
            conn::Target {
                passfile,
                ..self.target(&self.socket_host())
            },
            db,
        )
    }

    /// Runs `sql` (one or more statements, stopping at the first error) with the installed
    /// `psql` as the superuser over the unix socket (with the superuser password if set; a
    /// replaced `pg_hba.conf` must let that in), and returns the output in unaligned,
    /// tuples-only form (`|` between columns, one row per line, no trailing newline).
    pub fn psql(&self, db: &str, sql: &str) -> Result<String, LabError> {
        psql::run(&self.bins.psql(), &self.env(db), db, sql)
    }
}
