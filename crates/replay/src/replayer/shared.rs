//! The replay options, and the state the dispatcher and the session tasks share on the
//! replay's one thread: statistics, the count of sessions with work, each session's state as
//! the dispatcher orders by it, the first failure, and the behind-schedule announcer.

use std::cell::{Cell, RefCell};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;

use super::stats::ReplayStats;
use crate::error::Error;
use crate::item::Item;
use crate::tally::Tallies;

/// pgreplay's replay options.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub host: Option<String>,
    pub port: Option<u16>,
    /// `-W`: one password for every user.
    pub password: Option<String>,
    /// `-E`: the client encoding.
    pub encoding: Option<String>,
    /// `-s`: speed factor (2 replays twice as fast).
    pub speed: f64,
    /// `-j`: skip idle time.
    pub jump: bool,
    /// `--compare`: measure each statement's latency and errors per normalised statement
    pub measure: bool,
    /// `--order`: how statements of different sessions are ordered
    pub order: OrderMode,
}

/// How the dispatcher orders statements of different sessions (docs/replay.md, "The order of
/// statements").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OrderMode {
    /// log order, and earlier statements finish (or wait for a lock) first
    #[default]
    Strict,
    /// log order only, as pgreplay dispatches (a statement may overtake an earlier one)
    Log,
    /// each session on its own: its items at their times, whatever the others do
    Sessions,
}

/// An item handed to its session, with the wall-clock time it was due.
pub struct Msg {
    pub item: Item,
    pub due: SystemTime,
    /// The same on the monotonic clock (after `-j` skipping: when it was handed over).
    pub due_at: Instant,
    /// When the order let it go (lag before this is waiting for the server's answers).
    pub ready_at: Instant,
}

/// A statement on its way: its recorded time and when it was sent.
#[derive(Debug, Clone, Copy)]
pub struct Running {
    /// recorded time, µs since 2000-01-01
    pub recorded: i64,
    pub sent: Instant,
}

/// What the dispatcher knows of one session (see [`super::order`]).
#[derive(Debug, Default)]
pub struct Slot {
    /// connecting, or a statement sent and not yet answered
    pub busy: Cell<bool>,
    /// the statement being answered
    pub running: Cell<Option<Running>>,
    /// the server backend's process id (0 before the connection or without one)
    pub pid: Cell<i32>,
    /// the running statement waits for a lock (as of the latest look at `pg_locks`)
    pub lock_wait: Cell<bool>,
    /// inside a transaction block (the latest ReadyForQuery said so)
    pub in_tx: Cell<bool>,
}

/// Prints one line on standard output.
pub type Say = Box<dyn FnMut(&str)>;

pub struct Shared {
    pub opts: ReplayOptions,
    /// When the replay started (second 0 of the lag report).
    pub start: Instant,
    pub stats: RefCell<ReplayStats>,
    /// `--compare`: latency and errors per normalised statement (empty unless measuring)
    pub measured: RefCell<Tallies>,
    /// Items dispatched and not yet done.
    pub busy: Cell<usize>,
    pub idle: Notify,
    pub failure: RefCell<Option<Error>>,
    /// Ctrl-C: stop dispatching, report what ran.
    pub interrupted: Cell<bool>,
    pub failed: Notify,
    pub say: RefCell<Say>,
    /// how late the latest item consumed was (the progress bar's lag)
    pub last_late: Cell<std::time::Duration>,
    /// a session finished connecting or got its answer (wakes the dispatcher)
    pub changed: Notify,
    /// the server process ids of the replay's connections (the replayed side in the replay
    /// server's own log)
    pub backends: RefCell<Vec<i32>>,
    /// `--compare`: each connection's round trip (the least of a few empty ones), µs
    pub round_trips: RefCell<Vec<u64>>,
}

fn whole_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
    }
}

impl Shared {
    /// Records the first failure; the replay stops.
    pub fn fail(&self, e: Error) {
        let mut f = self.failure.borrow_mut();
        if f.is_none() {
            *f = Some(e);
        }
        self.failed.notify_waiters();
        self.failed.notify_one();
    }

    pub fn has_failed(&self) -> bool {
        self.failure.borrow().is_some()
    }

    /// Failed or interrupted: nothing more is dispatched or sent.
    pub fn stopping(&self) -> bool {
        self.has_failed() || self.interrupted.get()
    }

    /// Ctrl-C was pressed.
    pub fn interrupt(&self) {
        self.interrupted.set(true);
        self.failed.notify_waiters();
        self.failed.notify_one();
    }

    /// One dispatched item is done.
    pub fn done(&self) {
        let b = self.busy.get().saturating_sub(1);
        self.busy.set(b);
        if b == 0 {
            self.idle.notify_waiters();
        }
    }

    /// An item is consumed now: counts the call and the lag behind its due time (whole
    /// seconds of the clock, as pgreplay compares them), announcing new steps; and splits the
    /// exact lag into the time its session was still waiting for the server's answer to the
    /// previous statement (until `free_at`) and the time after that (the replayer's own).
    pub fn consume(&self, due: SystemTime, due_at: Instant, free_at: Instant) {
        let lag = whole_secs(SystemTime::now()) - whole_secs(due);
        let now = Instant::now();
        let late = now.saturating_duration_since(due_at);
        let server = free_at.min(now).saturating_duration_since(due_at);
        let second = due_at.saturating_duration_since(self.start).as_secs();
        self.last_late.set(late);
        let lines = {
            let mut s = self.stats.borrow_mut();
            s.actions += 1;
            s.record_lag(second, late, server);
            s.lag(lag)
        };
        for l in lines {
            (self.say.borrow_mut())(&l);
        }
    }
}
