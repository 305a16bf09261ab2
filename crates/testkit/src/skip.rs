//! A test that cannot check what it is for on this machine (its oracle, a tool or root is
//! missing) never passes silently: [`skip`] fails it, naming what is missing, when
//! `PGRIG_NO_SKIP=1` (CI sets it: there everything must run); otherwise it says `SKIPPED:` on
//! standard error and appends the line to the file `PGRIG_SKIP_LOG` names, which `./test`
//! prints at the end (cargo hides a passing test's output). Std only: the crates that the
//! test kit itself depends on include this file by path.

use std::io::Write;

/// Reports that the calling test cannot run here for `why` (the caller then returns), or fails
/// it when skipping is not allowed (`PGRIG_NO_SKIP=1`).
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if std::env::var_os("PGRIG_NO_SKIP").is_some_and(|v| v == "1") {
        panic!("{test} cannot run here: {why} (PGRIG_NO_SKIP=1: every test must run)");
    }
    eprintln!("SKIPPED: {why}");
    if let Some(log) = std::env::var_os("PGRIG_SKIP_LOG") {
        let line = format!("{test}: {why}\n");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}
