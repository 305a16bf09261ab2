//! Everything around benchmark runs. So far: throwaway PostgreSQL clusters ([`Server`]) started
//! with `initdb`/`postgres` as an unprivileged user, plus a detached-server manager for
//! `pgrig server start|stop|status` (see [`server`]).

pub mod server;

pub use server::{
    binaries::release_of, check_setting, default_state_dir, quote_ident, quote_literal,
    start_detached, status, stop, LabError, PgBinaries, ProcessId, Server, ServerInfo,
    ServerOptions, ServerStatus, TlsFiles,
};
