//! `--compare --replayed-log FILE`: the replayed side measured as the recorded side is — the
//! replay server's own logged durations (`log_min_duration_statement = 0`) of the replay's
//! connections, told by their server process id (the low half of the session id `%c`) and a
//! session start no earlier than the replay's. The log is read after the replay, once the
//! server's collector has stopped writing to it.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::entry::{EntrySource, Format};
use crate::error::Error;
use crate::recorded::Recorder;
use crate::tally::Tallies;

/// How long the log must stay unchanged before it is read, and the longest wait for that.
const QUIET: Duration = Duration::from_millis(500);
const PATIENCE: Duration = Duration::from_secs(10);

/// The log's format, from its first line: `{` a jsonlog; a comma before any `|` a csvlog;
/// else a stderr log (pgreplay's `log_line_prefix` `%m|%u|%d|%c|`).
fn format_of(first: &[u8]) -> Format {
    if first.first() == Some(&b'{') {
        return Format::Json;
    }
    let comma = first.iter().position(|&b| b == b',');
    let bar = first.iter().position(|&b| b == b'|');
    match (comma, bar) {
        (Some(c), Some(b)) if c < b => Format::Csv,
        (Some(_), None) => Format::Csv,
        _ => Format::Stderr,
    }
}

/// Waits until `path` has not grown for [`QUIET`] (at most [`PATIENCE`]).
fn settle(path: &Path) {
    let size = || std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let give_up = std::time::Instant::now() + PATIENCE;
    let mut last = size();
    while std::time::Instant::now() < give_up {
        std::thread::sleep(QUIET);
        let now = size();
        if now == last {
            return;
        }
        last = now;
    }
}

/// The durations and errors the server logged for the connections `backends` (process ids)
/// that started at `since` or later, per normalised statement.
pub fn durations(path: &Path, backends: &[i32], since: SystemTime) -> Result<Tallies, Error> {
    settle(path);
    let name = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| Error(format!("Error: --replayed-log: cannot open {name}: {e}")))?;
    let mut input = BufReader::new(file);
    let format = format_of(input.fill_buf().unwrap_or(&[]));
    let pids: HashSet<u32> = backends.iter().map(|p| *p as u32).collect();
    // %c's first half is the backend's start in whole seconds
    let from = since
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().saturating_sub(1));
    let ours = |session: u64| pids.contains(&(session as u32)) && (session >> 32) >= from;
    let mut src = EntrySource::new(input, format, None, None);
    let mut recorder = Recorder::default();
    loop {
        match src.next_entry() {
            Ok(Some(e)) if ours(e.session) => recorder.observe(&e),
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => return Err(Error(format!("Error: --replayed-log {name}: {e}"))),
        }
    }
    if recorder.timed() == 0 {
        return Err(Error(format!(
            "Error: --replayed-log: {name} holds no durations of the replay's connections; \
             set log_min_duration_statement = 0 on the replay server"
        )));
    }
    Ok(recorder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_the_first_line() {
        assert_eq!(format_of(b"{\"timestamp\":1}"), Format::Json);
        assert_eq!(
            format_of(b"2026-11-28 10:51:18.304 UTC,\"postgres\",\"sb\",1,\"[local]\""),
            Format::Csv
        );
        assert_eq!(
            format_of(b"2026-11-28 10:51:18.304 UTC|postgres|sb|6b0ab226.4d6c|LOG:  x, y"),
            Format::Stderr
        );
    }
}
