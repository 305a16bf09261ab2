//! Everything around benchmark runs. So far: throwaway PostgreSQL clusters ([`Server`]) started
//! with `initdb`/`postgres` as an unprivileged user, plus a detached-server manager for
//! `pgrig server start|stop|status`.
//!
//! [`Server::start`] finds the binaries ([`PgBinaries`]), creates `<base>/pgrig-cluster-*/`
//! (data dir, socket dir, log), fills the data dir from a cached initdb template, writes
//! settings/hba/extra files, runs bootstrap SQL in single-user mode if asked, and starts the
//! postmaster on a free port, listening on its private unix socket (and on 127.0.0.1 with a
//! generated password when asked). When we are root, all server processes run as an
//! unprivileged account (see `runas`). A watchdog removes everything if the owning process dies.
//! Who can reach what is described in docs/architecture.md, "Security model".
//! [`start_detached`]/[`stop`]/[`status`] manage one long-lived server for `pgrig server`.

pub mod binaries;
mod cluster;
mod cluster_access;
mod cluster_dir;
mod conf_quote;
mod conn;
mod detached;
mod error;
mod identity;
mod info;
mod initdb;
pub mod install;
mod options;
mod options_check;
mod process;
mod psql;
mod runas;
mod secret;
mod state_file;
mod template;
mod template_digest;
pub mod versions;
mod watchdog;

pub use binaries::{release_of, PgBinaries};

/// The processes of the PostgreSQL server whose postmaster is `pid` (it first, then its live
/// children), or `None` when `pid` is not a running `postgres` process (e.g. for profiling).
pub fn postgres_tree(pid: u32) -> Option<Vec<u32>> {
    identity::is_postgres_alive(pid).then(|| process::process_tree(pid))
}
pub use cluster::Server;
pub use detached::{default_state_dir, start_detached, status, stop, ServerStatus};
pub use error::LabError;
pub use identity::ProcessId;
pub use info::ServerInfo;
pub use install::{ensure_server_binaries, Install};
pub use options::{quote_ident, quote_literal, ServerOptions, TlsFiles};
pub use options_check::{access_reason, changes_access, check_setting, owned_by_pgrig};
