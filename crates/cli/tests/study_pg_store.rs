//! The PostgreSQL results store (`--store postgresql://…`): a study's runs land in the `pgrig`
//! schema of the given database, one row per finished run; a rerun of the same file resumes
//! (nothing repeated); `results list|show|export` read it back like the SQLite store.

use std::process::Command;

use pgrig_testkit::{fresh_db, run, CmdOutput};
use serde_json::Value;

fn pgrig(dir: &std::path::Path, args: &[&str]) -> CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(dir).args(args);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    run(c)
}

#[test]
fn runs_are_stored_in_postgres_resumed_and_exported() {
    let store_db = fresh_db("pg_store");
    let url = store_db.url();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tiny.toml"),
        "name = \"tiny-pg\"\n[dataset]\nscale = 1\n[workload]\nbuiltin = \"select-only\"\ntransactions = 20\n[matrix]\nclients = [1, 2]\n",
    )
    .unwrap();
    let first = pgrig(dir.path(), &["study", "tiny.toml", "--store", &url]);
    assert_eq!(first.code, Some(0), "{}\n{}", first.stdout, first.stderr);
    assert_eq!(store_db.psql("select count(*) from pgrig.runs").trim(), "2");

    let again = pgrig(dir.path(), &["study", "tiny.toml", "--store", &url]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(
        store_db.psql("select count(*) from pgrig.runs").trim(),
        "2",
        "resumed, not repeated"
    );

    let export = pgrig(
        dir.path(),
        &["results", "export", "--format", "json", "--store", &url],
    );
    assert_eq!(export.code, Some(0), "{}", export.stderr);
    let runs: Vec<Value> = serde_json::from_str(&export.stdout).expect("json");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["study"], "tiny-pg");
    assert_eq!(runs[1]["point"]["clients"], 2);
    assert_eq!(runs[1]["transactions"]["ok"], 40);

    let id = runs[0]["run_id"].as_i64().unwrap().to_string();
    let shown = pgrig(dir.path(), &["results", "show", &id, "--store", &url]);
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    assert!(shown.stdout.contains("study_text"), "{}", shown.stdout);
    let list = pgrig(dir.path(), &["results", "list", "--store", &url]);
    assert!(list.stdout.contains("tiny-pg"), "{}", list.stdout);
}

#[test]
fn an_unreachable_store_fails_without_showing_the_password() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.toml"), "name = \"t\"\n").unwrap();
    let out = pgrig(
        dir.path(),
        &[
            "study",
            "t.toml",
            "--store",
            "postgresql://u:s3cret@127.0.0.1:1/db",
        ],
    );
    assert_ne!(out.code, Some(0));
    assert!(!out.stderr.contains("s3cret"), "{}", out.stderr);
    assert!(out.stderr.contains("127.0.0.1"), "{}", out.stderr);
}
