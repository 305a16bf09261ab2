//! Server profiling with perf (`--profile` of `pgrig bench` and `pgrig run`, `[collect] profile`
//! of a study, `results flame`, `compare --flame`): a seq-scan workload's profile holds the
//! executor's scan function, flame graphs are well-formed SVG, and without perf the error says
//! what to install. Debian's postgres binary is stripped: its static functions (`ExecSeqScan`,
//! `SeqNext`, `heapgettup`) have no symbol, so the tests look for `heap_getnextslot`, the
//! exported table-AM function every sequential scan calls for each row.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use pgrig_testkit::fresh_db;

/// The scan the profiles must show (see the header).
const SCAN_FUNCTION: &str = "heap_getnextslot";
const SEQ_SCAN: &str = "SELECT count(*) FROM pgbench_accounts WHERE abalance <> 0;\n";

/// Parses an SVG file (well-formed XML with an `svg` root) and returns its text.
fn assert_svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // inferno's SVG starts with the SVG 1.1 doctype
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts)
        .unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    text
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn bench_profile_of_a_seq_scan_shows_the_scan_in_server_and_client_flame_graphs() {
    let db = fresh_db("profseq");
    pgbench_init(&db, 5);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("seq.sql");
    std::fs::write(&script, SEQ_SCAN).unwrap();
    let prof = dir.path().join("prof");
    let out = pgrig_bench(
        &db,
        &[
            "-n",
            "-T",
            "3",
            "-f",
            script.to_str().unwrap(),
            "--profile",
            prof.to_str().unwrap(),
            "--profile-client",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("server.svg ("), "{}", out.stderr);
    let folded = std::fs::read_to_string(prof.join("server.folded")).unwrap();
    assert!(
        folded.contains(SCAN_FUNCTION),
        "no {SCAN_FUNCTION} in:\n{folded}"
    );
    // the server's processes only (a process perf saw before it had a name shows as `:PID`)
    assert!(
        folded.lines().any(|l| l.starts_with("postgres;")),
        "{folded}"
    );
    assert!(!folded.lines().any(|l| l.starts_with("pgrig")), "{folded}");
    let svg = assert_svg(&prof.join("server.svg"));
    assert!(svg.contains(SCAN_FUNCTION));
    let client = std::fs::read_to_string(prof.join("client.folded")).unwrap();
    assert!(client.lines().any(|l| l.starts_with("pgrig")), "{client}");
    assert!(!client.contains("perf;"), "perf itself sampled: {client}");
    assert_svg(&prof.join("client.svg"));
    for f in [
        "server.folded",
        "server.svg",
        "client.folded",
        "client.svg",
        "report.html",
    ] {
        assert_eq!(mode(&prof.join(f)), 0o600, "{f}");
    }
    // and a page: the run's charts with its server flame graph embedded
    assert!(
        out.stderr
            .contains("report.html (the run's charts and flame graph)"),
        "{}",
        out.stderr
    );
    let page = std::fs::read_to_string(prof.join("report.html")).unwrap();
    assert_eq!(page.matches("<figure class=\"flame\"").count(), 1);
    assert!(page.contains("data:image/svg+xml;base64,"));
}

#[test]
fn bench_profile_without_perf_says_what_to_install_and_measures_nothing() {
    let db = fresh_db("profnoperf");
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("prof");
    let mut c = pgrig_cmd(&db);
    c.env("PGRIG_PERF", dir.path().join("no-such-perf"));
    c.args(["bench", "-n", "-S", "-t", "5", "--profile"])
        .arg(&prof);
    let out = pgrig_testkit::run(c);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("perf not found")
            && out.stderr.contains("apt-get install linux-perf")
            && out.stderr.contains("PGRIG_PERF"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("tps = "), "ran anyway: {}", out.stdout);
    assert!(!prof.join("server.folded").exists());
}

#[test]
fn bench_profile_options_need_a_profile_and_a_server_on_this_host() {
    let db = fresh_db("profargs");
    let out = pgrig_bench(&db, &["-n", "-S", "-t", "5", "--profile-client"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("need --profile DIR"), "{}", out.stderr);
    let out = pgrig_bench(
        &db,
        &["-n", "-S", "-t", "5", "--profile=x", "--profile-pid=abc"],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("invalid --profile-pid: \"abc\""),
        "{}",
        out.stderr
    );
    // pid 1 is not a PostgreSQL server
    let out = pgrig_bench(
        &db,
        &["-n", "-S", "-t", "5", "--profile=x", "--profile-pid=1"],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("process 1 is not a running PostgreSQL server"),
        "{}",
        out.stderr
    );
}

#[test]
fn run_profile_samples_the_throwaway_server() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("prof");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["run", "-T", "2", "-w", "select-only", "--profile"])
        .arg(&prof);
    let out = pgrig_testkit::run(c);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let folded = std::fs::read_to_string(prof.join("server.folded")).unwrap();
    assert!(folded.contains("PostgresMain"), "{folded}");
    assert_svg(&prof.join("server.svg"));
}

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    pgrig_testkit::run(c)
}

#[test]
fn a_study_with_profiling_stores_the_profiles_and_results_show_names_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seq.sql"), SEQ_SCAN).unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"seqprof\"\n[target]\nfast = true\n[dataset]\nscale = 5\n\
         [workload]\nscripts = [\"seq.sql\"]\nduration = \"2s\"\n\
         [matrix]\n\"settings.max_parallel_workers_per_gather\" = [0, 2]\n\
         [collect]\nprofile = true\nprofile_client = true\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let show = pgrig(dir.path(), &["results", "show", "1"]);
    assert!(show.success(), "{}", show.stderr);
    let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let server = &v["provenance"]["profiles"]["server"];
    assert!(server["samples"].as_u64().unwrap() > 0, "{server}");
    let named = server["folded"].as_str().unwrap();
    assert!(
        named.contains("pgrig results flame 1 -o server.svg"),
        "{named}"
    );
    assert!(
        v["provenance"]["profiles"]["client"]["samples"]
            .as_u64()
            .unwrap()
            > 0
    );
    // the stored stacks, and their flame graph
    let folded = pgrig(dir.path(), &["results", "flame", "1", "--folded"]);
    assert!(folded.success(), "{}", folded.stderr);
    assert!(folded.stdout.contains(SCAN_FUNCTION), "{}", folded.stdout);
    let svg = dir.path().join("run1.svg");
    let out = pgrig(
        dir.path(),
        &["results", "flame", "1", "-o", svg.to_str().unwrap()],
    );
    assert!(out.success(), "{}", out.stderr);
    assert!(assert_svg(&svg).contains(SCAN_FUNCTION));
    assert_eq!(mode(&svg), 0o600);
    // a differential flame graph of the two points
    let diff = dir.path().join("diff.svg");
    let out = pgrig(
        dir.path(),
        &[
            "compare",
            "--flame",
            "seqprof[settings.max_parallel_workers_per_gather=0]",
            "seqprof[settings.max_parallel_workers_per_gather=2]",
            "-o",
            diff.to_str().unwrap(),
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert!(assert_svg(&diff).contains(SCAN_FUNCTION));
}

#[test]
fn results_flame_of_a_run_without_a_profile_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"plain\"\n[target]\nfast = true\n[workload]\nbuiltin = \"select-only\"\ntransactions = 20\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let out = pgrig(dir.path(), &["results", "flame", "1"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("run 1 has no server profile")
            && out.stderr.contains("[collect] profile = true"),
        "{}",
        out.stderr
    );
    let out = pgrig(dir.path(), &["compare", "--flame", "1", "1"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("run 1 has no server profile"),
        "{}",
        out.stderr
    );
}
