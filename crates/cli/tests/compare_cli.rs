//! `pgrig compare` end to end on real runs. One store is filled once per test binary: a study
//! sweeping `synchronous_commit` on and off under an insert-only workload, 8 repetitions of
//! 1000 transactions per client (0.05-0.25 s each), on a *durable* throwaway server (the default, `fast = false`): with fsync on,
//! every commit under `synchronous_commit = on` waits for its WAL flush, so on this machine
//! `off` gives about 6x the tps (8,650 vs 52,900 with 2 clients, measured when the test was
//! written). The test cluster runs with fsync off, where the setting changes little, so the
//! study does not use it. A second, tiny study with another workload (pgbench's select-only)
//! is stored alongside for the refusals.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use pgrig_testkit::{run, CmdOutput};

const SYNC_STUDY: &str = r#"
name = "sync"
[dataset]
scale = 1
[workload]
scripts = ["insert.sql"]
clients = 2
transactions = 1000
[matrix]
"settings.synchronous_commit" = ["on", "off"]
repetitions = 8
[collect]
server_stats = true
"#;

const OTHER_STUDY: &str = r#"
name = "reads"
repetitions = 4
[target]
fast = true
[workload]
builtin = "select-only"
transactions = 20
[collect]
server_stats = false
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    store: String,
}

fn pgrig(dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    run(c)
}

fn study(dir: &Path, file: &str, text: &str, store: &str) {
    std::fs::write(dir.join(file), text).unwrap();
    let out = pgrig(dir, &["study", file, "--store", store]);
    assert!(out.success(), "{file}:\n{}\n{}", out.stdout, out.stderr);
}

/// The shared store, filled on first use.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let store = dir.join("runs.db").display().to_string();
        std::fs::write(
            dir.join("insert.sql"),
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, now());\n",
        )
        .unwrap();
        study(&dir, "sync.toml", SYNC_STUDY, &store);
        study(&dir, "reads.toml", OTHER_STUDY, &store);
        Fixture {
            _dir: tmp,
            dir,
            store,
        }
    })
}

fn compare(args: &[&str]) -> CmdOutput {
    let f = fixture();
    let mut all = vec!["compare", "--store", &f.store];
    all.extend_from_slice(args);
    pgrig(&f.dir, &all)
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let out = compare(&all);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).expect("compare --format json")
}

fn row<'a>(c: &'a Value, metric: &str) -> &'a Value {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"]["name"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row in {c}"))
}

const ON: &str = "sync[settings.synchronous_commit=on]";
const OFF: &str = "sync[settings.synchronous_commit=off]";

#[test]
fn synchronous_commit_off_is_a_significant_change() {
    let c = json(&[ON, OFF]);
    let tps = row(&c, "tps");
    assert_eq!(tps["verdict"], "significant", "{tps}");
    assert!(tps["p_value"].as_f64().unwrap() < 0.01, "{tps}");
    assert!(tps["change_pct"].as_f64().unwrap() > 50.0, "{tps}");
    assert_eq!(tps["a"]["n"], 8);
    assert!(tps["a"]["ci"]["level"].as_f64().unwrap() >= 0.95, "{tps}");
    assert_eq!(row(&c, "latency_avg")["verdict"], "significant");
    // the terminal table says it with the sign of the change
    let out = compare(&[ON, OFF]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let line = out.stdout.lines().find(|l| l.starts_with("tps ")).unwrap();
    assert!(line.contains("  +"), "{}", out.stdout);
    let md = compare(&[ON, OFF, "--format", "markdown", "--metric", "tps,p99"]);
    assert!(md.stdout.contains("| metric | A median |"), "{}", md.stdout);
    assert_eq!(md.stdout.matches("\n| tps ").count(), 1, "{}", md.stdout);
}

/// Run ids of the `synchronous_commit = value` runs with odd (or even) repetitions.
fn interleaved(value: &str, odd: bool) -> String {
    let out = pgrig(
        &fixture().dir,
        &[
            "results",
            "export",
            "--store",
            &fixture().store,
            "--study",
            "sync",
        ],
    );
    let runs: Value = serde_json::from_str(&out.stdout).unwrap();
    let ids: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["point"]["settings.synchronous_commit"] == value)
        .filter(|r| (r["repetition"].as_u64().unwrap() % 2 == 1) == odd)
        .map(|r| r["run_id"].to_string())
        .collect();
    assert_eq!(ids.len(), 4);
    ids.join(",")
}

#[test]
fn repetitions_of_one_configuration_show_no_difference() {
    // Odd against even repetitions of the same point (interleaved, so slow drift cannot
    // separate them). Under no difference, 4 + 4 runs are called significant with probability
    // 2/70 (2.9 %); the same check on the other point is an independent second sample, so the
    // test fails spuriously only if both are (0.08 %).
    let split = |v: &str| [interleaved(v, true), interleaved(v, false)];
    let verdict = |[a, b]: &[String; 2]| {
        let c = json(&[a, b, "--metric", "tps"]);
        row(&c, "tps")["verdict"].as_str().unwrap().to_string()
    };
    let same = [split("on"), split("off")]
        .into_iter()
        .find(|s| verdict(s) == "not_significant")
        .expect("odd vs even repetitions of one point: no difference on at least one point");
    let out = compare(&[&same[0], &same[1], "--metric", "tps"]);
    let line = out.stdout.lines().find(|l| l.starts_with("tps ")).unwrap();
    assert!(line.contains("  ~  "), "{}", out.stdout);
}

#[test]
fn too_few_repetitions_are_said_in_words() {
    let two = |odd| {
        let ids = interleaved("on", odd);
        ids.split(',').take(2).collect::<Vec<_>>().join(",")
    };
    let out = compare(&[&two(true), &two(false), "--metric", "tps"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("too few runs"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("smallest p-value they can give is 0.333")
            && out.stdout.contains("run at least 4 on each side"),
        "{}",
        out.stdout
    );
}

/// Runs `compare` expecting failure; returns its standard error.
fn refused(args: &[&str]) -> String {
    let out = compare(args);
    assert_eq!(
        out.code,
        Some(1),
        "{args:?}: {}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    out.stderr
}

#[test]
fn bad_selections_are_refused_with_clear_messages() {
    let e = refused(&["nosuch", OFF]);
    assert!(
        e.contains("no study named \"nosuch\"") && e.contains("reads, sync"),
        "{e}"
    );
    let e = refused(&["99999,99998", OFF]);
    assert!(e.contains("no run with id 99999"), "{e}");
    let e = refused(&["sync[settings.synchronous_commit]", OFF]);
    assert!(
        e.contains("character 33: expected `=` after the key")
            && e.contains("\n  sync[settings.synchronous_commit]\n")
            && e.contains(&format!("\n  {}^", " ".repeat(32))),
        "{e}"
    );
    let e = refused(&["sync[clients=4]", OFF]);
    assert!(
        e.contains(
            "no matrix key `clients`; valid keys: settings.synchronous_commit, target, round"
        ),
        "{e}"
    );
    let e = refused(&["sync[settings.synchronous_commit=local]", OFF]);
    assert!(
        e.contains("stored values of settings.synchronous_commit: off, on"),
        "{e}"
    );
    let one = interleaved("on", true);
    let e = refused(&[one.split(',').next().unwrap(), OFF]);
    assert!(
        e.contains("selects 1 run: compare needs repetitions, at least 4 runs on each side"),
        "{e}"
    );
    let e = refused(&[ON, OFF, "--metric", "tps,p98"]);
    assert!(
        e.contains("unknown metric \"p98\"") && e.contains("p99: latency"),
        "{e}"
    );
    let e = refused(&[ON]);
    assert!(
        e.contains("required arguments were not provided:\n  <B>")
            && e.contains("Usage: pgrig compare "),
        "{e}"
    );
    let e = refused(&[ON, OFF, "--format", "yaml"]);
    assert!(e.contains("invalid --format \"yaml\""), "{e}");
    let e = refused(&["reads", OFF, "--metric", "wal_bytes_per_tx"]);
    assert!(e.contains("different workloads"), "{e}");
}

#[test]
fn different_workloads_are_refused_unless_forced() {
    let e = refused(&["reads", ON]);
    assert!(
        e.contains(
            "A and B ran different workloads (A: builtin select-only; B: ./insert.sql (text "
        ),
        "{e}"
    );
    assert!(e.contains("--force compares them anyway"), "{e}");
    let out = compare(&["reads", ON, "--force", "--metric", "tps"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .contains("warning: different workloads compared (--force)"),
        "{}",
        out.stdout
    );
    let e = refused(&["reads", "reads", "--metric", "wal_bytes_per_tx"]);
    assert!(
        e.contains("metric wal_bytes_per_tx is not recorded by the runs of A (reads)")
            && e.contains("server_stats = true"),
        "{e}"
    );
}

#[test]
fn empty_missing_and_unwritable_stores_and_outputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let missing = d.join("none.db").display().to_string();
    let out = pgrig(d, &["compare", "--store", &missing, "a", "b"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("no such file (run a study first"),
        "{}",
        out.stderr
    );
    let empty = d.join("empty.db").display().to_string();
    drop(pgrig_study::Store::open(&empty).unwrap());
    let out = pgrig(d, &["compare", "--store", &empty, "insert", "1,2"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("holds no runs"), "{}", out.stderr);
    let e = refused(&[ON, OFF, "-o", "/nonexistent-dir/cmp.txt"]);
    assert!(
        e.contains("could not write \"/nonexistent-dir/cmp.txt\""),
        "{e}"
    );
    let file = d.join("cmp.md");
    let out = compare(&[
        ON,
        OFF,
        "--format",
        "markdown",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&file).unwrap().contains("| tps "));
}

#[test]
fn postgres_store_is_compared_like_sqlite_and_never_shows_its_password() {
    let db = pgrig_testkit::fresh_db("compare_pg_store");
    let dir = tempfile::tempdir().unwrap();
    let sep = if db.url().contains('?') { '&' } else { '?' };
    let secret = if db.server().password().is_none() {
        "&password=hunter2"
    } else {
        ""
    };
    let store = format!("{}{sep}application_name=pgrig_compare{secret}", db.url());
    let text = "name = \"pgc\"\nrepetitions = 4\n[target]\nfast = true\n[workload]\n\
                transactions = 20\n[matrix]\nclients = [1, 2]\n";
    std::fs::write(dir.path().join("pgc.toml"), text).unwrap();
    let out = pgrig(dir.path(), &["study", "pgc.toml", "--store", &store]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let out = pgrig(
        dir.path(),
        &[
            "compare",
            "--store",
            &store,
            "pgc[clients=1]",
            "pgc[clients=2]",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let c: Value = serde_json::from_str(&out.stdout).unwrap();
    let tps = row(&c, "tps");
    assert_eq!(
        (tps["a"]["n"].as_u64(), tps["b"]["n"].as_u64()),
        (Some(4), Some(4))
    );
    let out = pgrig(dir.path(), &["compare", "--store", &store, "nosuch", "pgc"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("no study named \"nosuch\""),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    let out = pgrig(
        dir.path(),
        &["compare", "--store", &store, "99999,99998", "pgc"],
    );
    assert!(
        out.stderr.contains("no run with id 99999"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
}

/// Two selections that ran one after the other (two studies, or two points of a study in its
/// default order, which runs each point's repetitions together) are said not to interleave in
/// time, beside the verdict, with the remedy; odd against even repetitions of one point, which
/// alternate, are not.
#[test]
fn selections_run_one_after_the_other_are_said_not_to_interleave() {
    let out = compare(&["sync", "reads", "--force", "--metric", "tps"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("warning: A ran entirely before B")
            && out.stdout.contains("order = \"interleaved\""),
        "{}",
        out.stdout
    );
    let c = json(&[ON, OFF, "--metric", "tps"]);
    assert!(
        c["warnings"]
            .to_string()
            .contains("A ran entirely before B"),
        "{c}"
    );
    let c = json(&[
        &interleaved("on", true),
        &interleaved("on", false),
        "--metric",
        "tps",
    ]);
    let warnings = c["warnings"].to_string();
    assert!(!warnings.contains("ran entirely before"), "{warnings}");
}
