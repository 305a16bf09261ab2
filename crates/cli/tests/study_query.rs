//! Query studies end to end (`[workload] query`/`queries`) on throwaway servers: a parallel
//! degree sweep launches the workers it asks for and stores the parsed EXPLAIN JSON; failing and
//! timed-out executions are stored with the server's message while the study goes on; a cold
//! cache reads from the disk (as root; else it is refused with the reason); the plan can come
//! from a separate execution; bad input is reported at its file:line:column.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    pgrig_testkit::run(c)
}

/// Runs `study.toml` with `text` in `dir`; returns the output and the exported runs.
fn study(dir: &Path, text: &str) -> (pgrig_testkit::CmdOutput, Vec<Value>) {
    std::fs::write(dir.join("study.toml"), text).unwrap();
    let out = pgrig(dir, &["study", "study.toml"]);
    let export = pgrig(dir, &["results", "export", "--format", "json"]);
    let runs = serde_json::from_str::<Value>(&export.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    (out, runs)
}

fn list(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}"))
}

/// The executions of the run's only (or named) query.
fn executions<'a>(run: &'a Value, query: &str) -> &'a Vec<Value> {
    let q = list(&run["query"]["queries"])
        .iter()
        .find(|q| q["name"] == query)
        .unwrap_or_else(|| panic!("no query {query} in {}", run["query"]));
    list(&q["executions"])
}

#[test]
fn degree_sweep_launches_the_requested_workers_and_stores_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "sweep"
settings = { autovacuum = "off", jit = "off" }
[target]
fast = true
[dataset]
scale = 2
[workload]
query = "SELECT count(*) FROM pgbench_accounts WHERE filler = 'foo'"
executions = 2
[matrix]
parallel_workers = [0, 1, 2, 4, 8]
"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(runs.len(), 5);
    // 8 workers need more worker processes than the default 8 (the server was restarted)
    let id = runs[4]["run_id"].to_string();
    let shown: Value =
        serde_json::from_str(&pgrig(dir.path(), &["results", "show", &id]).stdout).unwrap();
    let settings = &shown["provenance"]["server_settings"];
    assert_eq!(settings["max_worker_processes"], "10", "{settings}");
    for r in &runs {
        let degree = r["point"]["parallel_workers"].as_u64().unwrap();
        assert_eq!(r["workload"], "query");
        assert_eq!(
            list(&r["query"]["parallel_tables"]),
            &[Value::from("public.pgbench_accounts")]
        );
        let session = &r["query"]["session_settings"];
        assert_eq!(
            session["max_parallel_workers_per_gather"],
            degree.to_string()
        );
        // a parallel plan even for this small table (planner costs zeroed in the session)
        assert_eq!(
            session["parallel_setup_cost"].as_str(),
            (degree > 0).then_some("0")
        );
        let execs = executions(r, "query");
        assert_eq!(execs.len(), 2);
        for e in execs {
            assert_eq!(e["ok"], true, "{e}");
            let s = &e["server"];
            assert_eq!(s["workers_planned"].as_u64(), Some(degree), "{s}");
            assert_eq!(s["workers_launched"].as_u64(), Some(degree), "{s}");
            assert!(s["execution_ms"].as_f64().unwrap() > 0.0);
            assert!(e["client_ms"].as_f64().unwrap() >= s["execution_ms"].as_f64().unwrap());
            // the EXPLAIN JSON as the server gave it, and the nodes parsed from it
            assert!(e["explain"][0]["Plan"]["Node Type"].is_string(), "{e}");
            let scan = list(&s["nodes"])
                .iter()
                .find(|n| n["node_type"] == "Seq Scan")
                .expect("a Seq Scan node");
            assert_eq!(scan["relation"], "public.pgbench_accounts");
            assert_eq!(scan["parallel_aware"], degree > 0);
            let blocks =
                s["shared"]["hit"].as_u64().unwrap() + s["shared"]["read"].as_u64().unwrap();
            assert!(blocks > 0, "{s}");
        }
    }
    // the table at the end and `pgrig results summary` give speedup and efficiency
    for text in [
        out.stdout.clone(),
        pgrig(dir.path(), &["results", "summary", "--study", "sweep"]).stdout,
    ] {
        assert!(text.contains("speedup  effic.  workers"), "{text}");
        let zero = text
            .lines()
            .find(|l| l.starts_with("parallel_workers=0 "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(zero.contains("   1.00    1.00      0/0"), "{zero}");
        let eight = text
            .lines()
            .find(|l| l.starts_with("parallel_workers=8 "))
            .unwrap();
        assert!(eight.contains("8/8"), "{eight}");
    }
}

#[test]
fn failing_and_timed_out_queries_are_stored_and_the_study_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("missing.sql"),
        "SELECT * FROM no_such_table;\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("slow.sql"),
        "-- sleeps past the timeout\nSELECT pg_sleep(30)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("fine.sql"), "SELECT 1").unwrap();
    let started = std::time::Instant::now();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "failures"
[target]
fast = true
[dataset]
builtin = "none"
[workload]
queries = ["missing.sql", "slow.sql", "fine.sql"]
executions = 2
warmup_executions = 0
timeout = "1s"
"#,
    );
    assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("some query executions failed or timed out"),
        "{}",
        out.stderr
    );
    assert!(
        started.elapsed().as_secs() < 25,
        "the timeout ended the sleeps"
    );
    assert_eq!(runs.len(), 1);
    for e in executions(&runs[0], "missing.sql") {
        assert_eq!(e["ok"], false);
        assert_eq!(e["error"]["sqlstate"], "42P01");
        let m = e["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("relation \"no_such_table\" does not exist"),
            "{m}"
        );
        assert_eq!(e["error"]["timed_out"], false);
    }
    for e in executions(&runs[0], "slow.sql") {
        assert_eq!(e["ok"], false);
        assert_eq!(e["error"]["timed_out"], true, "{e}");
        let m = e["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("canceling statement due to statement timeout"),
            "{m}"
        );
        let ms = e["client_ms"].as_f64().unwrap();
        assert!((900.0..5000.0).contains(&ms), "{ms}");
    }
    for e in executions(&runs[0], "fine.sql") {
        assert_eq!(e["ok"], true, "{e}");
    }
    let table = &out.stdout;
    let slow = table.lines().find(|l| l.contains("slow.sql")).unwrap();
    assert!(slow.contains("failures,timeouts"), "{table}");
}

#[test]
fn cold_cache_reads_every_execution_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
name = "cold"
[dataset]
scale = 1
[workload]
query = "SELECT count(*) FROM pgbench_accounts"
executions = 2
cache = "cold"
"#;
    if !nix::unistd::geteuid().is_root() {
        let (out, _) = study(dir.path(), text);
        assert_eq!(out.code, Some(1));
        assert!(
            out.stderr.contains(
                "study.toml:8:9: workload `cache`: cache = \"cold\" drops the OS page cache"
            ),
            "{}",
            out.stderr
        );
        pgrig_testkit::skip("the cold reads need root to drop the OS page cache (the refusal was checked); run the suite as root");
        return;
    }
    let (out, runs) = study(dir.path(), text);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    for e in executions(&runs[0], "query") {
        let shared = &e["server"]["shared"];
        assert!(shared["read"].as_u64().unwrap() > 0, "{shared}");
    }
    assert!(out.stdout.contains("io-bound"), "{}", out.stdout);
}

#[test]
fn separate_explain_measures_plain_executions_and_keeps_one_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "separate"
[target]
fast = true
[dataset]
builtin = "none"
[workload]
query = "SELECT g FROM generate_series(1, 1000) g"
executions = 2
explain = "separate"
"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    for e in executions(&runs[0], "query") {
        assert_eq!(e["rows"], 1000, "plain executions return the rows: {e}");
        assert!(e["server"].is_null() && e["explain"].is_null());
    }
    let q = &runs[0]["query"]["queries"][0];
    let plan = &q["plan_execution"];
    assert_eq!(plan["n"], 0);
    assert!(
        plan["server"]["execution_ms"].as_f64().unwrap() > 0.0,
        "{plan}"
    );
    assert_eq!(plan["server"]["nodes"][0]["node_type"], "Function Scan");
    assert!(q["summary"]["server_ms"].as_f64().is_some());
}

#[test]
fn bad_query_studies_are_reported_where_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let check = |text: &str, expected: &str| {
        std::fs::write(dir.path().join("bad.toml"), text).unwrap();
        let out = pgrig(dir.path(), &["study", "bad.toml", "--dry-run"]);
        assert_eq!(out.code, Some(1), "{text}\n{}", out.stdout);
        assert!(
            out.stderr.contains(expected),
            "{text}\nexpected {expected}\ngot {}",
            out.stderr
        );
    };
    check(
        "name = \"x\"\n[workload]\nquery = \"SELECT 1\"\nscripts = [\"a.sql\"]\n",
        "bad.toml:4:11: workload `scripts`: `scripts` belongs to script workloads",
    );
    check(
        "name = \"x\"\n[workload]\nbuiltin = \"select-only\"\n[matrix]\nparallel_workers = [0, 2]\n",
        "bad.toml:5:20: workload `parallel_workers`: `parallel_workers` belongs to query workloads",
    );
    check(
        "name = \"x\"\n[workload]\nquery = \"SELECT 1; SELECT 2\"\n",
        "bad.toml:3:9: workload `query`: 2 statements",
    );
    check(
        "name = \"x\"\n[workload]\nqueries = [\"nowhere.sql\"]\n",
        "bad.toml:3:11: workload `queries`: could not read query file",
    );
    check(
        "name = \"x\"\n[workload]\nquery = \"SELECT 1\"\nexplain = \"always\"\n",
        "bad.toml:4:11: workload `explain`: invalid explain \"always\" (expected one of: each, separate, off)",
    );
    check(
        "name = \"x\"\n[target]\nurl = \"postgresql://h/db\"\n[workload]\nquery = \"SELECT 1\"\ncache = \"cold\"\n",
        "bad.toml:6:9: workload `cache`: \"cold\" restarts the server",
    );
    // an unknown table in parallel_tables is only known on the server
    std::fs::write(
        dir.path().join("bad.toml"),
        "name = \"x\"\n[target]\nfast = true\n[dataset]\nbuiltin = \"none\"\n[workload]\nquery = \"SELECT 1\"\nparallel_workers = 2\nparallel_tables = [\"nope\"]\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "bad.toml"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains("bad.toml:9:19: workload `parallel_tables`: no table \"nope\" on the target"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_matrix_of_query_files_is_one_point_per_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.sql"), "SELECT 1").unwrap();
    std::fs::write(dir.path().join("b.sql"), "SELECT 2").unwrap();
    std::fs::write(
        dir.path().join("m.toml"),
        "name = \"m\"\n[workload]\nexecutions = 1\n[matrix]\nqueries = [\"a.sql\", [\"a.sql\", \"b.sql\"]]\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "m.toml", "--dry-run"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("2 point(s)"), "{}", out.stdout);
    assert!(
        out.stdout.contains("point 1: queries=[\"a.sql\"]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("point 2: queries=[\"a.sql\",\"b.sql\"]"),
        "{}",
        out.stdout
    );
}
