//! Shared by the sysbench tests: the real sysbench 1.0.20 (the oracle) pointed at a test
//! database, and pgrig's loader.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

use pgrig_engine::config::ConnArgs;
use pgrig_engine::sink::NullSink;
use pgrig_engine::stop::StopHandle;
use pgrig_init::generic::{load, LoadPlan, LoadReport};
use pgrig_testkit::TestDb;

/// The installed sysbench; a missing oracle fails the test.
pub fn oracle() -> PathBuf {
    let p = PathBuf::from(std::env::var("PGRIG_SYSBENCH").unwrap_or("/usr/bin/sysbench".into()));
    assert!(
        p.exists(),
        "sysbench 1.0.20 (the oracle of these tests) is not installed at {}: apt-get install sysbench",
        p.display()
    );
    p
}

/// `sysbench --db-driver=pgsql ... ARGS` against `db` (over the unix socket).
pub fn sysbench(db: &TestDb, args: &[&str]) -> Command {
    let server = db.server();
    let mut cmd = db.command(oracle());
    cmd.arg("--db-driver=pgsql")
        .arg(format!("--pgsql-host={}", server.socket_dir().display()))
        .arg(format!("--pgsql-port={}", server.port()))
        .arg(format!("--pgsql-user={}", server.user()))
        .arg(format!("--pgsql-db={}", db.name))
        .args(args);
    cmd
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
