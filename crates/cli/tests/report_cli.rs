//! `pgrig report` from the command line: a stored study becomes a private HTML file and SVG
//! files that open in the browser; `pgrig run --report` writes one at the end of a run; bad
//! input (unknown study or run id, empty or missing store, a store of another schema, an
//! unwritable output path, malformed JSON or pgbench logs, an unknown metric, nothing to draw)
//! is a clear message naming what is wrong, exit status 1, no panic and no file written.

use crate::browser;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use pgrig_study::store::RunRecord;
use pgrig_study::Store;
use pgrig_testkit::{run, CmdOutput};
use serde_json::json;

fn pgrig(dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(dir).args(args);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    run(c)
}

/// A store holding study "sweep": clients 1 and 4, two repetitions, each with a 5-second series
/// and a histogram, like `pgrig study` writes them.
fn store(dir: &Path) -> String {
    let path = dir.join("r.db").display().to_string();
    fill(&path);
    path
}

/// Stores study "sweep" into the store at `path` (a SQLite file or a postgresql:// URL).
fn fill(path: &str) {
    fill_named(path, "sweep");
}

/// Stores the sweep under the study name `name`.
fn fill_named(path: &str, name: &str) {
    let mut s = Store::open(path).unwrap();
    let id = s
        .study_id(
            name,
            "sweep.toml",
            &format!("name = \"{name}\"\n[matrix]\nclients = [1, 4]\n"),
        )
        .unwrap();
    let mut i = 0;
    for clients in [1u32, 4] {
        for rep in 1..=2u32 {
            let tps = 1000.0 * clients as f64 + 50.0 * rep as f64;
            let result = json!({"study": name, "target": "local", "point": {"clients": clients},
                "repetition": rep, "round": 1, "tps": tps, "duration_s": 5.0,
                "transactions": {"ok": tps as u64 * 5, "failed": 0, "retries": 0},
                "aborted_clients": 0, "client_cpu_time": 0.2, "client_run_queue_wait": 0.01,
                "latency_ms": {"mean": 1.0, "p50": 0.9, "p90": 1.5, "p95": 2.0, "p99": 3.0, "p99_9": 5.0, "max": 9.0},
                "wait_events": {"samples": 10, "events": {"CPU:running": 6, "Client:ClientRead": 4}}});
            let series: Vec<_> = (1..=5).map(|s| json!({"second": s, "tps": tps, "latency_ms_mean": 1.0, "failed": 0, "retries": 0})).collect();
            s.save_run(id, &RunRecord {
                run_index: i,
                point: json!({"clients": clients}),
                repetition: rep,
                round: 1,
                target: "local".into(),
                started_unix: 1.7e9,
                finished_unix: 1.7e9 + 5.0,
                tps,
                result,
                provenance: json!({"host": {"cpus": 2}, "seed": i}),
                series: json!(series),
                histogram: json!({"unit": "us", "buckets": [[800, 50], [1000, 40], [3000, 9], [9000, 1]]}),
            })
            .unwrap();
            i += 1;
        }
    }
}

fn fails_with(out: &CmdOutput, text: &str) {
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(text),
        "expected {text:?} in:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[test]
fn report_of_a_stored_study_is_a_private_page_with_svgs_that_open_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let out = pgrig(
        dir.path(),
        &[
            "report",
            "--store",
            &db,
            "sweep",
            "-o",
            "sweep.html",
            "--svg",
            "svg",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("wrote sweep.html"), "{}", out.stderr);
    let html = dir.path().join("sweep.html");
    assert_eq!(
        std::fs::metadata(&html).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let art = browser::artefact_dir();
    browser::check_report(
        &html,
        &[
            "sweep-tps-by-clients",
            "sweep-tps-over-time",
            "sweep-latency-percentiles",
            "sweep-wait-events",
        ],
        &art.join("cli-sweep.png"),
    );
    assert!(browser::check_svgs(&dir.path().join("svg"), &art.join("cli-sweep-svg")) >= 4);
    // one key over two values: the two points compared without asking
    assert!(
        browser::compare_rows(&html) >= 2,
        "compare view has no rows"
    );
    // --metric and a run picked by id
    let out = pgrig(
        dir.path(),
        &[
            "report", "--store", &db, "--metric", "p99", "-o", "p99.html",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(std::fs::read_to_string(dir.path().join("p99.html"))
        .unwrap()
        .contains("id=\"sweep-p99-by-clients\""));
    let out = pgrig(
        dir.path(),
        &["report", "--store", &db, "1", "-o", "one.html"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(std::fs::read_to_string(dir.path().join("one.html"))
        .unwrap()
        .contains("run 1 (sweep)"));
}

#[test]
fn report_compare_puts_the_comparison_of_two_selections_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let out = pgrig(
        dir.path(),
        &[
            "report",
            "--store",
            &db,
            "sweep",
            "--compare",
            "1,2",
            "3,4",
            "-o",
            "c.html",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let html = dir.path().join("c.html");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("<section id=\"compare\">"),
        "no compare section"
    );
    assert!(
        text.contains("1,2") && text.contains("3,4"),
        "sides not named"
    );
    assert!(
        browser::compare_rows(&html) >= 2,
        "compare view has no rows"
    );
    // a selection that names nothing is refused, naming the option
    let out = pgrig(
        dir.path(),
        &[
            "report",
            "--store",
            &db,
            "--compare",
            "sweep[clients=9]",
            "1",
            "-o",
            "d.html",
        ],
    );
    fails_with(&out, "--compare:");
    assert!(!dir.path().join("d.html").exists());
}

#[test]
fn unknown_study_or_run_id_and_empty_or_missing_store_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    fails_with(
        &pgrig(dir.path(), &["report", "--store", &db, "nope"]),
        "no study named \"nope\" in",
    );
    fails_with(
        &pgrig(dir.path(), &["report", "--store", &db, "nope"]),
        "(it holds: sweep)",
    );
    fails_with(
        &pgrig(dir.path(), &["report", "--store", &db, "999"]),
        "no run with id 999 in",
    );
    fails_with(
        &pgrig(dir.path(), &["report", "--store", "missing.db"]),
        "no such file",
    );
    let empty = dir.path().join("empty.db").display().to_string();
    drop(Store::open(&empty).unwrap());
    fails_with(
        &pgrig(dir.path(), &["report", "--store", &empty]),
        "holds no runs",
    );
    fails_with(
        &pgrig(dir.path(), &["report", "--store", &db, "--metric", "speed"]),
        "unknown --metric \"speed\"",
    );
    assert!(
        !dir.path().join("report.html").exists(),
        "nothing written on errors"
    );
}

#[test]
fn a_store_of_another_schema_is_refused_with_the_store_named() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    let c = rusqlite::Connection::open(&old).unwrap();
    c.execute_batch(
        "CREATE TABLE studies (id INTEGER PRIMARY KEY, name TEXT NOT NULL, text TEXT NOT NULL);
         CREATE TABLE runs (id INTEGER PRIMARY KEY, study_id INTEGER, tps REAL);
         INSERT INTO studies VALUES (1, 's', '');
         INSERT INTO runs VALUES (1, 1, 10.0);",
    )
    .unwrap();
    drop(c);
    let out = pgrig(dir.path(), &["report", "--store", old.to_str().unwrap()]);
    fails_with(&out, "written by an older pgrig");
    std::fs::write(
        dir.path().join("junk.db"),
        "not a database at all, just text\n".repeat(100),
    )
    .unwrap();
    fails_with(
        &pgrig(dir.path(), &["report", "--store", "junk.db"]),
        "results store \"junk.db\"",
    );
}

#[test]
fn unwritable_output_path_is_refused_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    fails_with(
        &pgrig(
            dir.path(),
            &["report", "--store", &db, "-o", "no/such/dir/r.html"],
        ),
        "could not write \"no/such/dir/r.html\"",
    );
    std::fs::create_dir(dir.path().join("ro")).unwrap();
    std::fs::write(dir.path().join("ro/r.html"), "").unwrap();
    std::fs::set_permissions(
        dir.path().join("ro/r.html"),
        std::fs::Permissions::from_mode(0o400),
    )
    .unwrap();
    if !nix::unistd::geteuid().is_root() {
        fails_with(
            &pgrig(dir.path(), &["report", "--store", &db, "-o", "ro/r.html"]),
            "could not write \"ro/r.html\"",
        );
    }
    fails_with(
        &pgrig(
            dir.path(),
            &["report", "--store", &db, "-o", "out.html", "--svg", &db],
        ),
        "could not write",
    );
    assert!(!dir.path().join("out.html").exists());
}

#[test]
fn malformed_json_and_pgbench_logs_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bad.json"),
        "{\n  \"tps\": 1,\n  \"transactions\": {,\n}\n",
    )
    .unwrap();
    fails_with(
        &pgrig(d, &["report", "bad.json"]),
        "bad.json:3: invalid JSON at column",
    );
    std::fs::write(d.join("other.json"), "{\"hello\": 1}\n").unwrap();
    fails_with(
        &pgrig(d, &["report", "other.json"]),
        "other.json:1: the document is not a pgrig run document",
    );
    std::fs::write(
        d.join("x.log"),
        "0 1 1200 0 1700000000 5000\n0 2 12x 0 1700000000 9000\n",
    )
    .unwrap();
    fails_with(
        &pgrig(d, &["report", "x.log"]),
        "x.log:2: expected a number for the latency (time), found \"12x\"",
    );
    std::fs::write(d.join("agg.log"), "1700000000 10 100 0 5\n").unwrap();
    fails_with(
        &pgrig(d, &["report", "agg.log"]),
        "agg.log:1: expected at least 6 fields",
    );
    std::fs::write(d.join("empty.log"), "").unwrap();
    fails_with(
        &pgrig(d, &["report", "empty.log"]),
        "empty.log: the log is empty",
    );
    fails_with(
        &pgrig(d, &["report", "gone.json"]),
        "could not read \"gone.json\": no such file",
    );
}

#[test]
fn a_run_without_anything_to_draw_is_not_presented_as_a_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bare.json"),
        "{\"tps\": 0, \"transactions\": {\"ok\": 0}}\n",
    )
    .unwrap();
    fails_with(
        &pgrig(dir.path(), &["report", "bare.json"]),
        "nothing to chart",
    );
    assert!(!dir.path().join("report.html").exists());
}

#[test]
fn pgrig_run_writes_a_report_of_the_run_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(
        dir.path(),
        &[
            "run",
            "--duration",
            "4s",
            "--clients",
            "2",
            "--report",
            "run.html",
        ],
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let html = dir.path().join("run.html");
    browser::check_report(
        &html,
        &[
            "run-tps-over-time",
            "run-latency-over-time",
            "run-latency-percentiles",
        ],
        &browser::artefact_dir().join("cli-run.png"),
    );
}

#[test]
fn report_reads_a_postgresql_store() {
    let db = pgrig_testkit::fresh_db("report_pg_store");
    fill(&db.url());
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(
        dir.path(),
        &["report", "--store", &db.url(), "sweep", "-o", "pg.html"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let html = std::fs::read_to_string(dir.path().join("pg.html")).unwrap();
    assert!(html.contains("id=\"sweep-tps-by-clients\""));
    if let Some(pw) = db.server().password() {
        assert!(!html.contains(pw), "no password in the page");
    }
}

#[test]
fn a_study_name_holding_a_slash_is_a_study_not_a_path() {
    // issue 21: `report team/tps` said "no such file"
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db").display().to_string();
    fill_named(&db, "team/tps");
    let out = pgrig(
        dir.path(),
        &["report", "--store", &db, "team/tps", "-o", "t.html"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(dir.path().join("t.html").is_file());
    let out = pgrig(dir.path(), &["report", "--store", &db, "team/nope"]);
    fails_with(&out, "no study named \"team/nope\"");
    fails_with(&out, "and no file of that name");
    let out = pgrig(dir.path(), &["report", "--store", &db, "logs/run.json"]);
    fails_with(&out, "could not read \"logs/run.json\": no such file");
}

#[test]
fn hostile_pgbench_logs_are_refused_or_bounded_without_a_panic() {
    // issue 21: `inf` epochs panicked with "capacity overflow"; an 11-day gap wrote 240 MB
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("inf.log"),
        "0 1 1000 0 1700000000 0\n0 2 1000 0 inf 0\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["report", "inf.log", "-o", "inf.html"]);
    fails_with(&out, "inf.log:2: time_epoch \"inf\" is not a finite number");
    assert!(!dir.path().join("inf.html").exists());
    std::fs::write(
        dir.path().join("gap.log"),
        "0 1 1000 0 1700000000 0\n0 2 1000 0 1700950400 0\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["report", "gap.log", "-o", "gap.html"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let size = std::fs::metadata(dir.path().join("gap.html"))
        .unwrap()
        .len();
    assert!(size < 20 << 20, "{size} bytes");
}
