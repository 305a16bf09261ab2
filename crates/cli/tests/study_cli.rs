//! `pgrig study` and `pgrig results` end to end: tiny studies (scale 1, a few hundred
//! transactions) on throwaway servers (and one on the test cluster as an external target),
//! asserting on the exported JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    pgrig_testkit::run(c)
}

fn write_study(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("study.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs the study in `dir` (store `dir/pgrig.db`) and returns the exported runs.
fn run_study(dir: &Path, text: &str) -> Vec<Value> {
    write_study(dir, text);
    let out = pgrig(dir, &["study", "study.toml"]);
    assert!(
        out.success(),
        "study failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    export(dir)
}

fn export(dir: &Path) -> Vec<Value> {
    let out = pgrig(dir, &["results", "export", "--format", "json"]);
    assert!(out.success(), "{}", out.stderr);
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn isolation_study_retries_serialization_failures_and_loses_no_client() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_study(
        dir.path(),
        r#"
name = "isolation"
[target]
settings = { autovacuum = "off" }
fast = true
[dataset]
builtin = "tpcb"
scale = 1
unlogged = true
reinit = "per-run"
[workload]
builtin = "tpcb-like"
protocol = "prepared"
transactions = 150
max_tries = 0
isolation = "serializable"
[matrix]
clients = [1, 4]
repetitions = 2
[collect]
relation_sizes = ["accounts", "branches"]
"#,
    );
    assert_eq!(runs.len(), 4);
    let mut retries_at_4 = 0;
    for r in &runs {
        let clients = n(&r["point"]["clients"]);
        assert_eq!(r["study"], "isolation");
        assert_eq!(
            n(&r["transactions"]["ok"]),
            clients * 150,
            "every transaction completes: {r}"
        );
        assert_eq!(n(&r["transactions"]["failed"]), 0);
        assert_eq!(n(&r["aborted_clients"]), 0);
        assert!(r["tps"].as_f64().unwrap() > 0.0);
        for k in ["mean", "p50", "p90", "p99", "max"] {
            assert!(r["latency_ms"][k].as_f64().is_some(), "latency_ms.{k}");
        }
        client_cpu_figures_agree_with_the_threads(r);
        let acc = &r["relation_sizes"]["accounts"];
        assert!(
            n(&acc["heap"]) > 0 && n(&acc["indexes"]) > 0 && n(&acc["total"]) >= n(&acc["heap"])
        );
        assert!(n(&r["server_stats"]["database"]["commits"]) >= clients * 150);
        let stats = &r["server_stats"];
        assert!(stats["wal"]["wal_bytes"].as_f64().is_some());
        // The same names on every server version (PG 17 and 18 moved these counters).
        assert!(stats["wal"]["wal_writes"].as_f64().is_some(), "{stats}");
        assert!(stats["checkpointer"]["buffers_checkpoint"]
            .as_f64()
            .is_some());
        if pgrig_lab::PgBinaries::discover().unwrap().major() >= 16 {
            assert!(n(&stats["io"]["hits"]) > 0, "{stats}");
            assert!(stats["io"]["client_writes"].as_f64().is_some(), "{stats}");
        }
        assert!(r["wait_events"]["samples"].as_u64().unwrap() >= 1);
        assert!(r["server_processes"]["cpu_user_s"].as_f64().is_some());
        if clients == 4 {
            retries_at_4 += n(&r["transactions"]["retries"]);
            assert!(n(&r["transactions"]["retried"]) <= n(&r["transactions"]["retries"]));
        }
    }
    assert!(
        retries_at_4 > 0,
        "4 serializable clients on one branch must conflict and retry"
    );
}

#[test]
fn rounds_grow_relations_and_reinit_per_run_recreates_them() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_study(
        dir.path(),
        r#"
name = "rounds"
[target]
fast = true
[dataset]
reinit = "per-run"
[workload]
transactions = 400
rounds = 3
[matrix]
repetitions = 2
[collect]
relation_sizes = ["history"]
"#,
    );
    assert_eq!(runs.len(), 6);
    let size = |rep: u64, round: u64| {
        let r = runs
            .iter()
            .find(|r| n(&r["repetition"]) == rep && n(&r["round"]) == round)
            .unwrap();
        n(&r["relation_sizes"]["history"]["heap"])
    };
    assert!(
        size(1, 1) < size(1, 2) && size(1, 2) < size(1, 3),
        "history grows across rounds"
    );
    assert_eq!(size(2, 1), size(1, 1), "re-initialised before repetition 2");
    assert!(size(2, 3) > size(2, 1));
}

#[test]
fn matrix_settings_are_applied_with_reload_or_restart() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_study(
        dir.path(),
        r#"
name = "settings"
[target]
fast = true
[workload]
transactions = 20
[matrix]
"settings.work_mem" = ["1MB", "3MB"]
"settings.max_locks_per_transaction" = [80]
server_cpus = [1]
client_cpus = [1]
"#,
    );
    assert_eq!(runs.len(), 2);
    for r in &runs {
        let shown = pgrig(dir.path(), &["results", "show", &r["run_id"].to_string()]);
        assert!(shown.success(), "{}", shown.stderr);
        let v: Value = serde_json::from_str(&shown.stdout).unwrap();
        let s = &v["provenance"]["server_settings"];
        let want = if r["point"]["settings.work_mem"] == "1MB" {
            "1024 kB"
        } else {
            "3072 kB"
        };
        assert_eq!(s["work_mem"], want, "{s}");
        assert_eq!(
            s["max_locks_per_transaction"], "80",
            "postmaster setting after a restart"
        );
        assert!(v["provenance"]["host"]["cpus"].as_u64().unwrap() >= 1);
        assert!(v["study_text"]
            .as_str()
            .unwrap()
            .contains("name = \"settings\""));
        assert!(!v["histogram"]["buckets"].as_array().unwrap().is_empty());
        assert_eq!(r["server_cpus"], 1);
        assert_eq!(r["client_cpus"], 1);
        assert_eq!(
            v["provenance"]["server_cpu_list"].as_array().unwrap().len(),
            1
        );
    }
}

#[test]
fn study_resumes_after_a_kill_without_repeating_or_losing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
name = "resume"
[target]
fast = true
[workload]
duration = "1s"
[matrix]
clients = [1, 2]
repetitions = 2
"#;
    write_study(dir.path(), text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args(["study", "study.toml"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("[1/4") {
            child.kill().unwrap();
            break;
        }
    }
    let _ = child.wait();
    assert!(seen.contains("[1/4"), "{seen}");
    let stored = export(dir.path()).len();
    assert!(
        (1..4).contains(&stored),
        "{stored} runs stored before the kill"
    );
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("resuming: {stored} of 4 runs already stored")),
        "{}",
        out.stderr
    );
    let runs = export(dir.path());
    let mut idx: Vec<u64> = runs.iter().map(|r| n(&r["run_index"])).collect();
    idx.sort();
    assert_eq!(idx, vec![0, 1, 2, 3]);
    let again = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(
        again
            .stderr
            .contains("all 4 runs of study \"resume\" are already stored"),
        "{}",
        again.stderr
    );
    let csv = pgrig(dir.path(), &["results", "export", "--format", "csv"]);
    assert_eq!(csv.stdout.lines().count(), 5);
    assert!(csv
        .stdout
        .starts_with("run_id,study,target,clients,repetition,round,tps,"));
}

#[test]
fn external_target_gets_alter_system_settings_and_no_password_is_stored() {
    let db = pgrig_testkit::fresh_db("study_ext");
    let dir = tempfile::tempdir().unwrap();
    let base = db.url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}password=hunter2");
    let runs = run_study(
        dir.path(),
        &format!(
            r#"
name = "external"
[target]
url = "{url}"
settings = {{ work_mem = "5MB" }}
[dataset]
scale = 1
[workload]
transactions = 30
[matrix]
clients = [2]
"#
        ),
    );
    assert_eq!(runs.len(), 1);
    let shown = pgrig(
        dir.path(),
        &["results", "show", &runs[0]["run_id"].to_string()],
    );
    assert!(!shown.stdout.contains("hunter2"), "password stored");
    let v: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(v["provenance"]["server_settings"]["work_mem"], "5120 kB");
    assert_eq!(v["provenance"]["target"]["kind"], "external");
    // reset at the end of the study
    assert_eq!(db.psql("SHOW work_mem"), "4MB");

    write_study(
        dir.path(),
        &format!("name = \"ext2\"\n[target]\nurl = \"{url}\"\nsettings = {{ shared_buffers = \"64MB\" }}\n"),
    );
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains("\"shared_buffers\" needs a server restart"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_study_files_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write_study(
        dir.path(),
        "name = \"x\"\n[dataset]\nscale = 1\nscael = 2\n",
    );
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("study.toml:4:1: unknown field `scael`"),
        "{}",
        out.stderr
    );

    write_study(
        dir.path(),
        "name = \"x\"\n[matrix]\nclients = [1]\n\"settings.a\" = [1]\nclinets = [2]\n",
    );
    let out = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert!(
        out.stderr
            .contains("study.toml:5:1: unknown matrix key `clinets`"),
        "{}",
        out.stderr
    );

    write_study(dir.path(), "name = \"x\"\n[matrix]\nclients = [1, 2]\nisolation = [\"serializable\", \"read committed\"]\nrepetitions = 3\n");
    let out = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert!(out.success(), "{}", out.stderr);
    assert!(
        out.stdout
            .contains("4 point(s) x 3 repetition(s) = 12 run(s)"),
        "{}",
        out.stdout
    );

    let out = pgrig(dir.path(), &["results", "list", "--store", "missing.db"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("missing.db"), "{}", out.stderr);
}

#[test]
fn custom_setup_files_and_script_matrix_with_warmup() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sql")).unwrap();
    std::fs::write(
        dir.path().join("sql/schema.sql"),
        "DROP TABLE IF EXISTS readings; CREATE TABLE readings (id bigserial PRIMARY KEY, v int, note text);",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sql/one.sql"),
        "\\set v random(1, 1000)\nINSERT INTO readings (v) VALUES (:v);\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sql/many.sql"),
        "INSERT INTO readings (v, note) SELECT g, repeat('x', :width) FROM generate_series(1, 4) g;\n",
    )
    .unwrap();
    let runs = run_study(
        dir.path(),
        r#"
version = 1
name = "custom"
[target]
fast = true
[dataset]
builtin = "none"
setup = ["sql/schema.sql"]
reinit = "per-point"
[workload]
transactions = 50
warmup = "1s"
defines = { width = 10 }
[matrix]
scripts = [["sql/one.sql"], "sql/many.sql@2"]
[collect]
relation_sizes = true
"#,
    );
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(n(&r["transactions"]["ok"]), 50);
        let readings = &r["relation_sizes"]["readings"];
        assert!(n(&readings["heap"]) > 0, "{r}");
        assert!(r["relation_sizes"].get("pgbench_accounts").is_none());
        assert!(!r["per_statement"].as_array().unwrap().is_empty());
    }
    assert_eq!(runs[1]["point"]["scripts"][0], "sql/many.sql@2");
}

/// A stored run's client CPU time and run-queue wait are the busiest thread's shares, as its
/// stored threads' seconds give them.
fn client_cpu_figures_agree_with_the_threads(r: &serde_json::Value) {
    let threads = r["client_threads"].as_array().expect("client_threads");
    let share = |t: &serde_json::Value, part: f64| part / t["wall_s"].as_f64().unwrap();
    let max = |f: &dyn Fn(&serde_json::Value) -> f64| threads.iter().map(f).fold(0.0, f64::max);
    let s = |t: &serde_json::Value, k: &str| t[k].as_f64().unwrap();
    let cpu = max(&|t| share(t, s(t, "user_s") + s(t, "sys_s")));
    let wait = max(&|t| share(t, s(t, "run_queue_wait_s")));
    assert!(cpu > 0.0, "{r}");
    assert!(
        (r["client_cpu_time"].as_f64().unwrap() - cpu).abs() < 1e-9,
        "{r}"
    );
    assert!(
        (r["client_run_queue_wait"].as_f64().unwrap() - wait).abs() < 1e-9,
        "{r}"
    );
}

#[test]
fn dry_run_parses_scripts_and_refuses_huge_matrices() {
    // issue 21: `\set x (` passed --dry-run; a 200x200x200 matrix aborted
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.sql"), "\\set x (\n").unwrap();
    write_study(
        dir.path(),
        "name = \"x\"\n[workload]\nscripts = [\"bad.sql\"]\n",
    );
    let out = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("study.toml:3:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("bad.sql:1: syntax error"),
        "{}",
        out.stderr
    );
    let list = format!(
        "[{}]",
        (1..=200)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    write_study(
        dir.path(),
        &format!("name = \"big\"\n[matrix]\nclients = {list}\nmax_tries = {list}\nrate = {list}\n"),
    );
    let out = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("the matrix has 8000000 points"),
        "{}",
        out.stderr
    );
}

/// A study file past 1 MiB is refused before it is parsed (a 16 MB matrix list reached 550 MB
/// of memory before the matrix limit refused it); `/dev/zero` as the study too.
#[test]
fn an_oversized_study_file_is_refused_before_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let list = (1..=2_000_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    write_study(
        dir.path(),
        &format!("name = \"big\"\n[matrix]\nclients = [{list}]\n"),
    );
    for file in ["study.toml", "/dev/zero"] {
        let (code, err, mib) = crate::common::run_measured(
            env!("CARGO_BIN_EXE_pgrig"),
            &["study", file, "--dry-run"],
            dir.path(),
        );
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "{file}: a study file may hold at most 1048576 bytes"
            )),
            "{err}"
        );
        assert!(mib < 64, "{file}: peak memory {mib} MiB");
    }
}

#[test]
fn a_fifo_or_an_empty_file_as_store_is_refused() {
    // issue 21: a FIFO as --store hung every command; an empty file was written into
    let dir = tempfile::tempdir().unwrap();
    write_study(dir.path(), "name = \"x\"\n");
    let ok = Command::new("mkfifo")
        .arg(dir.path().join("fifo.db"))
        .status()
        .unwrap();
    assert!(ok.success());
    for args in [
        &["study", "study.toml", "--dry-run", "--store", "fifo.db"][..],
        &["results", "list", "--store", "fifo.db"][..],
        &["report", "--store", "fifo.db"][..],
    ] {
        let out = pgrig(dir.path(), args);
        assert_eq!(out.code, Some(1), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("a FIFO, not a regular file"),
            "{args:?}: {}",
            out.stderr
        );
    }
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    let out = pgrig(
        dir.path(),
        &["study", "study.toml", "--dry-run", "--store", "empty.db"],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("an empty database"), "{}", out.stderr);
    assert_eq!(
        std::fs::metadata(dir.path().join("empty.db"))
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn one_workload_key_sweeps_a_pgbench_builtin_and_a_native_workload_together() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_study(
        dir.path(),
        "name = \"mixed\"\n[workload]\nclients = 2\nduration = \"1s\"\noptions = { tables = 2, table_size = 500 }\n[dataset]\nscale = 1\n[matrix]\nworkload = [\"tpcb-like\", \"oltp_write_only\"]\n",
    );
    assert_eq!(runs.len(), 2);
    let kinds: Vec<&str> = (runs.iter())
        .map(|r| r["point"]["workload"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(kinds, ["tpcb-like", "oltp_write_only"]);
    let texts = |r: &Value| -> Vec<String> {
        (r["per_statement"].as_array().into_iter().flatten())
            .filter_map(|s| s["text"].as_str().map(String::from))
            .collect()
    };
    // each point ran its own kind's statements, and did some
    assert!(
        texts(&runs[0])
            .iter()
            .any(|t| t.contains("pgbench_accounts")),
        "{:?}",
        texts(&runs[0])
    );
    assert!(
        texts(&runs[1]).iter().any(|t| t.contains("sbtest")),
        "{:?}",
        texts(&runs[1])
    );
    for r in &runs {
        assert!(r["tps"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    }
}
