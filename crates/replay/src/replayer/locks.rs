//! Which of the replay's statements wait for a lock, and who holds it: one more connection (as
//! the first recorded session's user, to its database) reads `pg_locks` and
//! `pg_blocking_pids` for the replay's busy backends while the dispatcher waits for them. If it
//! cannot connect, the order falls back on time alone (said once on standard error).

use std::rc::Rc;
use std::time::Instant;

use pgrig_wire::Connection;

use super::session;
use super::shared::{Shared, Slot};

enum State {
    /// not connected yet
    Idle,
    Open(Box<Connection>),
    Unavailable,
}

pub struct Locks {
    state: State,
    /// user and database to connect as (the first session's)
    who: Option<(Vec<u8>, Vec<u8>)>,
    last: Option<Instant>,
    /// backends the waiting statements wait for (as of the latest look)
    blockers: Vec<i32>,
}

impl Default for Locks {
    fn default() -> Self {
        Locks {
            state: State::Idle,
            who: None,
            last: None,
            blockers: Vec::new(),
        }
    }
}

impl Locks {
    /// A recorded session's user and database (the first one is kept).
    pub fn remember(&mut self, user: &[u8], database: &[u8]) {
        if self.who.is_none() {
            self.who = Some((user.to_vec(), database.to_vec()));
        }
    }

    /// Whether `pg_locks` can be (or may yet be) looked at.
    pub fn available(&self) -> bool {
        !matches!(self.state, State::Unavailable)
    }

    /// When the next look is due (`None`: never).
    pub fn next_poll(&self, every: std::time::Duration) -> Option<Instant> {
        if !self.available() {
            return None;
        }
        Some(self.last.map_or_else(Instant::now, |l| l + every))
    }

    /// The backends the replay's waiting statements wait for.
    pub fn blockers(&self) -> &[i32] {
        &self.blockers
    }

    /// Forgets what was seen (sessions were let go: the next decision needs a new look).
    pub fn forget(&mut self) {
        self.blockers.clear();
    }

    /// Looks at the locks the `busy` sessions wait for; sets their `lock_wait`.
    pub async fn poll<'a>(&mut self, shared: &Shared, busy: impl Iterator<Item = &'a Rc<Slot>>) {
        self.last = Some(Instant::now());
        let slots: Vec<&Rc<Slot>> = busy.filter(|s| s.pid.get() != 0).collect();
        if slots.is_empty() {
            return;
        }
        let Some(conn) = self.connection(shared).await else {
            return;
        };
        let pids: Vec<String> = slots.iter().map(|s| s.pid.get().to_string()).collect();
        let sql = format!(
            "SELECT pid, pg_blocking_pids(pid) FROM pg_locks WHERE NOT granted AND pid IN ({})",
            pids.join(",")
        );
        let rows = match conn.simple_query(&sql).await {
            Ok(r) => r,
            Err(e) => {
                self.give_up(&format!("{e}"));
                return;
            }
        };
        let mut waiting = Vec::new();
        self.blockers.clear();
        for row in rows.iter().flat_map(|r| r.rows.iter()) {
            if let Some(pid) = row.get(0).and_then(|p| p.parse::<i32>().ok()) {
                waiting.push(pid);
            }
            let list = row
                .get(1)
                .unwrap_or("{}")
                .trim_matches(|c| c == '{' || c == '}');
            self.blockers
                .extend(list.split(',').filter_map(|p| p.trim().parse::<i32>().ok()));
        }
        for s in slots {
            s.lock_wait
                .set(s.running.get().is_some() && waiting.contains(&s.pid.get()));
        }
    }

    async fn connection(&mut self, shared: &Shared) -> Option<&mut Connection> {
        if let State::Idle = self.state {
            let (user, db) = self.who.clone().unwrap_or_default();
            let conn = match session::config(shared, &user, &db) {
                Ok(c) => Connection::connect(&c).await,
                Err(e) => Err(e),
            };
            match conn {
                Ok(c) => self.state = State::Open(Box::new(c)),
                Err(e) => self.give_up(&format!("{e}")),
            }
        }
        match &mut self.state {
            State::Open(c) => Some(c),
            _ => None,
        }
    }

    fn give_up(&mut self, why: &str) {
        self.state = State::Unavailable;
        self.blockers.clear();
        eprintln!(
            "pgrig replay: cannot look at pg_locks ({why}): lock waits are assumed after 1 s"
        );
    }
}
