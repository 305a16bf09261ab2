//! `--compare`'s replayed side: each statement sent is keyed by its normalised form
//! ([`crate::normalize::fingerprint`]; an execution of a prepared statement by the statement its
//! session prepared under that name) and its latency (send to ReadyForQuery, less the
//! connection's round trip: [`round_trip`]) or its error is counted in the replay's [`crate::tally::Tallies`]. Nothing is allocated per statement: the
//! normalised text is made once per distinct statement, names once per session.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use pgrig_wire::{Backend, Connection};

use super::shared::Shared;
use crate::item::ItemKind;
use crate::normalize::{fingerprint, normalize};

/// A session's prepared statements: name → key.
#[derive(Default)]
pub struct Measure {
    prepared: HashMap<Vec<u8>, u64>,
}

impl Measure {
    /// The key the latency of `kind` is counted under (`None`: not counted — a Prepare, whose
    /// round trip the log does not time, or an execution of a name never prepared).
    pub fn key(&mut self, shared: &Shared, kind: &ItemKind) -> Option<u64> {
        let (stmt, name) = match kind {
            ItemKind::Execute { statement } => (statement, None),
            ItemKind::Prepare { name, statement } => (statement, Some(name)),
            ItemKind::ExecPrepared { name, .. } => return self.prepared.get(name).copied(),
            _ => return None,
        };
        let key = fingerprint(stmt);
        let mut m = shared.measured.borrow_mut();
        if !m.contains(key) {
            m.entry(key, || normalize(stmt));
        }
        match name {
            None => Some(key),
            Some(n) => {
                match self.prepared.get_mut(n) {
                    Some(k) => *k = key,
                    None => {
                        self.prepared.insert(n.clone(), key);
                    }
                }
                None
            }
        }
    }
}

/// Counts one statement: its latency, or its first error (SQLSTATE, message).
pub fn done(shared: &Shared, key: u64, took: Duration, error: Option<&(String, String)>) {
    let mut m = shared.measured.borrow_mut();
    match error {
        None => m.record(key, took.as_micros().min(u128::from(u64::MAX)) as u64),
        Some((code, message)) => m.error(key, code, message),
    }
}

/// Empty round trips timed on a new connection ([`round_trip`]).
const ROUND_TRIPS: usize = 5;

/// The connection's round trip: the least of [`ROUND_TRIPS`] empty ones (a Sync answered by
/// ReadyForQuery), what a statement's latency holds besides the server's own time. Zero if the
/// connection fails (the replay finds out with its first statement).
pub async fn round_trip(conn: &mut Connection) -> Duration {
    let mut least = Duration::MAX;
    for _ in 0..ROUND_TRIPS {
        conn.sync();
        let t = Instant::now();
        if conn.send().await.is_err() {
            return Duration::ZERO;
        }
        loop {
            match conn.recv().await {
                Ok(Backend::ReadyForQuery(_)) => break,
                Ok(_) => {}
                Err(_) => return Duration::ZERO,
            }
        }
        least = least.min(t.elapsed());
    }
    least
}
