//! What the log says each statement took and which failed: the recorded side of `pgrig replay
//! --compare`, per normalised statement ([`crate::tally`]).
//!
//! * `duration: X ms  statement: S` and `duration: X ms  execute NAME: S`
//!   (`log_min_duration_statement = 0`): S took X ms.
//! * `statement: S` or `execute NAME: S` (`log_statement`) followed, in the same session, by a
//!   bare `duration: X ms`: S took X ms. `parse` and `bind` durations are not counted (the
//!   replayed latency of an execution covers its Bind, Execute and Sync).
//! * `ERROR:` in a session: the error of the statement the session logged and that has no
//!   duration yet; else of the `STATEMENT:` line that follows it (stderr logs,
//!   `log_min_error_statement`); else of "(statement not logged)". The log does not carry the
//!   SQLSTATE (pgreplay's `log_line_prefix` has no `%e`), so recorded errors are told by their
//!   message.

use std::collections::HashMap;

use crate::entry::{Entry, Severity};
use crate::normalize::{fingerprint, normalize};
use crate::tally::Tallies;

/// The key under which errors of statements the log did not show are counted.
pub const NOT_LOGGED: &str = "(statement not logged)";

#[derive(Default)]
struct Session {
    /// a statement logged without its duration yet
    awaiting: Option<u64>,
    /// an error whose statement is not known yet
    error: Option<String>,
}

/// Collects the recorded side from a log's entries, as the parser reads them.
#[derive(Default)]
pub struct Recorder {
    tallies: Tallies,
    sessions: HashMap<u64, Session>,
}

fn key_of(tallies: &mut Tallies, stmt: &[u8]) -> u64 {
    let key = fingerprint(stmt);
    tallies.entry(key, || normalize(stmt));
    key
}

/// The statement text of `statement: S` or `execute NAME: S`.
fn statement_of(m: &[u8]) -> Option<&[u8]> {
    if let Some(s) = m.strip_prefix(b"statement: ") {
        return Some(s);
    }
    let rest = m.strip_prefix(b"execute ")?;
    let colon = rest.iter().position(|&b| b == b':')?;
    Some(rest.get(colon + 2..).unwrap_or(b""))
}

/// `duration: X ms[  BODY]`: (X in µs, BODY).
fn duration_of(m: &[u8]) -> Option<(u64, &[u8])> {
    let rest = m.strip_prefix(b"duration: ")?;
    let end = rest.windows(3).position(|w| w == b" ms")?;
    let ms: f64 = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    if !ms.is_finite() || ms < 0.0 {
        return None;
    }
    let body = &rest[end + 3..];
    let body = body.strip_prefix(b"  ").unwrap_or(body);
    Some(((ms * 1000.0).round() as u64, body))
}

impl Recorder {
    /// Looks at one entry (before the parser rewrites `duration:` entries).
    pub fn observe(&mut self, e: &Entry) {
        let s = self.sessions.entry(e.session).or_default();
        let t = &mut self.tallies;
        let mut gone = false;
        match e.severity {
            Severity::Log => {
                if let Some(m) = s.error.take() {
                    let k = key_of(t, NOT_LOGGED.as_bytes());
                    t.error(k, "", &m);
                }
                if let Some((us, body)) = duration_of(&e.message) {
                    let key = if body.is_empty() {
                        s.awaiting.take()
                    } else {
                        statement_of(body).map(|st| key_of(t, st))
                    };
                    if let Some(k) = key {
                        t.record(k, us);
                    }
                } else if let Some(st) = statement_of(&e.message) {
                    s.awaiting = Some(key_of(t, st));
                } else if e.message.starts_with(b"disconnection: ") {
                    gone = true;
                }
            }
            Severity::Error => {
                let m = String::from_utf8_lossy(&e.message).into_owned();
                match s.awaiting.take() {
                    Some(k) => t.error(k, "", &m),
                    None => s.error = Some(m),
                }
            }
            Severity::Statement => {
                if let Some(m) = s.error.take() {
                    let k = key_of(t, &e.message);
                    t.error(k, "", &m);
                }
            }
            Severity::Fatal | Severity::Other => {}
        }
        if gone {
            self.sessions.remove(&e.session);
        }
    }

    /// Executions with a duration so far.
    pub fn timed(&self) -> u64 {
        self.tallies.timed()
    }

    /// The recorded side, once the log is read.
    pub fn finish(mut self) -> Tallies {
        for (_, s) in self.sessions.drain() {
            if let Some(m) = s.error {
                let k = key_of(&mut self.tallies, NOT_LOGGED.as_bytes());
                self.tallies.error(k, "", &m);
            }
        }
        self.tallies
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn entry(session: u64, severity: Severity, msg: &str) -> Entry {
        Entry {
            time: Timestamp::default(),
            user: vec![],
            database: vec![],
            session,
            severity,
            message: msg.as_bytes().to_vec(),
            detail: None,
        }
    }

    fn count(t: &Tallies, stmt: &str) -> (u64, u64) {
        let s = t.get(fingerprint(stmt.as_bytes())).unwrap();
        (s.latency_us.len(), s.error_count())
    }

    #[test]
    fn durations_with_and_after_their_statements_are_counted() {
        let mut r = Recorder::default();
        let log = Severity::Log;
        r.observe(&entry(1, log, "duration: 0.250 ms  statement: select 1"));
        r.observe(&entry(
            1,
            log,
            "duration: 1.5 ms  execute <unnamed>: select $1",
        ));
        r.observe(&entry(
            1,
            log,
            "duration: 0.1 ms  parse <unnamed>: select $1",
        ));
        r.observe(&entry(2, log, "statement: select 2"));
        r.observe(&entry(1, log, "statement: select 7"));
        r.observe(&entry(2, log, "duration: 2.000 ms"));
        r.observe(&entry(1, log, "duration: 3.000 ms"));
        let t = r.finish();
        assert_eq!(count(&t, "select 1"), (3, 0));
        assert_eq!(count(&t, "select $1"), (1, 0));
        let s = t.get(fingerprint(b"select 1")).unwrap();
        assert!(s.latency_us.equivalent(s.latency_us.max(), 3000));
    }

    #[test]
    fn errors_go_to_the_logged_statement_or_the_statement_line_after_them() {
        let mut r = Recorder::default();
        r.observe(&entry(1, Severity::Log, "statement: select * from gone"));
        r.observe(&entry(
            1,
            Severity::Error,
            "relation \"gone\" does not exist",
        ));
        r.observe(&entry(2, Severity::Error, "division by zero"));
        r.observe(&entry(2, Severity::Statement, "select 1/0"));
        r.observe(&entry(3, Severity::Error, "division by zero"));
        let t = r.finish();
        assert_eq!(count(&t, "select * from gone"), (0, 1));
        assert_eq!(count(&t, "select 1/0"), (0, 1));
        assert_eq!(count(&t, NOT_LOGGED), (0, 1));
    }
}
