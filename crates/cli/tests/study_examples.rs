//! The studies in `examples/studies/` run end to end (at CI size: fewer transactions, shorter
//! durations, one repetition) and reproduce what the real studies needed: under repeatable read
//! and serializable, 4 clients complete every transaction (retried, never aborted); the custom
//! type's sizes and per-statement latencies are recorded after every round; two targets are
//! compared side by side; the insert-tuning matrix covers every point; the parallel scan launches
//! the workers of every degree and derives speedup and efficiency; a custom sysbench Lua
//! script runs for each value of its own option. Each study writes its
//! report (`--report`), which opens in the browser with the charts its data calls for.

use crate::browser;

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrig_testkit::run;
use serde_json::Value;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies")
}

/// Runs an example from `examples/studies/` at CI size (`--set` overrides, the files stay as
/// they are) into a store in `dir`, and returns the exported runs.
/// The report `study` wrote opens in the browser with these charts (screenshot kept in
/// `target/report-screenshots/`).
fn report_shows(dir: &Path, file: &str, charts: &[&str]) {
    let png = browser::artefact_dir().join(format!("example-{file}.png"));
    browser::check_report(&dir.join(format!("{file}.html")), charts, &png);
}

fn study(dir: &Path, file: &str, sets: &[&str]) -> Vec<Value> {
    let store = dir.join(format!("{file}.db"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(examples())
        .arg("study")
        .arg(file)
        .arg("--store")
        .arg(&store)
        .arg("--report")
        .arg(dir.join(format!("{file}.html")));
    for s in sets {
        c.arg("--set").arg(s);
    }
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    let out = run(c);
    assert_eq!(out.code, Some(0), "{file}:\n{}\n{}", out.stdout, out.stderr);
    let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json", "--store"])
        .arg(&store);
    let out = run(e);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    serde_json::from_str::<Value>(&out.stdout)
        .expect("json export")
        .as_array()
        .expect("array of runs")
        .clone()
}

#[test]
fn isolation_example_keeps_every_client_under_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(
        dir.path(),
        "isolation.toml",
        &["workload.transactions=40", "repetitions=1"],
    );
    assert_eq!(runs.len(), 8, "2 client counts x 4 levels");
    for r in &runs {
        let clients = r["clients"].as_u64().unwrap();
        assert_eq!(r["aborted_clients"].as_u64(), Some(0), "{r}");
        assert_eq!(
            r["transactions"]["ok"].as_u64(),
            Some(40 * clients),
            "{}",
            r["point"]
        );
        assert_eq!(
            r["transactions"]["failed"].as_u64(),
            Some(0),
            "{}",
            r["point"]
        );
        let sizes = &r["relation_sizes"];
        let accounts = sizes
            .get("pgbench_accounts")
            .or_else(|| sizes.get("accounts"));
        assert!(
            accounts.and_then(|a| a["total"].as_u64()).unwrap_or(0) > 0,
            "{sizes}"
        );
    }
    let levels: std::collections::BTreeSet<_> = runs
        .iter()
        .map(|r| r["point"]["isolation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(levels.len(), 4);
    // retries are counted (how many depends on timing at this size)
    let retries: u64 = runs
        .iter()
        .filter(|r| r["clients"] == 4 && r["point"]["isolation"] != "read committed")
        .map(|r| {
            r["transactions"]["retries"]
                .as_u64()
                .expect("retries counted")
        })
        .sum();
    assert!(
        retries > 0,
        "4 clients under repeatable read/serializable conflict and retry"
    );
    report_shows(
        dir.path(),
        "isolation.toml",
        &[
            "isolation-levels-tps-by-clients",
            "isolation-levels-tps-by-isolation",
            "isolation-levels-latency-percentiles",
        ],
    );
}

#[test]
fn custom_type_example_records_sizes_and_statement_latency_every_round() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(
        dir.path(),
        "custom_type.toml",
        &["workload.transactions=40", "workload.rounds=3"],
    );
    assert_eq!(runs.len(), 3, "3 rounds at CI size");
    let sizes: Vec<u64> = runs
        .iter()
        .map(|r| {
            r["relation_sizes"]["pgbench_branches"]["total"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(sizes.windows(2).all(|w| w[1] >= w[0]), "{sizes:?}");
    for r in &runs {
        let stmts = r["per_statement"]
            .as_array()
            .expect("per-statement latencies");
        assert!(stmts
            .iter()
            .any(|s| s["text"].as_str().unwrap_or("").contains("hist_add")));
        assert_eq!(r["transactions"]["ok"].as_u64(), Some(40));
    }
    report_shows(
        dir.path(),
        "custom_type.toml",
        &[
            "custom-type-history-tps-per-round",
            "custom-type-history-relation-sizes",
            "custom-type-history-statements-per-round",
        ],
    );
}

#[test]
fn two_targets_example_runs_the_same_workload_on_each() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(
        dir.path(),
        "two_targets.toml",
        &["workload.duration=1s", "repetitions=2", "dataset.scale=2"],
    );
    let mut targets: Vec<&str> = runs.iter().map(|r| r["target"].as_str().unwrap()).collect();
    targets.dedup();
    assert_eq!(targets, ["small", "roomy"]);
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0);
        assert!(
            r["server_stats"]["wal"].is_object(),
            "{}",
            r["server_stats"]
        );
    }
    report_shows(
        dir.path(),
        "two_targets.toml",
        &[
            "two-targets-tps-by-target",
            "two-targets-latency-percentiles",
        ],
    );
    // two targets: the page compares them without being asked
    let html = dir.path().join("two_targets.toml.html");
    assert!(browser::compare_rows(&html) >= 2, "no compare rows");
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("two-targets[target=small]"));
}

#[test]
fn cloud_write_only_example_runs_sysbench_write_only_on_each_target() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(
        dir.path(),
        "cloud_write_only.toml",
        &[
            "workload.duration=1s",
            "workload.clients=4",
            "repetitions=1",
            "workload.options={ tables = 2, table_size = 2000 }",
        ],
    );
    let targets: Vec<&str> = runs.iter().map(|r| r["target"].as_str().unwrap()).collect();
    assert_eq!(targets, ["small-wal", "roomy-wal"]);
    for r in &runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["aborted_clients"].as_u64(), Some(0));
        assert!(
            r["server_stats"]["wal"].is_object(),
            "{}",
            r["server_stats"]
        );
        // oltp_write_only's statements, each measured
        let statements = r["per_statement"].as_array().unwrap();
        assert!(statements
            .iter()
            .any(|s| s["text"].as_str().unwrap().starts_with("UPDATE sbtest")));
        // the queries by sysbench's classes, from the replies: no read; every completed
        // statement a write or other; BEGIN and COMMIT at least are other
        let count = |k: &str| r["workload_counters"][k].as_u64().unwrap_or(u64::MAX);
        let completed: u64 = (statements.iter())
            .map(|s| s["executions"].as_u64().unwrap() - s["failures"].as_u64().unwrap())
            .sum();
        assert_eq!(count("queries_read"), 0, "{}", r["workload_counters"]);
        assert_eq!(count("queries_write") + count("queries_other"), completed);
        let ok = r["transactions"]["ok"].as_u64().unwrap();
        assert!(
            count("queries_other") >= 2 * ok,
            "{}",
            r["workload_counters"]
        );
    }
    report_shows(
        dir.path(),
        "cloud_write_only.toml",
        &["cloud-write-only-tps-by-target"],
    );
}

#[test]
fn lua_script_example_runs_its_sysbench_script_for_each_option_value() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(dir.path(), "lua_script.toml", &["workload.duration=1s"]);
    assert_eq!(runs.len(), 2, "options.accounts = [10, 1000]");
    for r in &runs {
        let v = pgrig_results::view::RunView::of(r);
        assert!(v.tps.is_some_and(|t| t > 0.0), "{r}");
        assert_eq!(v.workload.as_deref(), Some("sysbench"));
        // the script ran with the point's option, two updates per event (more counted for
        // events restarted after a serialization failure)
        let accounts = v
            .point
            .get("options.accounts")
            .and_then(|a| a.as_i64())
            .unwrap();
        assert_eq!(
            r["workload_options"]["accounts"],
            accounts.to_string().as_str()
        );
        let ok = v.transactions.ok.unwrap() as u64;
        let writes = r["workload_counters"]["queries_write"].as_u64().unwrap();
        assert!(writes >= 2 * ok, "{writes} writes, {ok} events");
    }
    report_shows(
        dir.path(),
        "lua_script.toml",
        &["lua-script-tps-by-options-accounts"],
    );
}

#[test]
fn insert_tuning_example_covers_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(dir.path(), "insert_tuning.toml", &["workload.duration=1s"]);
    assert_eq!(runs.len(), 16);
    for r in &runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{}", r["point"]);
        assert!(r["client_cpu_time"].as_f64().is_some());
        assert!(r["client_run_queue_wait"].as_f64().is_some());
    }
    report_shows(
        dir.path(),
        "insert_tuning.toml",
        &[
            "insert-tuning-tps-effects",
            "insert-tuning-tps-ranking",
            "insert-tuning-tps-by-protocol",
            "insert-tuning-tps-by-scripts",
            "insert-tuning-tps-by-server-cpus",
            "insert-tuning-tps-by-settings-synchronous-commit",
            "insert-tuning-latency-percentiles",
        ],
    );
    // the page opens with the main effects, in the order the exported runs give them
    let html = std::fs::read_to_string(dir.path().join("insert_tuning.toml.html")).unwrap();
    let first = html.find("<figure class=\"chart\" id=\"").unwrap();
    assert!(html[first..].starts_with("<figure class=\"chart\" id=\"insert-tuning-tps-effects\""));
    assert_eq!(effects_order_in_page(&html), effects_order(&runs));
}

/// The swept keys by main effect on TPS, largest first, computed from the exported runs: the
/// mean TPS at each value of a key over all the other keys' combinations, its range.
fn effects_order(runs: &[Value]) -> Vec<String> {
    let keys: Vec<String> = runs[0]["point"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut effects: Vec<(String, f64)> = keys
        .into_iter()
        .map(|k| {
            let mut by_value: Vec<(String, Vec<f64>)> = Vec::new();
            for r in runs {
                let v = r["point"][&k].to_string();
                let tps = r["tps"].as_f64().unwrap();
                match by_value.iter_mut().find(|x| x.0 == v) {
                    Some(x) => x.1.push(tps),
                    None => by_value.push((v, vec![tps])),
                }
            }
            let means: Vec<f64> = by_value
                .iter()
                .map(|(_, t)| t.iter().sum::<f64>() / t.len() as f64)
                .collect();
            let hi = means.iter().copied().fold(f64::MIN, f64::max);
            let lo = means.iter().copied().fold(f64::MAX, f64::min);
            (k, hi - lo)
        })
        .collect();
    effects.sort_by(|a, b| b.1.total_cmp(&a.1));
    effects.into_iter().map(|e| e.0).collect()
}

/// The keys in the order the effects chart's table lists them.
fn effects_order_in_page(html: &str) -> Vec<String> {
    let start = html.find("id=\"insert-tuning-tps-effects-table\"").unwrap();
    let end = start + html[start..].find("</table>").unwrap();
    let mut keys: Vec<String> = Vec::new();
    for cell in html[start..end].split("<th scope=\"row\">").skip(1) {
        let key = cell.split('<').next().unwrap().to_string();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

#[test]
fn parallel_scan_example_launches_every_degree_and_derives_speedup() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(dir.path(), "parallel_scan.toml", &["dataset.scale=2"]);
    assert_eq!(runs.len(), 4, "degrees 0, 1, 2, 4");
    for r in &runs {
        let degree = r["point"]["parallel_workers"].as_u64().unwrap();
        let q = &r["query"]["queries"][0];
        assert_eq!(q["executions"].as_array().unwrap().len(), 3);
        for e in q["executions"].as_array().unwrap() {
            assert_eq!(e["ok"], true, "{e}");
            assert_eq!(e["server"]["workers_launched"].as_u64(), Some(degree));
            assert!(e["explain"][0]["Plan"].is_object());
        }
        assert_eq!(
            q["summary"]["io_bound"], false,
            "the table fits in shared_buffers"
        );
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["results", "summary", "--store"])
        .arg(dir.path().join("parallel_scan.toml.db"));
    let table = run(c).stdout;
    let four = table
        .lines()
        .find(|l| l.starts_with("parallel_workers=4 "))
        .unwrap_or_else(|| panic!("{table}"));
    // speedup and efficiency are numbers (their size depends on the machine's free cores)
    let cells: Vec<&str> = four.split_whitespace().collect();
    assert!(
        cells[7].parse::<f64>().is_ok() && cells[8].parse::<f64>().is_ok(),
        "{four}"
    );
    report_shows(
        dir.path(),
        "parallel_scan.toml",
        &[
            "parallel-scan-speedup",
            "parallel-scan-efficiency",
            "parallel-scan-plan-nodes",
            "parallel-scan-plan-tree",
            "parallel-scan-tps-by-parallel-workers",
            "parallel-scan-latency-percentiles",
            "parallel-scan-q-error",
        ],
    );
    // each degree's server flame graph, embedded in the page
    let html = std::fs::read_to_string(dir.path().join("parallel_scan.toml.html")).unwrap();
    assert_eq!(
        html.matches("<figure class=\"flame\"").count(),
        4,
        "one per degree"
    );
    for d in [0, 1, 2, 4] {
        assert!(
            html.contains(&format!("id=\"parallel-scan-flame-{d}\"")),
            "degree {d}"
        );
    }
}

#[test]
fn insert_steps_example_measures_every_step_on_top_of_the_previous_ones() {
    let dir = tempfile::tempdir().unwrap();
    let runs = study(dir.path(), "insert_steps.toml", &["workload.duration=1s"]);
    assert_eq!(runs.len(), 10, "5 steps x 2 server_cpus");
    let names = [
        "single-row inserts",
        "multi-row insert",
        "prepared",
        "synchronous_commit off",
        "client threads",
    ];
    for (i, r) in runs.iter().enumerate() {
        let step = i / 2;
        assert_eq!(
            r["step_index"].as_u64(),
            Some(step as u64),
            "{}",
            r["point"]
        );
        assert_eq!(r["step"].as_str(), Some(names[step]));
        assert_eq!(r["point"]["step"].as_str(), Some(names[step]));
        assert_eq!(r["server_cpus"].as_u64(), Some(1 + (i % 2) as u64));
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{}", r["point"]);
        // each step keeps what the earlier steps changed
        // (eight single-row INSERTs, or one multi-row INSERT, per transaction)
        let inserts = r["per_statement"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["text"].as_str().unwrap_or("").starts_with("INSERT"))
            .count();
        assert_eq!(inserts, if step >= 1 { 1 } else { 8 }, "step {step}");
        assert_eq!(r["protocol"] == "prepared", step >= 2, "{}", r["protocol"]);
        assert_eq!(
            r["settings"]["synchronous_commit"] == "off",
            step >= 3,
            "{}",
            r["settings"]
        );
        assert_eq!(r["threads"].as_u64(), Some(if step >= 4 { 2 } else { 1 }));
        // the server's own setting agrees (the run's provenance)
        let mut show = Command::new(env!("CARGO_BIN_EXE_pgrig"));
        show.args(["results", "show", "--store"])
            .arg(dir.path().join("insert_steps.toml.db"))
            .arg(r["run_id"].to_string());
        let shown: Value = serde_json::from_str(&run(show).stdout).expect("results show");
        let settings = &shown["provenance"]["server_settings"];
        assert_eq!(
            settings["synchronous_commit"] == "off",
            step >= 3,
            "{settings}"
        );
    }
    report_shows(
        dir.path(),
        "insert_steps.toml",
        &[
            "insert-steps-tps-by-step",
            "insert-steps-tps-steps-by-server-cpus",
        ],
    );
    // the CSV export carries each run's step index beside its step
    let mut csv = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    csv.args(["results", "export", "--format", "csv", "--store"])
        .arg(dir.path().join("insert_steps.toml.db"));
    let csv = run(csv).stdout;
    let header: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let col = header.iter().position(|h| *h == "step_index");
    let step_col = header.iter().position(|h| *h == "step");
    let (col, step_col) = (
        col.expect("a step_index column"),
        step_col.expect("a step column"),
    );
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let i: usize = cells[col].parse().expect("a step index");
        assert_eq!(cells[step_col], names[i], "{line}");
    }
    // one bar per step, in step order (the chart's table: one row per bar), each after the
    // first with its change from the previous step, recomputed here from the exported runs
    let html = std::fs::read_to_string(dir.path().join("insert_steps.toml.html")).unwrap();
    let table = html
        .split("id=\"insert-steps-tps-by-step-table\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the step chart's table");
    let rows: Vec<&str> = table.split("<tr data-x=").skip(1).collect();
    assert_eq!(rows.len(), names.len(), "{table}");
    let best = |step: usize| {
        runs[2 * step..2 * step + 2]
            .iter()
            .map(|r| r["tps"].as_f64().unwrap())
            .fold(f64::MIN, f64::max)
    };
    for (i, (row, name)) in rows.iter().zip(names).enumerate() {
        let cell = format!("<th scope=\"row\">{}</th><td>{name}</td>", i + 1);
        assert!(row.contains(&cell), "row {i}: {row}");
        if i > 0 {
            let pct = 100.0 * (best(i) - best(i - 1)) / best(i - 1);
            let sign = if pct >= 0.0 { "+" } else { "−" };
            let label = format!("({sign}{:.0}%)", pct.abs());
            assert!(row.contains(&label), "row {i}: {label} not in {row}");
        }
    }
}
