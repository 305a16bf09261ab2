//! Shared by the `lua_segments*` tests: a script run's coordinator (`sysbench SCRIPT.lua
//! --segments N --coordinator URL … run` through the `sysbench` link) and its workers (`pgrig
//! worker --segment I/N --lua-script FILE`), both on the test database, and bounded waits.
#![allow(dead_code)]

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common;
use crate::sysbench_common::{command, link};
use pgrig_testkit::{CmdOutput, TestDb};

/// `c` to its end (at most two minutes: a hung process fails the test with its output).
pub fn wait(c: Child) -> CmdOutput {
    common::finish_within(c, Duration::from_secs(120))
}

/// The coordinator through the `sysbench` link (with the database's `--pgsql-*` options).
pub fn coordinator(db: &TestDb, file: &Path, n: u32, args: &[&str]) -> Child {
    let f = file.display().to_string();
    let seg = format!("--segments={n}");
    let coord = format!("--coordinator={}", db.url());
    let mut all = vec![f.as_str(), seg.as_str(), coord.as_str()];
    all.extend(args);
    all.push("run");
    common::spawn_piped(command(link(), db, &all))
}

/// `pgrig worker --segment I/N --lua-script FILE EXTRA` (its target: the database's `PG*`;
/// EXTRA holds `--wait`).
pub fn worker(db: &TestDb, i: u32, n: u32, file: &Path, extra: &[&str]) -> Child {
    let mut c = common::pgrig_cmd(db);
    c.args(["worker", "--segment", &format!("{i}/{n}")])
        .args(["--coordinator", &db.url(), "--lua-script"])
        .arg(file)
        .args(extra);
    common::spawn_piped(c)
}

/// `s` as an SQL string literal.
pub fn sql_lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Polls `sql` (at most 30 s) until it answers something other than `""`/`f`.
pub fn poll(db: &TestDb, sql: &str) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let v = db.try_psql(sql).unwrap_or_default();
        if !v.trim().is_empty() && v.trim() != "f" {
            return v.trim().to_string();
        }
        assert!(Instant::now() < until, "no answer to {sql}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
