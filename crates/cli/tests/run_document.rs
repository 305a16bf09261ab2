//! The run document and its renderers, from constructed run results (no server): snapshots of
//! `--json`, pgbench's text report and `pgrig run`'s summary (a format change shows as a
//! reviewed diff: `UPDATE_SNAPSHOTS=1 cargo test -p pgrig-cli --test tests run_document::`
//! rewrites them), and the document's fields against docs/run-document.md.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, ScriptSource};
use pgrig_engine::document::RunDocument;
use pgrig_engine::result::{RunResult, ScriptInfo, ThreadCpu};
use pgrig_engine::stats::{Moments, ScriptStats, Snapshot, ThreadStats};
use pgrig_script::QueryMode;

fn moments(samples_us: &[f64]) -> Moments {
    let mut m = Moments::default();
    for &v in samples_us {
        m.add(v);
    }
    m
}

/// A script's figures: `latencies_us` successful transactions, `failed` serialization failures.
fn script_stats(latencies_us: &[f64], failed: u64, commands: &[&[f64]]) -> ScriptStats {
    let mut s = ScriptStats::new(commands.len());
    s.snap.counts.ok = latencies_us.len() as u64;
    s.snap.counts.serialization_failures = failed;
    s.snap.counts.retried = failed;
    s.snap.counts.retries = failed * 2;
    s.snap.latency = moments(latencies_us);
    for &l in latencies_us {
        s.histogram.record(l as u64).expect("in range");
    }
    for (c, samples) in s.commands.iter_mut().zip(commands) {
        c.latency = moments(samples);
    }
    s.commands[0].failures = failed;
    s.commands[0].retries = failed * 2;
    s
}

/// Two weighted scripts under `-T 2 -c 4 -j 2 -r --max-tries 3 --failures-detailed`.
fn two_scripts(interrupted: bool) -> RunResult {
    let mut stats = ThreadStats::new(&[2, 1]);
    stats.scripts[0] = script_stats(
        &[1200.0, 1500.0, 900.0, 2500.0, 1100.0, 40000.0],
        1,
        &[&[300.0, 350.0, 310.0], &[800.0, 900.0, 850.0]],
    );
    stats.scripts[1] = script_stats(&[500.0, 700.0, 650.0], 0, &[&[500.0, 700.0, 650.0]]);
    let second = |ok: u64, lat: &[f64]| Snapshot {
        counts: pgrig_engine::stats::Counts {
            ok,
            ..Default::default()
        },
        latency: moments(lat),
        lag: Moments::default(),
    };
    RunResult {
        config: BenchConfig {
            conn: ConnArgs {
                host: Some("/tmp/sock".into()),
                port: Some("5433".into()),
                user: Some("bench".into()),
                dbname: Some("postgresql://bench:secret@localhost/db".into()),
            },
            scripts: vec![
                ScriptSource::Builtin {
                    name: "tpcb-like".into(),
                    weight: 2,
                },
                ScriptSource::File {
                    path: "mine.sql".into(),
                    text: "select 1;".into(),
                    weight: 1,
                },
            ],
            clients: 4,
            threads: 2,
            duration: Duration::Seconds(2),
            mode: QueryMode::Prepared,
            report_per_command: true,
            max_tries: 3,
            failures_detailed: true,
            ..Default::default()
        },
        scripts: vec![
            ScriptInfo {
                desc: "<builtin: TPC-B (sort of)>".into(),
                weight: 2,
                command_texts: vec![
                    "\\set aid random(1, 100000 * :scale)".into(),
                    "BEGIN;".into(),
                ],
            },
            ScriptInfo {
                desc: "mine.sql".into(),
                weight: 1,
                command_texts: vec!["select 1;".into()],
            },
        ],
        server_version: "15.8".into(),
        scale: 2,
        partitions: Some(("range".into(), 4)),
        stats,
        bench_duration_s: 2.0,
        initial_conn_ms: 3.25,
        threads_cpu: vec![
            ThreadCpu {
                user_s: 0.5,
                sys_s: 0.25,
                wait_s: 0.0,
                wall_s: 2.0,
            },
            ThreadCpu {
                user_s: 1.5,
                sys_s: 0.4,
                wait_s: 0.1,
                wall_s: 2.0,
            },
        ],
        series: vec![
            second(5, &[1200.0, 1500.0, 900.0, 500.0, 700.0]),
            second(4, &[2500.0, 1100.0, 40000.0, 650.0]),
        ],
        aborted_clients: 0,
        clients: vec![pgrig_engine::result::ClientTally {
            id: 0,
            transactions: 40,
            busy_s: 0.12,
            unfinished_s: None,
        }],
        seed: 42,
        interrupted,
        extras: Default::default(),
    }
}

/// One script under `-t 3 -c 1 -R 100 -L 5 -P 1`, one transaction skipped and one late.
fn rate_limited() -> RunResult {
    let mut r = two_scripts(false);
    let mut stats = ThreadStats::new(&[1]);
    stats.scripts[0] = script_stats(&[1000.0, 6000.0], 0, &[&[900.0, 5900.0]]);
    stats.scripts[0].snap.counts.skipped = 1;
    stats.scripts[0].snap.counts.late = 1;
    stats.scripts[0].snap.lag = moments(&[100.0, 300.0]);
    r.stats = stats;
    r.scripts.truncate(1);
    r.config.scripts.truncate(1);
    r.config.clients = 1;
    r.config.threads = 1;
    r.config.duration = Duration::Transactions(3);
    r.config.rate = Some(100.0);
    r.config.latency_limit_us = Some(5000);
    r.config.progress = Some(1);
    r.config.report_per_command = false;
    r.config.max_tries = 1;
    r.config.failures_detailed = false;
    r.partitions = None;
    r.threads_cpu.truncate(1);
    r
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name)
}

/// Compares `actual` with the stored snapshot (`UPDATE_SNAPSHOTS=1` rewrites it).
fn check_snapshot(name: &str, actual: &str) {
    let path = snapshot_path(name);
    pgrig_testkit::snapshot::check(path.parent().unwrap(), name, actual);
}

/// The document's JSON with the version made stable.
#[test]
fn json_document_matches_its_snapshot() {
    let doc = pgrig_engine::document::of(&two_scripts(false));
    let version = format!("\"pgrig_version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    let text = pgrig_cli::json::text(&doc).replace(&version, "\"pgrig_version\": \"VERSION\"");
    check_snapshot("run_document.json", &text);
    assert!(!text.contains("secret"), "no password in the document");
}

#[test]
fn json_document_reads_back_as_the_same_document() {
    let doc = pgrig_engine::document::of(&two_scripts(true));
    let text = pgrig_cli::json::text(&doc);
    let back: RunDocument = serde_json::from_str(&text).unwrap();
    assert_eq!(back, doc);
    assert!(back.interrupted);
}

#[test]
fn text_report_matches_its_snapshot() {
    let multi = pgrig_cli::report::render(&pgrig_engine::document::of(&two_scripts(false)), true);
    check_snapshot("report_two_scripts.txt", &multi);
    let rate = pgrig_cli::report::render(&pgrig_engine::document::of(&rate_limited()), false);
    check_snapshot("report_rate_limited.txt", &rate);
    let mut aborted = rate_limited();
    aborted.stats = ThreadStats::new(&[1]);
    aborted.aborted_clients = 1;
    let none = pgrig_cli::report::render(&pgrig_engine::document::of(&aborted), true);
    check_snapshot("report_nothing_completed.txt", &none);
    assert!(
        none.contains("number of failed transactions: 0 (NaN%)"),
        "{none}"
    );
}

#[test]
fn run_summary_matches_its_snapshot_and_says_it_was_interrupted() {
    let text = pgrig_cli::run::summary(&pgrig_engine::document::of(&two_scripts(true)));
    check_snapshot("run_summary_interrupted.txt", &text);
    assert!(text.contains("interrupted:"), "{text}");
    let plain = pgrig_cli::run::summary(&pgrig_engine::document::of(&two_scripts(false)));
    assert!(!plain.contains("interrupted"), "{plain}");
}

#[test]
fn self_check_flags_a_saturated_client_and_branch_contention() {
    let mut r = two_scripts(false);
    r.threads_cpu[1].user_s = 1.9;
    let doc = pgrig_engine::document::of(&r);
    assert!(doc.self_check.client_saturated);
    assert!(!doc.self_check.host_contended, "5 % run-queue wait");
    assert!(doc.self_check.branch_contention, "4 clients on scale 2");
    assert_eq!(doc.self_check.warnings.len(), 2);
    r.scale = 4;
    r.threads_cpu[1].user_s = 0.1;
    let quiet = pgrig_engine::document::of(&r).self_check;
    assert!(!quiet.client_saturated && !quiet.branch_contention && !quiet.host_contended);
    assert!(quiet.warnings.is_empty());
}

/// The run: 0.79 s of CPU in 5.05 s (16 %) was labelled 83 % busy because 3.4 s of
/// waiting for a CPU were added to it. It is host-contended, not client-saturated.
#[test]
fn waiting_for_a_cpu_is_host_contended_not_client_saturated() {
    let mut r = two_scripts(false);
    r.threads_cpu = vec![ThreadCpu {
        user_s: 0.6,
        sys_s: 0.19,
        wait_s: 3.4,
        wall_s: 5.05,
    }];
    let doc = pgrig_engine::document::of(&r);
    let c = &doc.client_cpu;
    assert!((c.cpu_time_s - 0.79).abs() < 1e-9 && (c.run_queue_wait_s - 3.4).abs() < 1e-9);
    assert!((c.cpu_time - 0.79 / 5.05).abs() < 1e-9, "{c:?}");
    assert!((c.run_queue_wait - 3.4 / 5.05).abs() < 1e-9, "{c:?}");
    let check = &doc.self_check;
    assert!(!check.client_saturated && check.host_contended, "{check:?}");
    assert!(
        check.warnings[0].starts_with(
            "client thread 0 waited for a CPU 67% of the run (run-queue wait 3.40 s, CPU time 0.79 s in 5.05 s)"
        ),
        "{check:?}"
    );
    let summary = pgrig_cli::run::summary(&doc);
    assert!(
        summary.contains("client CPU time:       0.79 s, busiest thread 16% of the run"),
        "{summary}"
    );
    assert!(
        summary.contains("client run-queue wait: 3.40 s, longest thread 67% of the run"),
        "{summary}"
    );
}

/// A schema 1 document kept `wait_s` and a `busy`/`busiest` share that added the wait to the
/// CPU time; read back, it gives CPU time and run-queue wait from the seconds.
#[test]
fn a_schema_1_client_cpu_reads_as_cpu_time_and_run_queue_wait() {
    let mut v = serde_json::to_value(pgrig_engine::document::of(&two_scripts(false))).unwrap();
    v["schema_version"] = 1.into();
    v["client_cpu"] = serde_json::json!({"busiest": 0.83, "threads": [
        {"user_s": 0.6, "sys_s": 0.19, "wait_s": 3.4, "wall_s": 5.05, "busy": 0.83}]});
    let old: RunDocument = serde_json::from_value(v).expect("a schema 1 document reads");
    let c = &old.client_cpu;
    assert!((c.cpu_time - 0.79 / 5.05).abs() < 1e-9, "{c:?}");
    assert!((c.run_queue_wait - 3.4 / 5.05).abs() < 1e-9, "{c:?}");
    assert!((c.threads[0].run_queue_wait_s - 3.4).abs() < 1e-9);
    assert!((c.threads[0].cpu_time_s - 0.79).abs() < 1e-9);
}

/// Every field path of `v` (`a.b`, `a[].c`); `[value, count]` pairs are leaves.
fn paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                paths(child, &p, out);
            }
        }
        Value::Array(items) => {
            for item in items.iter().filter(|i| i.is_object()) {
                paths(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The field column of docs/run-document.md's first table.
fn documented_fields() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/run-document.md"),
    )
    .expect("docs/run-document.md");
    let fields = doc
        .split("## Fields")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a Fields section");
    fields
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn documented_fields_are_exactly_the_produced_ones() {
    let mut produced = BTreeSet::new();
    // the server's seconds, as `pgrig run` and studies fill them in
    let mut doc = pgrig_engine::document::of(&two_scripts(false));
    for s in &mut doc.series {
        (s.checkpoints, s.wal_bytes, s.server_cpu) = (Some(0), Some(8192), Some(0.5));
        // a sysbench Lua script's seconds
        (s.queries_read, s.queries_write, s.queries_other) = (Some(10), Some(4), Some(2));
        s.reconnects = Some(0);
    }
    // a steady window and a finding with evidence, as a long run has them
    doc.steady = Some(pgrig_results::document::SteadyWindow {
        from_s: 10.0,
        to_s: 120.0,
        tps: 1000.0,
        tps_ci95: 5.0,
        drift_pct: 0.5,
    });
    doc.findings = vec![pgrig_verdict::Finding::new(
        "warm_up",
        pgrig_verdict::Severity::Warning,
        "the first 10 s were warm-up".into(),
        "quote the steady window",
    )
    .with("warm-up", 10.0, "s", "per-second series, MSER-5")];
    paths(&serde_json::to_value(&doc).unwrap(), "", &mut produced);
    let documented = documented_fields();
    let undocumented: Vec<_> = produced.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&produced).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "docs/run-document.md is out of date: produced but not documented {undocumented:?}; documented but not produced {missing:?}"
    );
}

#[test]
fn documents_written_before_the_schema_version_still_read() {
    let mut v = serde_json::to_value(pgrig_engine::document::of(&two_scripts(false))).unwrap();
    let o = v.as_object_mut().unwrap();
    for added in [
        "schema_version",
        "interrupted",
        "partitions",
        "connection_time_ms",
        "schedule_lag_ms",
        "self_check",
        "latency_histogram",
    ] {
        o.remove(added);
    }
    let opts = o["options"].as_object_mut().unwrap();
    for added in [
        "failures_detailed",
        "continue_on_error",
        "progress_s",
        "report_per_command",
    ] {
        opts.remove(added);
    }
    let old: RunDocument = serde_json::from_value(v).expect("an unversioned document reads");
    assert_eq!(old.schema_version, 0);
    assert!(!old.interrupted);
    assert_eq!(old.transactions.ok, 9);
}
