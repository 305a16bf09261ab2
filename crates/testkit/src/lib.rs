//! Test harness for every test binary of the workspace that needs a PostgreSQL server.
//!
//! - [`cluster()`]: one throwaway cluster per test binary, started on first use. Statics are
//!   never dropped; the lab's watchdog removes the cluster when the test process exits.
//! - [`fresh_db()`]: a new, uniquely named database on that cluster for one test; dropped with
//!   the returned [`TestDb`]. Tests that each use their own database can run in parallel.
//! - [`custom_cluster()`]: a private cluster with special options (auth methods, TLS, settings).
//! - [`TestPki`]: a test-made CA and `localhost` server certificate for TLS clusters.
//! - [`pgbench_oracle()`], [`TestDb::command()`], [`run()`]: run external programs (the installed
//!   pgbench for differential tests, our own binaries) against a test database.
//! - [`skip()`]: a test that cannot run here says so (`./test` lists it) or, in CI, fails.
//!
//! ```no_run
//! let db = pgrig_testkit::fresh_db("accounts");
//! db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
//! assert_eq!(db.psql("SELECT count(*) FROM t"), "1");
//! ```

mod cmd;
mod db;
mod pki;
mod shared;
mod skip;
pub mod snapshot;

pub use cmd::{pgbench_oracle, pgbench_path, run, sysbench_oracle, CmdOutput};
pub use db::{fresh_db, fresh_db_on, TestDb};
pub use pgrig_lab::{LabError, Server, ServerOptions, TlsFiles};
pub use pki::{unrelated_ca_pem, TestPki};
pub use shared::{cluster, custom_cluster, try_cluster};
pub use skip::skip;
