//! The per-test-binary shared cluster and private custom clusters.

use std::sync::OnceLock;

use pgrig_lab::{Server, ServerOptions};

static CLUSTER: OnceLock<Result<Server, String>> = OnceLock::new();

/// The test binary's shared cluster, started on first use: default [`ServerOptions`] plus TCP
/// (the wire tests connect both ways), so TCP connections need the generated superuser password,
/// which [`TestDb::tcp_conninfo`](crate::TestDb::tcp_conninfo) names through `passfile`.
///
/// # Panics
/// If the cluster cannot be started (e.g. PostgreSQL is not installed); the message says what
/// to install. Every test that asks gets the same message.
pub fn cluster() -> &'static Server {
    match try_cluster() {
        Ok(server) => server,
        Err(message) => panic!("pgrig-testkit: cannot start the shared test cluster: {message}"),
    }
}

/// Like [`cluster()`], but returns the start-up error (as text, since it is shared).
pub fn try_cluster() -> Result<&'static Server, &'static str> {
    CLUSTER
        .get_or_init(|| {
            Server::start(ServerOptions::default().tcp(true)).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(String::as_str)
}

/// A private cluster with special options, removed when dropped.
///
/// # Panics
/// If the cluster cannot be started; use [`Server::start`] to handle the error yourself.
pub fn custom_cluster(opts: ServerOptions) -> Server {
    match Server::start(opts) {
        Ok(server) => server,
        Err(e) => panic!("pgrig-testkit: cannot start a custom cluster: {e}"),
    }
}
