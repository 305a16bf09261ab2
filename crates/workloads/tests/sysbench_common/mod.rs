//! Shared by the sysbench tests: the real sysbench 1.0.20 (the oracle) pointed at a test
//! database, and pgrig's loader.
#![allow(dead_code)]

use std::process::Command;

use pgrig_engine::config::ConnArgs;
use pgrig_engine::sink::NullSink;
use pgrig_engine::stop::StopHandle;
use pgrig_init::generic::{load, LoadPlan, LoadReport};
use pgrig_testkit::TestDb;

/// The installed sysbench; a missing oracle fails the test.
pub use pgrig_testkit::sysbench_oracle as oracle;

/// `sysbench --db-driver=pgsql ... ARGS` against `db` (over the unix socket).
pub fn sysbench(db: &TestDb, args: &[&str]) -> Command {
    db.sysbench_command(oracle(), args)
}

/// Runs sysbench and returns its stdout; panics with its output when it fails.
pub fn run_sysbench(db: &TestDb, args: &[&str]) -> String {
    let out = sysbench(db, args).output().expect("sysbench runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "sysbench {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Loads `plan` into `db` with pgrig's generic loader.
pub fn pgrig_load(db: &TestDb, plan: &LoadPlan, jobs: usize) -> Result<LoadReport, String> {
    let conn = ConnArgs {
        dbname: Some(db.conninfo()),
        ..ConnArgs::default()
    };
    load(&conn, plan, jobs, &NullSink, &StopHandle::default()).map_err(|e| {
        e.lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The statements `db` received, as the server logged them (`log_statement = all` with
/// `log_line_prefix = '%d|%p|'`): prepared ones as their text with `$n`, plain ones as sent.
pub fn logged_statements(log: &str, db: &str) -> Vec<String> {
    let prefix = format!("{db}|");
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix('\t') {
            if open {
                let last = out.last_mut().unwrap();
                last.push('\n');
                last.push_str(rest);
            }
            continue;
        }
        open = false;
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let Some((_, msg)) = rest.split_once('|') else {
            continue;
        };
        if let Some(sql) = msg.strip_prefix("LOG:  statement: ") {
            out.push(sql.to_string());
            open = true;
        } else if let Some(named) = msg.strip_prefix("LOG:  execute ") {
            if let Some((_, sql)) = named.split_once(": ") {
                out.push(sql.to_string());
                open = true;
            }
        }
    }
    out
}

/// `sql` with every number (a run of digits, signed unless it follows a digit) replaced by
/// `N` (ids, keys, c and pad digit groups, table numbers), so statements compare by shape.
pub fn shape(sql: &str) -> String {
    let mut s = String::with_capacity(sql.len());
    let mut in_digits = false;
    let b = sql.as_bytes();
    for (i, ch) in sql.chars().enumerate() {
        let sign = ch == '-'
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && !(i > 0 && b[i - 1].is_ascii_digit());
        if sign {
            continue;
        }
        if ch.is_ascii_digit() {
            if !in_digits {
                s.push('N');
            }
            in_digits = true;
        } else {
            s.push(ch);
            in_digits = false;
        }
    }
    s
}
