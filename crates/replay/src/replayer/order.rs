//! The replay's order of statements (docs/replay.md, "The order of statements"): an item is
//! sent when it is due, after every item logged before it has been sent (log order, as
//! pgreplay dispatches), when its own session has its previous answer, and while no earlier
//! statement of another session is still running — unless that statement waits for a lock, or
//! has run for as long as it ran ahead of this one in the recording (and at least [`SETTLE`]).
//! When the next item's session waits for a lock held by a session of the replay whose next
//! item is further on in the log, that session's items are let go first ([`Gate::Release`]),
//! so strict log order never hangs where the server granted a lock in another order.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::locks::Locks;
use super::shared::{OrderMode, Running, Shared, Slot};

/// How long a running statement keeps later statements of other sessions back at least
/// (unless it waits for a lock, or finishes).
pub const SETTLE: Duration = Duration::from_secs(1);
/// How often `pg_locks` is looked at while the dispatcher waits for a running statement.
const POLL: Duration = Duration::from_millis(2);
/// Without a look at `pg_locks`: how long a session's statement may keep the dispatcher back
/// before the sessions idle inside a transaction are let go.
const STUCK: Duration = Duration::from_secs(1);

/// What the dispatcher does next with the item at the head of the log.
pub enum Gate {
    /// send it
    Go,
    /// first send the next item of each of these sessions (they hold a lock the head waits for)
    Release(Vec<u64>),
    /// the replay stops
    Stop,
}

/// The sessions as the dispatcher orders by them.
#[derive(Default)]
pub struct Order {
    slots: HashMap<u64, Rc<Slot>>,
    /// sessions that were busy when last looked at
    busy: Vec<u64>,
    locks: Locks,
}

impl Order {
    /// A new session's slot (busy: connecting).
    pub fn open(&mut self, id: u64, user: &[u8], database: &[u8]) -> Rc<Slot> {
        let slot = Rc::new(Slot::default());
        slot.busy.set(true);
        self.slots.insert(id, slot.clone());
        self.busy.push(id);
        self.locks.remember(user, database);
        slot
    }

    /// The session disconnects: it no longer orders anything.
    pub fn close(&mut self, id: u64) {
        self.slots.remove(&id);
    }

    /// A statement (or the disconnection: `recorded` None) of session `id` is sent now.
    pub fn sent(&mut self, id: u64, recorded: Option<i64>) {
        if let Some(s) = self.slots.get(&id) {
            if !s.busy.get() {
                self.busy.push(id);
            }
            s.busy.set(true);
            s.lock_wait.set(false);
            s.running.set(recorded.map(|recorded| Running {
                recorded,
                sent: Instant::now(),
            }));
        }
        // without waits (`--order sessions`) nothing else prunes the list
        if self.busy.len() > 2 * self.slots.len() + 16 {
            let slots = &self.slots;
            self.busy
                .retain(|b| slots.get(b).is_some_and(|s| s.busy.get()));
        }
    }

    /// Waits until the item of session `id` recorded at `recorded` (µs) may be sent.
    pub async fn wait(&mut self, shared: &Shared, id: u64, recorded: i64, speed: f64) -> Gate {
        // the first look at pg_locks after waiting for POLL: most statements answer sooner
        let began = Instant::now();
        loop {
            if shared.stopping() {
                return Gate::Stop;
            }
            let slots = &self.slots;
            self.busy
                .retain(|b| slots.get(b).is_some_and(|s| s.busy.get()));
            let Some(own) = self.slots.get(&id).cloned() else {
                return Gate::Go; // routing reports the missing session
            };
            let now = Instant::now();
            let (clear, until) = if shared.opts.order == OrderMode::Strict {
                self.others_clear(id, recorded, speed, now)
            } else {
                (true, None)
            };
            if clear && !own.busy.get() {
                return Gate::Go;
            }
            if own.busy.get() {
                if let Some(ids) = self.stuck(&own, now) {
                    return Gate::Release(ids);
                }
            }
            let poll = self.locks.next_poll(POLL).map(|t| t.max(began + POLL));
            let wake = match (until, poll) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).unwrap_or(now + STUCK),
            };
            tokio::select! {
                _ = shared.changed.notified() => {}
                _ = tokio::time::sleep_until(wake.into()) => {}
                _ = shared.failed.notified() => {}
            }
            if poll.is_some_and(|t| t <= Instant::now()) {
                self.locks
                    .poll(shared, self.busy.iter().filter_map(|b| self.slots.get(b)))
                    .await;
            }
        }
    }

    /// Whether no running statement of another session keeps an item recorded at `recorded`
    /// back; else the earliest time one stops doing so by its running time.
    fn others_clear(
        &self,
        id: u64,
        recorded: i64,
        speed: f64,
        now: Instant,
    ) -> (bool, Option<Instant>) {
        let mut until: Option<Instant> = None;
        for b in self.busy.iter().filter(|b| **b != id) {
            let Some(s) = self.slots.get(b) else { continue };
            let Some(r) = s.running.get() else { continue };
            if s.lock_wait.get() {
                continue;
            }
            let ahead = (recorded - r.recorded).max(0) as f64 / 1e6 / speed;
            let t = r.sent + Duration::from_secs_f64(ahead).max(SETTLE);
            if t > now {
                until = Some(until.map_or(t, |u| u.min(t)));
            }
        }
        (until.is_none(), until)
    }

    /// The head's own session is busy: the sessions to let go first, when it waits for a lock
    /// held by idle sessions of the replay (without `pg_locks`: when it has kept the dispatcher
    /// back for [`STUCK`], every session idle inside a transaction).
    fn stuck(&mut self, own: &Slot, now: Instant) -> Option<Vec<u64>> {
        let idle = |s: &Slot| !s.busy.get();
        let ids: Vec<u64> = if self.locks.available() {
            if !own.lock_wait.get() {
                return None;
            }
            let pids = self.locks.blockers();
            self.slots
                .iter()
                .filter(|(_, s)| idle(s) && s.pid.get() != 0 && pids.contains(&s.pid.get()))
                .map(|(id, _)| *id)
                .collect()
        } else {
            let since = own.running.get()?.sent;
            if now.saturating_duration_since(since) < STUCK {
                return None;
            }
            self.slots
                .iter()
                .filter(|(_, s)| idle(s) && s.in_tx.get())
                .map(|(id, _)| *id)
                .collect()
        };
        if ids.is_empty() {
            return None;
        }
        self.locks.forget();
        Some(ids)
    }
}
