//! The PostgreSQL results store (`--store postgresql://…`) on the test cluster: a tiny study is
//! stored in schema `pgrig` (same tables as the SQLite store), read back by `results
//! list|show|export`, resumed without repeating a run, and no password lands in it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD"] {
        c.env_remove(v);
    }
    pgrig_testkit::run(c)
}

const STUDY: &str = r#"
name = "pg-store"
[target]
fast = true
[dataset]
scale = 1
[workload]
transactions = 20
[matrix]
clients = [1, 2]
"#;

#[test]
fn postgres_store_keeps_runs_resumes_and_holds_no_password() {
    let db = pgrig_testkit::fresh_db("study_pg_store");
    let dir = tempfile::tempdir().unwrap();
    // the store URL's password (ignored by a trust server) must not be stored or shown
    let sep = if db.url().contains('?') { '&' } else { '?' };
    let secret = if db.server().password().is_none() {
        "&password=hunter2"
    } else {
        ""
    };
    let store = format!("{}{sep}application_name=pgrig_store{secret}", db.url());
    std::fs::write(dir.path().join("s.toml"), STUDY).unwrap();

    let out = pgrig(dir.path(), &["study", "s.toml", "--store", &store]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(db.psql("SELECT count(*) FROM pgrig.runs"), "2");
    assert_eq!(db.psql("SELECT count(*) FROM pgrig.studies"), "1");
    // the same columns as the SQLite store, JSON as jsonb
    let cols = db.psql(
        "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns \
         WHERE table_schema = 'pgrig' AND table_name = 'runs'",
    );
    assert_eq!(
        cols,
        "id,study_id,run_index,point,repetition,round,target,started_at,finished_at,tps,result,provenance,series,histogram"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM pgrig.runs WHERE (result->'transactions'->>'ok')::int > 0"),
        "2"
    );
    let dump = db.psql(
        "SELECT s.text || r.result::text || r.provenance::text FROM pgrig.runs r \
         JOIN pgrig.studies s ON s.id = r.study_id",
    );
    assert!(!dump.contains("hunter2"), "password stored: {dump}");
    assert!(!out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"));

    // again: resumed, nothing repeated
    let again = pgrig(dir.path(), &["study", "s.toml", "--store", &store]);
    assert!(again.success(), "{}", again.stderr);
    assert!(again.stdout.contains("(0 this time)"), "{}", again.stdout);
    assert_eq!(db.psql("SELECT count(*) FROM pgrig.runs"), "2");

    let export = pgrig(
        dir.path(),
        &["results", "export", "--format", "json", "--store", &store],
    );
    assert!(export.success(), "{}", export.stderr);
    let runs: Vec<Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 2);
    let clients: Vec<u64> = runs
        .iter()
        .map(|r| r["point"]["clients"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [1, 2]);
    for r in &runs {
        assert_eq!(r["study"], "pg-store");
        assert!(r["tps"].as_f64().unwrap() > 0.0);
    }
    let list = pgrig(dir.path(), &["results", "list", "--store", &store]);
    assert!(
        list.success() && list.stdout.contains("pg-store"),
        "{}",
        list.stdout
    );
    let id = runs[0]["run_id"].to_string();
    let show = pgrig(dir.path(), &["results", "show", &id, "--store", &store]);
    assert!(show.success(), "{}", show.stderr);
    let v: Value = serde_json::from_str(&show.stdout).unwrap();
    assert!(v["study_text"].as_str().unwrap().contains("pg-store"));
    assert!(v["histogram"]["buckets"].is_array(), "{}", v["histogram"]);
    assert!(v["finished_at"].as_str().unwrap().ends_with('Z'));

    // an unreachable store fails with the URL (without password) named
    let bad = pgrig(
        dir.path(),
        &[
            "study",
            "s.toml",
            "--store",
            "postgresql://u:hunter2@127.0.0.1:1/none",
        ],
    );
    assert!(!bad.success());
    assert!(bad.stderr.contains("127.0.0.1:1"), "{}", bad.stderr);
    assert!(!bad.stderr.contains("hunter2"), "{}", bad.stderr);
}
