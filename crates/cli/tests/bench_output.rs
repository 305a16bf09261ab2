//! Where `pgrig bench` writes what: the version banner first on standard output (pgbench's
//! line, naming pgrig and the server), and with `--json -` nothing but the JSON on standard
//! output (banner and text report move to standard error).

use crate::common;

use common::{pgbench_init, pgrig_bench};
use pgrig_testkit::fresh_db;

#[test]
fn banner_names_pgrig_and_the_server_before_the_report() {
    let db = fresh_db("banner");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-S", "-t", "5", "-n"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let first = out.stdout.lines().next().unwrap_or("");
    let server = db.psql("show server_version");
    assert_eq!(
        first,
        format!(
            "pgrig (pgrig {}, server {})",
            env!("CARGO_PKG_VERSION"),
            server.trim()
        ),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .lines()
        .nth(1)
        .unwrap_or("")
        .starts_with("transaction type: "));
}

#[test]
fn json_to_stdout_leaves_stdout_pure_json() {
    let db = fresh_db("json_stdout");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-S", "-t", "20", "-c", "2", "-n", "--json", "-"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not just JSON ({e}):\n{}", out.stdout));
    assert!(v["tps"].as_f64().unwrap() > 0.0);
    assert!(
        out.stderr
            .contains("transaction type: <builtin: select only>"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("(pgrig "),
        "banner on stderr: {}",
        out.stderr
    );
}
