//! Native workloads through pgrig's own front doors: `pgrig run --workload NAME -o KEY=VALUE`
//! (dataset loaded on the throwaway server, or with `--init` on a target, replacing its tables)
//! and study files (`workload`, `options`, `options.NAME` matrix keys; the dataset loaded again
//! only when a point's data differs). Uses sysbench's `oltp_point_select` and `oltp_read_only`
//! at a tiny size.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    c.env_remove("PGHOST").env_remove("PGDATABASE");
    pgrig_testkit::run(c)
}

#[test]
fn run_loads_a_native_dataset_on_a_throwaway_server_and_reports_its_transaction_types() {
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(
        dir.path(),
        &[
            "run",
            "-w",
            "oltp_read_only",
            "-o",
            "tables=2",
            "-o",
            "table_size=500",
            "-c",
            "2",
            "-T",
            "2",
            "--json",
            "run.json",
        ],
    );
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("loading the oltp_read_only dataset"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("workload:     oltp_read_only"),
        "{}",
        out.stdout
    );
    // the TPC-B self-check is about pgbench's tables only
    assert!(!out.stderr.contains("branch rows"), "{}", out.stderr);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    assert_eq!(doc["workload"], "oltp_read_only");
    let ok = doc["transactions"]["ok"].as_u64().unwrap();
    assert!(ok > 0);
    let commands = doc["scripts"][0]["commands"].as_array().unwrap();
    let executed: Vec<u64> = commands
        .iter()
        .map(|c| c["executions"].as_u64().unwrap())
        .collect();
    // sysbench's oltp_read_only: BEGIN, 10 point selects, 4 range queries, COMMIT
    assert_eq!(executed.first(), Some(&ok), "BEGIN once per transaction");
    assert_eq!(executed.last(), Some(&ok), "COMMIT once per transaction");
    assert_eq!(
        executed.iter().sum::<u64>(),
        16 * ok,
        "{executed:?} for {ok} transactions"
    );
    assert!(commands
        .iter()
        .all(|c| c["latency_ms"]["p99"].as_f64().unwrap() > 0.0));
}

#[test]
fn run_refuses_unknown_native_options_naming_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(
        dir.path(),
        &[
            "run",
            "-w",
            "oltp_point_select",
            "-o",
            "tabels=2",
            "-T",
            "1",
        ],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("\"tabels\""), "{}", out.stderr);
    assert!(
        out.stderr.contains("did you mean \"tables\""),
        "{}",
        out.stderr
    );
    let out = pgrig(
        dir.path(),
        &["run", "-w", "tpcb-like", "-o", "tables=2", "-T", "1"],
    );
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("applies to native workloads"),
        "{}",
        out.stderr
    );
}

#[test]
fn run_with_init_replaces_a_targets_native_tables() {
    let db = pgrig_testkit::fresh_db("native_init");
    let dir = tempfile::tempdir().unwrap();
    let target = db.conninfo();
    for size in ["300", "400"] {
        let out = pgrig(
            dir.path(),
            &[
                "run",
                "--target",
                &target,
                "--init",
                "-w",
                "oltp_point_select",
                "-o",
                "tables=1",
                "-o",
                &format!("table_size={size}"),
                "-T",
                "1",
            ],
        );
        assert!(out.success(), "{}", out.stderr);
        assert_eq!(db.psql("SELECT count(*) FROM sbtest1").trim(), size);
    }
    // without --init the data is used as it is
    let out = pgrig(
        dir.path(),
        &[
            "run",
            "--target",
            &target,
            "-w",
            "oltp_point_select",
            "-T",
            "1",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert!(!out.stderr.contains("loading"), "{}", out.stderr);
}

#[test]
fn a_study_sweeps_a_native_option_and_reloads_the_data_only_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        r#"
name = "native"
[target]
fast = true
[workload]
workload = "oltp_point_select"
options = { tables = 1 }
protocol = "prepared"
transactions = 50
[matrix]
"options.table_size" = [200, 300]
clients = [1, 2]
"#,
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(
        all.matches("loading the oltp_point_select dataset").count(),
        2,
        "{all}"
    );
    let export = pgrig(dir.path(), &["results", "export", "--format", "json"]);
    assert!(export.success(), "{}", export.stderr);
    let runs: Vec<Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 4);
    for r in &runs {
        let clients = r["point"]["clients"].as_u64().unwrap();
        assert_eq!(
            r["transactions"]["ok"].as_u64().unwrap(),
            50 * clients,
            "{r}"
        );
    }
}

#[test]
fn a_study_with_a_bad_native_option_fails_before_running() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"bad\"\n[workload]\nworkload = \"oltp_point_select\"\noptions = { table_size = \"many\" }\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "--dry-run", "study.toml"]);
    assert!(!out.success());
    assert!(out.stderr.contains("study.toml:"), "{}", out.stderr);
    assert!(out.stderr.contains("table_size"), "{}", out.stderr);
}

#[test]
fn run_prints_ycsbs_summary_lines_after_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(
        dir.path(),
        &[
            "run",
            "-w",
            "ycsb-b",
            "-o",
            "recordcount=2000",
            "-c",
            "2",
            "-T",
            "1",
        ],
    );
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let summary = out.stdout.find("throughput:").expect("pgrig's summary");
    let ycsb = out
        .stdout
        .find("[OVERALL], Throughput(ops/sec), ")
        .expect("YCSB's lines");
    assert!(summary < ycsb, "{}", out.stdout);
    for op in ["READ", "UPDATE"] {
        assert!(
            out.stdout.contains(&format!("[{op}], Operations, ")),
            "{}",
            out.stdout
        );
        assert!(out
            .stdout
            .contains(&format!("[{op}], 99thPercentileLatency(us), ")));
    }
}
