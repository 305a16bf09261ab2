//! [`InitDb`] on a `pgrig_wire::Connection`: simple-protocol statements, first-value queries,
//! COPY FROM STDIN driven message by message, and notices in libpq's printed form. The
//! connector remembers the cancel keys of its open connections, so Ctrl-C can cancel the
//! server-side work of all of them ([`Cancels`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pgrig_wire::{Addr, Backend, CancelToken, Connection};

use crate::db::{Connector, DbFailure, DbResult, InitDb};
use pgrig_wire::ConnArgs;

/// CopyData messages are flushed to the socket once this much is queued.
const SEND_AT: usize = 64 * 1024;

fn failure(e: pgrig_wire::Error) -> DbFailure {
    DbFailure::new(e.to_string())
}

/// The cancel keys of the open connections.
#[derive(Clone, Default)]
pub struct Cancels {
    open: Arc<Mutex<Vec<(u64, CancelToken)>>>,
}

impl Cancels {
    /// Sends a cancel request for every open connection (all at once); errors are ignored,
    /// the failing statements report what happened.
    pub async fn cancel_all(&self) {
        let tokens: Vec<CancelToken> = match self.open.lock() {
            Ok(open) => open.iter().map(|(_, t)| t.clone()).collect(),
            Err(_) => return,
        };
        let mut set = tokio::task::JoinSet::new();
        for t in tokens {
            set.spawn(async move {
                let _ = t.cancel().await;
            });
        }
        while set.join_next().await.is_some() {}
    }

    fn add(&self, token: CancelToken) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut open) = self.open.lock() {
            open.push((id, token));
        }
        id
    }

    fn remove(&self, id: u64) {
        if let Ok(mut open) = self.open.lock() {
            open.retain(|(i, _)| *i != id);
        }
    }
}

/// Opens connections with the resolved parameters of `-h -p -U -d` and the environment.
pub struct WireConnector {
    config: pgrig_wire::Config,
    pub cancels: Cancels,
}

impl WireConnector {
    pub fn new(conn: &ConnArgs) -> DbResult<Self> {
        let config = pgrig_wire::Config::from_args(conn, "pgbench").map_err(failure)?;
        Ok(WireConnector {
            config,
            cancels: Cancels::default(),
        })
    }
}

impl WireConnector {
    /// The first connection: like pgbench, asks for a password if the server wants one and
    /// none is known; the answer serves the later connections.
    pub async fn connect_first(&mut self, sink: &dyn pgrig_engine::sink::Sink) -> DbResult<WireDb> {
        let conn = pgrig_engine::ask::connect_asking(&mut self.config, sink)
            .await
            .map_err(failure)?;
        Ok(self.wrap(conn))
    }

    fn wrap(&self, conn: Connection) -> WireDb {
        let id = self.cancels.add(conn.cancel_token());
        WireDb {
            conn,
            id,
            cancels: self.cancels.clone(),
        }
    }
}

impl Connector for WireConnector {
    type Db = WireDb;

    async fn connect(&self) -> DbResult<WireDb> {
        let conn = Connection::connect(&self.config).await.map_err(failure)?;
        let id = self.cancels.add(conn.cancel_token());
        Ok(WireDb {
            conn,
            id,
            cancels: self.cancels.clone(),
        })
    }
}

pub struct WireDb {
    conn: Connection,
    id: u64,
    cancels: Cancels,
}

impl WireDb {
    /// The server runs on this host (Unix socket or loopback address).
    pub fn is_local(&self) -> bool {
        match self.conn.addr() {
            Addr::Unix(_) => true,
            Addr::Tcp(sa) => sa.ip().is_loopback(),
        }
    }
}

impl Drop for WireDb {
    fn drop(&mut self) {
        self.cancels.remove(self.id);
    }
}

impl InitDb for WireDb {
    fn server_version_num(&self) -> i32 {
        self.conn.server_version_num()
    }

    async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute_simple(sql).await.map_err(failure)
    }

    async fn query_value(&mut self, sql: &str) -> DbResult<Option<String>> {
        let results = self.conn.simple_query(sql).await.map_err(failure)?;
        Ok(results
            .first()
            .and_then(|r| r.rows.first())
            .and_then(|row| row.get(0))
            .map(str::to_owned))
    }

    async fn copy_start(&mut self, sql: &str) -> DbResult<()> {
        self.conn.query(sql.as_bytes());
        self.conn.send().await.map_err(failure)?;
        loop {
            match self.conn.recv().await.map_err(failure)? {
                Backend::CopyInResponse => return Ok(()),
                Backend::Error(e) => {
                    let e = e.to_db_error().with_query(sql);
                    self.conn.skip_until_ready().await.map_err(failure)?;
                    return Err(DbFailure::new(e.to_string()));
                }
                Backend::ReadyForQuery(_) => {
                    return Err(DbFailure::new(
                        "the statement did not start COPY FROM STDIN",
                    ))
                }
                _ => {}
            }
        }
    }

    async fn copy_data(&mut self, data: &[u8]) -> DbResult<()> {
        for piece in data.chunks(SEND_AT) {
            self.conn.copy_data(piece);
            if self.conn.pending_bytes() >= SEND_AT {
                self.conn.send().await.map_err(failure)?;
            }
        }
        Ok(())
    }

    async fn copy_end(&mut self) -> DbResult<()> {
        self.conn.copy_done();
        self.conn.send().await.map_err(failure)?;
        let mut error = None;
        loop {
            match self.conn.recv().await.map_err(failure)? {
                Backend::Error(e) => {
                    error.get_or_insert_with(|| e.to_db_error());
                }
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(DbFailure::new(e.to_string())),
            None => Ok(()),
        }
    }

    fn take_notices(&mut self) -> Vec<String> {
        self.conn
            .take_notices()
            .into_iter()
            .map(|n| n.to_string())
            .collect()
    }
}
