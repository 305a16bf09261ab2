//! pgrig's `--json FILE` and `--store PATH` on sysbench's command line, for a bundled test name
//! (the native path): the document's events are the report's, the stored run reads back as the
//! same figures and never holds `--pgsql-password`; a destination that cannot take the document
//! (`--json -`, a missing directory, a password in the store's URL) is refused before anything
//! runs, status 1, as sysbench's FATAL errors.

use crate::sysbench_common;

use pgrig_results::document::RunDocument;
use pgrig_testkit::fresh_db;
use sysbench_common::pgrig;

fn events(report: &str) -> u64 {
    let line = (report.lines())
        .find(|l| l.trim_start().starts_with("total number of events:"))
        .unwrap_or_else(|| panic!("no events line in\n{report}"));
    line.split(':').nth(1).unwrap().trim().parse().unwrap()
}

#[test]
fn a_bundled_tests_run_writes_and_stores_its_document_without_the_password() {
    let db = fresh_db("sb_outputs");
    let prep = pgrig(&db, &["oltp_point_select", "--table-size=100", "prepare"]);
    assert_eq!(prep.code, Some(0), "{}", prep.stdout);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let store = dir.path().join("runs.db");
    let (j, s) = (
        format!("--json={}", json.display()),
        format!("--store={}", store.display()),
    );
    let args = [
        "oltp_point_select",
        "--table-size=100",
        "--events=200",
        "--time=0",
        "--threads=2",
        "--pgsql-password=hunter2secret",
        &j,
        &s,
        "run",
    ];
    let out = pgrig(&db, &args);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc.workload.as_deref(), Some("oltp_point_select"));
    assert_eq!(doc.transactions.ok, events(&out.stdout));
    assert_eq!(doc.transactions.ok, 200);
    let mut e = std::process::Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json", "--store"])
        .arg(&store);
    let exported = pgrig_testkit::run(e);
    assert_eq!(exported.code, Some(0), "{}", exported.stderr);
    assert!(
        !exported.stdout.contains("hunter2secret"),
        "{}",
        exported.stdout
    );
    let runs: Vec<serde_json::Value> = serde_json::from_str(&exported.stdout).unwrap();
    assert_eq!(runs.len(), 1);
    let v = pgrig_results::view::RunView::of(&runs[0]);
    assert_eq!(v.transactions.ok, Some(200.0));
    assert_eq!(v.tps, Some(doc.tps));
}

#[test]
fn a_destination_that_cannot_take_the_document_is_refused_before_the_run() {
    let db = fresh_db("sb_outputs_bad");
    let dir = tempfile::tempdir().unwrap();
    let missing = format!(
        "--json={}",
        dir.path().join("no/such/dir/run.json").display()
    );
    for (arg, says) in [
        (
            "--json=-",
            "FATAL: --json -: sysbench's report is on standard output",
        ),
        (
            missing.as_str(),
            "FATAL: --json: could not open JSON result file",
        ),
        (
            "--store=postgresql://u:pw@localhost/db",
            "FATAL: --store: a password in the store's URL",
        ),
    ] {
        let out = pgrig(&db, &["oltp_point_select", arg, "run"]);
        assert_eq!(out.code, Some(1), "{arg}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(says), "{arg}: {}", out.stdout);
        assert!(!out.stdout.contains("Threads started"), "{}", out.stdout);
        // the same for a script
        let script = dir.path().join("s.lua");
        std::fs::write(&script, "function event() end\n").unwrap();
        let out = pgrig(&db, &[script.to_str().unwrap(), arg, "run"]);
        assert_eq!(out.code, Some(1), "{arg}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(says), "{arg}: {}", out.stdout);
        assert!(!out.stdout.contains("Threads started"), "{}", out.stdout);
    }
}
