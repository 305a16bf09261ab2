//! Optimizer studies across server versions and settings, end to end on real servers:
//! `[matrix] server_version = ["15", "18"]` starts one throwaway server per version (once,
//! whatever the order of the points) for query and pgbench-like studies, each point recording
//! its server's version (checked against what the server itself computes from `SHOW
//! server_version`); an unknown version is an error at its value; `enable_nestloop = off`
//! changes a known nested-loop plan and `pgrig compare` and the report list the change with both
//! plans and the latency verdict (medians recomputed from the stored executions); a
//! `default_statistics_target` change is followed by an ANALYZE (its MCV list grows).
//! PostgreSQL 18 comes from `PGRIG_PG18_BINDIR`, else what `.ci/install-pg18` installed; a
//! test needing it fails saying so when neither is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::browser;

/// A small dataset with a known nested-loop join: 3 rows of `a` each joined to 100 rows of
/// `b` through an index (the planner's choice with nested loops allowed), 200 distinct `w`.
const SETUP: &str = "\
DROP TABLE IF EXISTS b;
DROP TABLE IF EXISTS a;
CREATE TABLE a (id int PRIMARY KEY, name text);
INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 2000) g;
CREATE TABLE b (id int PRIMARY KEY, a_id int NOT NULL, w int NOT NULL);
INSERT INTO b SELECT g, g % 2000 + 1, g % 200 FROM generate_series(1, 200000) g;
CREATE INDEX b_a_id ON b (a_id);
ANALYZE a;
ANALYZE b;
";

const JOIN: &str = "SELECT count(*) FROM a JOIN b ON b.a_id = a.id WHERE a.id <= 3";
/// As many rows as the server's major version, computed by the server from its own version.
const VERSION_ROWS: &str =
    "SELECT g FROM generate_series(1, split_part(current_setting('server_version'), '.', 1)::int) g";

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    c.env("PGRIG_PG18_BINDIR", pg18());
    pgrig_testkit::run(c)
}

/// PostgreSQL 18's bin directory: `PGRIG_PG18_BINDIR`, else `.ci/install-pg18`'s answer.
fn pg18() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("PGRIG_PG18_BINDIR") {
            return PathBuf::from(d);
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = Command::new(root.join(".ci/install-pg18"))
            .current_dir(&root)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
            }
            other => panic!(
                "these tests need PostgreSQL 18: set PGRIG_PG18_BINDIR or let .ci/install-pg18 install it ({other:?})"
            ),
        }
    })
    .clone()
}

/// Writes the setup file and `study.toml`, runs the study and exports its runs.
fn study(dir: &Path, text: &str) -> (pgrig_testkit::CmdOutput, Vec<Value>) {
    std::fs::write(dir.join("setup.sql"), SETUP).unwrap();
    std::fs::write(dir.join("study.toml"), text).unwrap();
    let out = pgrig(dir, &["study", "study.toml"]);
    let export = pgrig(dir, &["results", "export", "--format", "json"]);
    let runs = serde_json::from_str::<Value>(&export.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    (out, runs)
}

fn query<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["query"]["queries"]
        .as_array()
        .and_then(|qs| qs.iter().find(|q| q["name"] == name))
        .unwrap_or_else(|| panic!("no query {name} in {run}"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Client times of a query's successful executions over `runs`.
fn client_times(runs: &[&Value], name: &str) -> Vec<f64> {
    runs.iter()
        .flat_map(|r| query(r, name)["executions"].as_array().unwrap().clone())
        .filter(|e| e["ok"] == true)
        .map(|e| e["client_ms"].as_f64().unwrap())
        .collect()
}

#[test]
fn server_version_sweep_runs_each_version_on_its_own_server_started_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("join.sql"), JOIN).unwrap();
    std::fs::write(dir.path().join("version.sql"), VERSION_ROWS).unwrap();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "versions"
order = "interleaved"
[target]
fast = true
[dataset]
builtin = "none"
setup = ["setup.sql"]
[workload]
queries = ["join.sql", "version.sql"]
executions = 2
explain = "separate"
[matrix]
server_version = ["15", "18"]
"settings.enable_nestloop" = ["on", "off"]
repetitions = 2
"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(runs.len(), 8, "2 versions × 2 settings × 2 repetitions");
    let all = format!("{}{}", out.stdout, out.stderr);
    let starts: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("starting a throwaway PostgreSQL server"))
        .collect();
    assert_eq!(starts.len(), 2, "one server per version: {starts:?}");
    assert!(starts[0].contains("(PostgreSQL 15)") && starts[1].contains("(PostgreSQL 18)"));
    for r in &runs {
        let major = r["point"]["server_version"].as_str().unwrap();
        let recorded = r["server_version"].as_str().unwrap();
        assert!(
            recorded.starts_with(&format!("{major}.")),
            "point {major} recorded {recorded}"
        );
        // the server's own SHOW server_version: the version query returns its major as rows
        for e in query(r, "version.sql")["executions"].as_array().unwrap() {
            assert_eq!(e["rows"].as_u64(), major.parse().ok(), "{e}");
        }
        let id = r["run_id"].to_string();
        let shown: Value =
            serde_json::from_str(&pgrig(dir.path(), &["results", "show", &id]).stdout).unwrap();
        let p = &shown["provenance"];
        assert!(
            p["server_version"]
                .as_str()
                .unwrap()
                .contains(&format!("PostgreSQL {major}.")),
            "{}",
            p["server_version"]
        );
        let bin = p["target"]["bin_dir"].as_str().unwrap();
        let v = Command::new(Path::new(bin).join("postgres"))
            .arg("--version")
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&v.stdout).contains(&format!(") {major}.")));
    }
    // compare between the versions speaks of every query's plan
    let c = pgrig(
        dir.path(),
        &[
            "compare",
            "versions[server_version=15,settings.enable_nestloop=off]",
            "versions[server_version=18,settings.enable_nestloop=off]",
        ],
    );
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert!(
        c.stdout
            .contains("Plans: each of the 2 queries ran the same plan on both sides.")
            || c.stdout.contains(" of 2 queries; + slower"),
        "{}",
        c.stdout
    );
}

#[test]
fn server_version_sweep_runs_a_pgbench_like_study_on_each_version() {
    let dir = tempfile::tempdir().unwrap();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "versions-tpcb"
[target]
fast = true
[dataset]
scale = 1
[workload]
builtin = "select-only"
transactions = 50
[matrix]
server_version = [18, 15]
"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(runs.len(), 2);
    for (r, major) in runs.iter().zip(["18", "15"]) {
        assert_eq!(r["point"]["server_version"], major);
        let recorded = r["server_version"].as_str().unwrap();
        assert!(recorded.starts_with(&format!("{major}.")), "{recorded}");
        assert_eq!(r["transactions"]["ok"], 50, "{}", r["transactions"]);
    }
    // --dry-run names the binaries of each version
    let dry = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert_eq!(dry.code, Some(0), "{}", dry.stderr);
    let pg18 = pg18().canonicalize().unwrap();
    assert!(
        dry.stdout.contains(&format!(
            "  target \"local\", PostgreSQL 18: {}\n",
            pg18.display()
        )),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("  target \"local\", PostgreSQL 15: /"),
        "{}",
        dry.stdout
    );
}

#[test]
fn an_unknown_or_external_server_version_is_an_error_at_its_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"v\"\n[workload]\nquery = \"SELECT 1\"\n[matrix]\nserver_version = [\"15\", \"9\"]\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("s.toml:5:25: matrix `server_version`: PostgreSQL 9 is not installed where pgrig looks (PGRIG_PG9_BINDIR"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("/usr/lib/postgresql/9/bin"),
        "{}",
        out.stderr
    );
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"v\"\n[target]\nurl = \"postgresql://localhost/x\"\n[workload]\nquery = \"SELECT 1\"\n[matrix]\nserver_version = [\"15.2\"]\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains("s.toml:7:19: matrix `server_version` value \"15.2\": a major version"),
        "{}",
        out.stderr
    );
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"v\"\n[target]\nurl = \"postgresql://localhost/x\"\n[workload]\nquery = \"SELECT 1\"\n[matrix]\nserver_version = [\"15\"]\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("s.toml:7:19: matrix `server_version` starts a throwaway server of each version, but target \"target1\" is an external server"),
        "{}",
        out.stderr
    );
}

const NESTLOOP_STUDY: &str = r#"
name = "nl"
[target]
fast = true
[dataset]
builtin = "none"
setup = ["setup.sql"]
[workload]
queries = ["join.sql"]
executions = 9
[matrix]
"settings.enable_nestloop" = ["on", "off"]
"#;

/// The nested-loop study run in `dir`: its runs, checked to have the expected plans.
fn nestloop_study(dir: &Path) -> Vec<Value> {
    std::fs::write(dir.join("join.sql"), JOIN).unwrap();
    let (out, runs) = study(dir, NESTLOOP_STUDY);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(runs.len(), 2);
    runs
}

#[test]
fn enable_nestloop_off_changes_the_plan_and_compare_lists_it_with_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let runs = nestloop_study(dir.path());
    let (on, off) = (&runs[0], &runs[1]);
    let json = pgrig(
        dir.path(),
        &[
            "compare",
            "nl[settings.enable_nestloop=on]",
            "nl[settings.enable_nestloop=off]",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let c: Value = serde_json::from_str(&json.stdout).unwrap();
    let changes = c["plan_changes"].as_array().expect("plan changes listed");
    assert_eq!(changes.len(), 1, "{}", c["plan_changes"]);
    let ch = &changes[0];
    assert_eq!(ch["query"], "join.sql");
    let plan = |side: &str| -> String {
        ch[side]["plan"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string() + "\n")
            .collect()
    };
    assert!(plan("a").contains("Nested Loop (Inner)"), "{}", plan("a"));
    assert!(
        plan("a").contains("Bitmap Index Scan using b_a_id"),
        "{}",
        plan("a")
    );
    assert!(!plan("b").contains("Nested Loop"), "{}", plan("b"));
    // the listed medians are the stored executions' medians
    let lat = &ch["latency"];
    for (side, run) in [("a", on), ("b", off)] {
        let want = median(client_times(&[run], "join.sql"));
        assert_eq!(lat[side]["median"].as_f64(), Some(want), "{side}");
        assert_eq!(lat[side]["n"], 9);
    }
    assert!(
        ["significant", "not_significant"].contains(&lat["verdict"].as_str().unwrap()),
        "{lat}"
    );
    // the text: the verdict, both medians as stored, both plans side by side
    let text = pgrig(
        dir.path(),
        &[
            "compare",
            "nl[settings.enable_nestloop=on]",
            "nl[settings.enable_nestloop=off]",
        ],
    );
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    let line = text
        .stdout
        .lines()
        .find(|l| l.contains(" join.sql: median client time "))
        .unwrap_or_else(|| panic!("{}", text.stdout));
    let ms = |run: &Value| format!("{:.3} ms", median(client_times(&[run], "join.sql")));
    assert!(
        line.contains(&format!("{} -> {}", ms(on), ms(off))),
        "{line}"
    );
    let sign = line.chars().next().unwrap();
    let expect = match lat["verdict"].as_str().unwrap() {
        "not_significant" => '~',
        _ if lat["b"]["median"].as_f64() > lat["a"]["median"].as_f64() => '+',
        _ => '-',
    };
    assert_eq!(sign, expect, "{line}");
    let from = text.stdout.find("Plan changes").unwrap();
    let normalised = normalise(&text.stdout[from..]);
    pgrig_testkit::snapshot::check(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots"),
        "study_versions_compare_plan_changes.txt",
        &normalised,
    );
}

/// The plan-change text without its figures: numbers as `N`, the verdict's sign and change as
/// `±`, the column padding (it follows the numbers' widths) as one space.
fn normalise(text: &str) -> String {
    let text = crate::common::without_numbers(text);
    text.lines()
        .map(|l| {
            let l = match l.get(..2) {
                Some("+ " | "- " | "~ " | "? ") => format!("± {}", &l[2..]),
                _ => l.to_string(),
            };
            let l = l
                .replace("(+N%)", "(±)")
                .replace("(-N%)", "(±)")
                .replace("(~)", "(±)");
            let (left, right) = l.split_once(" | ").unwrap_or((&l, ""));
            match right.is_empty() && !l.contains(" | ") {
                true => left.trim_end().to_string(),
                false => format!("{} | {right}", left.trim_end()),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_report_shows_changed_plans_side_by_side_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    nestloop_study(dir.path());
    let out = pgrig(dir.path(), &["report", "nl", "-o", "nl.html"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let html = std::fs::read_to_string(dir.path().join("nl.html")).unwrap();
    assert!(
        html.contains("Plan changed: join.sql (settings.enable_nestloop on → off)"),
        "no plan-change section"
    );
    assert!(html.contains("plan at on") && html.contains("plan at off"));
    assert!(html.contains("Nested Loop (Inner)"));
    let id = "nl-plan-change-settings-enable-nestloop-on-off-join-sql";
    // the two plans as text columns (left-aligned, indentation kept)
    assert!(
        html.contains(&format!("<table id=\"{id}-table\" class=\"text\">")),
        "plans not laid out as text"
    );
    browser::check_report(
        &dir.path().join("nl.html"),
        &[id, &format!("{id}-a"), &format!("{id}-b")],
        &browser::artefact_dir().join("cli-plan-changes.png"),
    );
}

#[test]
fn a_statistics_target_change_is_followed_by_an_analyze() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mcv.sql"),
        "SELECT unnest(most_common_vals::text::text[]) FROM pg_stats WHERE tablename = 'b' AND attname = 'w'",
    )
    .unwrap();
    let (out, runs) = study(
        dir.path(),
        r#"
name = "stats"
[target]
fast = true
settings = { autovacuum = "off" }
[dataset]
builtin = "none"
setup = ["setup.sql"]
[workload]
queries = ["mcv.sql"]
executions = 1
explain = "separate"
[matrix]
"settings.default_statistics_target" = [10, 1000]
"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let mcvs: Vec<u64> = runs
        .iter()
        .map(|r| {
            query(r, "mcv.sql")["executions"][0]["rows"]
                .as_u64()
                .unwrap()
        })
        .collect();
    // at most 10 values kept at target 10; all 200 once ANALYZE ran under 1000
    assert!(mcvs[0] <= 10, "{mcvs:?}");
    assert_eq!(mcvs[1], 200, "{mcvs:?}");
    for r in &runs {
        let id = r["run_id"].to_string();
        let shown: Value =
            serde_json::from_str(&pgrig(dir.path(), &["results", "show", &id]).stdout).unwrap();
        let a = &shown["provenance"]["analyze"];
        assert_eq!(a["statement"], "ANALYZE", "{a}");
        let target = r["point"]["settings.default_statistics_target"].to_string();
        assert_eq!(
            a["after"][0],
            format!("default_statistics_target = {target}")
        );
    }
}

#[test]
fn the_optimizer_versions_example_runs_on_both_versions_and_reports_plan_changes() {
    let dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies");
    let store = dir.path().join("ex.db");
    let html = dir.path().join("ex.html");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(&examples)
        .args([
            "study",
            "optimizer_versions.toml",
            "--set",
            "workload.executions=3",
        ])
        .arg("--store")
        .arg(&store)
        .arg("--report")
        .arg(&html)
        .env("PGRIG_PG18_BINDIR", pg18());
    let out = pgrig_testkit::run(c);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let export = pgrig(
        dir.path(),
        &[
            "results",
            "export",
            "--format",
            "json",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    let runs: Vec<Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 4);
    for r in &runs {
        let major = r["point"]["server_version"].as_str().unwrap();
        assert!(r["server_version"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{major}.")));
        assert_eq!(r["query"]["queries"].as_array().unwrap().len(), 4);
    }
    // the nested loops of region_lines.sql give way to hash joins with enable_nestloop off
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Plan changed: optimizer_versions/region_lines.sql (settings.enable_nestloop on → off at server_version=15)"),
        "no plan change listed"
    );
    browser::check_report(
        &html,
        &[
            "optimizer-versions-q-error",
            "optimizer-versions-plan-change-settings-enable-nestloop-on-off-at-server-version-15-optimizer-versions-region-lines-sql",
        ],
        &browser::artefact_dir().join("example-optimizer_versions.toml.png"),
    );
}
