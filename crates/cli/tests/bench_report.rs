//! `pgrig bench` runs pgbench's builtin and custom scripts and prints pgbench's report: compared
//! line by line (apart from the figures) with the installed pgbench on the same database.

use crate::common;

use common::*;
use pgrig_testkit::fresh_db;

fn same_report_shape(db: &pgrig_testkit::TestDb, args: &[&str]) {
    assert_same_report_shape(db, args);
}

#[test]
fn select_only_prepared_report_matches_pgbench() {
    let db = fresh_db("select_only_report");
    pgbench_init(&db, 1);
    same_report_shape(
        &db,
        &["-S", "-M", "prepared", "-c", "2", "-j", "2", "-t", "50"],
    );
}

#[test]
fn tpcb_like_completes_every_transaction_in_each_query_mode() {
    let db = fresh_db("tpcb_modes");
    pgbench_init(&db, 1);
    for mode in ["simple", "extended", "prepared"] {
        let out = pgrig_bench(&db, &["-M", mode, "-c", "2", "-t", "20", "-n"]);
        assert_eq!(out.code, Some(0), "{mode}: {}", out.stderr);
        assert_eq!(
            line_value(&out.stdout, "number of transactions actually processed: "),
            Some("40/40"),
            "{mode}:\n{}",
            out.stdout
        );
        assert_eq!(line_value(&out.stdout, "query mode: "), Some(mode));
        assert_eq!(
            line_value(&out.stdout, "number of failed transactions: "),
            Some("0 (0.000%)")
        );
    }
    // 40 transactions in each of the three modes, each inserting one history row
    assert_eq!(
        db.psql("select count(*) from pgbench_history").trim(),
        "120"
    );
}

#[test]
fn per_command_report_lists_each_command_of_the_script() {
    let db = fresh_db("per_command");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-r", "-t", "5", "-n"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let i = lines
        .iter()
        .position(|l| *l == "statement latencies in milliseconds and failures:")
        .expect("header");
    let texts: Vec<String> = lines[i + 1..]
        .iter()
        .map(|l| l.split_whitespace().skip(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(texts[0], "\\set aid random(1, 100000 * :scale)");
    assert_eq!(texts[4], "BEGIN;");
    assert_eq!(texts[10], "END;");
    assert_eq!(texts.len(), 11);
}

#[test]
fn multiple_weighted_scripts_print_per_script_sections() {
    let db = fresh_db("multi_scripts");
    pgbench_init(&db, 1);
    let out = pgrig_bench(
        &db,
        &[
            "-b",
            "select-only@3",
            "-b",
            "simple-update@1",
            "-t",
            "40",
            "-n",
            "--random-seed=7",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        line_value(&out.stdout, "transaction type: "),
        Some("multiple scripts")
    );
    assert!(
        out.stdout.contains(
            "SQL script 1: <builtin: select only>\n - weight: 3 (targets 75.0% of total)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "SQL script 2: <builtin: simple update>\n - weight: 1 (targets 25.0% of total)\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn time_limited_run_with_progress_prints_progress_lines_and_latency_stddev() {
    let db = fresh_db("progress");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-S", "-T", "2", "-P", "1", "-n"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let progress: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!progress.is_empty(), "stderr: {}", out.stderr);
    assert_eq!(
        without_numbers(progress[0]),
        "progress: N s, N tps, lat N ms stddev N, N failed"
    );
    assert_eq!(line_value(&out.stdout, "duration: "), Some("2 s"));
    assert!(line_value(&out.stdout, "latency stddev = ").is_some());
}

#[test]
fn json_output_has_counts_percentiles_and_client_cpu() {
    let db = fresh_db("json_out");
    pgbench_init(&db, 1);
    let out = pgrig_bench(&db, &["-S", "-t", "30", "-c", "3", "-n", "--json", "-"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is the JSON");
    assert_eq!(v["transactions"]["ok"], 90);
    assert!(v["latency_ms"]["p99"].as_f64().unwrap() > 0.0);
    assert_eq!(v["client_cpu"]["threads"].as_array().unwrap().len(), 1);
    assert!(!out.stdout.contains("password"));
}
