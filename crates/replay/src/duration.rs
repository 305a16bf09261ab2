//! Logs written with `log_min_duration_statement = 0` (and `log_statement = none`): their
//! `duration: 1.234 ms  statement: ...` and `duration: 1.234 ms  execute NAME: ...` entries are
//! turned into the `statement:` / `execute` entries `log_statement = all` writes, timed at their
//! start (the entry's time minus the duration). pgreplay 1.2 skips them; a `duration:` entry
//! without a statement (when `log_statement` already logged it) stays skipped.

use crate::entry::{Entry, Severity};

/// Rewrites a duration entry that carries a statement; leaves every other entry alone.
pub fn unwrap_duration(e: &mut Entry) {
    if e.severity != Severity::Log {
        return;
    }
    let Some(rest) = e.message.strip_prefix(b"duration: ") else {
        return;
    };
    let Some(ms_end) = rest.windows(5).position(|w| w == b" ms  ") else {
        return;
    };
    let body = &rest[ms_end + 5..];
    if !(body.starts_with(b"statement: ") || body.starts_with(b"execute ")) {
        return;
    }
    let Some(ms) = std::str::from_utf8(&rest[..ms_end])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|m| m.is_finite() && *m >= 0.0)
    else {
        return;
    };
    let start = e.time.micros() - (ms * 1000.0).round() as i64;
    e.time.sec = start.div_euclid(1_000_000);
    e.time.usec = start.rem_euclid(1_000_000) as u32;
    e.message = body.to_vec();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn entry(msg: &str) -> Entry {
        Entry {
            time: Timestamp {
                sec: 10,
                usec: 1000,
            },
            user: vec![],
            database: vec![],
            session: 1,
            severity: Severity::Log,
            message: msg.as_bytes().to_vec(),
            detail: None,
        }
    }

    #[test]
    fn statement_durations_become_statements_at_their_start() {
        let mut e = entry("duration: 2.500 ms  statement: select 1");
        unwrap_duration(&mut e);
        assert_eq!(e.message, b"statement: select 1");
        assert_eq!(
            e.time,
            Timestamp {
                sec: 9,
                usec: 998_500
            }
        );
        let mut e = entry("duration: 0.010 ms");
        unwrap_duration(&mut e);
        assert_eq!(e.message, b"duration: 0.010 ms");
    }
}
