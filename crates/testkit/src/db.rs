//! [`TestDb`]: a uniquely named database for one test, dropped when the test is done.

use std::ffi::OsStr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use pgrig_lab::{quote_ident, Server};

use crate::shared::cluster;

/// A database created for one test. Dropping it drops the database (errors ignored).
#[derive(Debug)]
pub struct TestDb {
    /// The database name.
    pub name: String,
    server: &'static Server,
}

/// Creates a new database on the shared [`cluster()`], named after `name_hint` plus a unique
/// suffix (so parallel tests and repeated runs never collide).
///
/// # Panics
/// If the cluster cannot be started or `CREATE DATABASE` fails.
pub fn fresh_db(name_hint: &str) -> TestDb {
    fresh_db_on(cluster(), name_hint)
}

/// Like [`fresh_db()`], on a given long-lived server (e.g. a leaked [`crate::custom_cluster`]).
pub fn fresh_db_on(server: &'static Server, name_hint: &str) -> TestDb {
    let name = unique_name(name_hint);
    if let Err(e) = server.psql(
        "postgres",
        &format!("CREATE DATABASE {}", quote_ident(&name)),
    ) {
        panic!("pgrig-testkit: cannot create test database {name}: {e}");
    }
    TestDb { name, server }
}

fn unique_name(hint: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut clean: String = hint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if clean.is_empty() {
        clean.push_str("db");
    }
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("t_{clean}_{}_{n}", std::process::id())
}

impl TestDb {
    /// The server the database lives on.
    pub fn server(&self) -> &'static Server {
        self.server
    }

    /// libpq keyword/value string (unix socket).
    pub fn conninfo(&self) -> String {
        self.server.conninfo(&self.name)
    }

    /// libpq keyword/value string over TCP (127.0.0.1), naming the server's password file.
    pub fn tcp_conninfo(&self) -> String {
        self.server.tcp_conninfo(&self.name)
    }

    /// `postgresql://` URI (unix socket).
    pub fn url(&self) -> String {
        self.server.url(&self.name)
    }

    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE` (and `PGPASSWORD` if the server has one).
    pub fn env(&self) -> Vec<(String, String)> {
        self.server.env(&self.name)
    }

    /// Runs SQL with psql and returns unaligned, tuples-only output (`|` between columns).
    ///
    /// # Panics
    /// If psql fails (the message has psql's error); use [`TestDb::try_psql`] to see errors.
    pub fn psql(&self, sql: &str) -> String {
        match self.try_psql(sql) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs SQL with psql, returning its error instead of panicking.
    pub fn try_psql(&self, sql: &str) -> Result<String, pgrig_lab::LabError> {
        self.server.psql(&self.name, sql)
    }

    /// A command for `program` with this database's `PG*` environment (and every other
    /// inherited `PG*` variable removed, so the developer's own settings cannot leak in).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        for (k, _) in std::env::vars_os() {
            if k.to_str().is_some_and(|k| k.starts_with("PG")) {
                cmd.env_remove(&k);
            }
        }
        cmd.envs(self.env());
        cmd
    }

    /// A command for the installed pgbench (the oracle) with this database's environment.
    ///
    /// # Panics
    /// When pgbench is not installed ([`crate::pgbench_oracle()`]).
    pub fn pgbench(&self) -> Command {
        self.command(crate::pgbench_oracle())
    }

    /// `PROGRAM --db-driver=pgsql --pgsql-host=… --pgsql-port=… --pgsql-user=… --pgsql-db=…
    /// ARGS` against this database over the unix socket: sysbench's command line, for the real
    /// sysbench ([`crate::sysbench_oracle()`]) or pgrig through a `sysbench` link.
    pub fn sysbench_command(&self, program: impl AsRef<OsStr>, args: &[&str]) -> Command {
        let server = self.server();
        let mut cmd = self.command(program);
        cmd.arg("--db-driver=pgsql")
            .arg(format!("--pgsql-host={}", server.socket_dir().display()))
            .arg(format!("--pgsql-port={}", server.port()))
            .arg(format!("--pgsql-user={}", server.user()))
            .arg(format!("--pgsql-db={}", self.name))
            .args(args);
        cmd
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let sql = format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            quote_ident(&self.name)
        );
        let _ = self.server.psql("postgres", &sql);
    }
}

#[cfg(test)]
mod tests {
    use super::unique_name;

    #[test]
    fn unique_names_are_sanitised_and_distinct() {
        let a = unique_name("My Test-1");
        let b = unique_name("My Test-1");
        assert!(a.starts_with("t_my_test_1_"), "{a}");
        assert_ne!(a, b);
        assert!(unique_name("").starts_with("t_db_"));
        assert!(unique_name(&"x".repeat(100)).len() <= 63);
    }
}
