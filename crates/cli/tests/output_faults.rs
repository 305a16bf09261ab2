//! Where the results go, when that fails: a closed standard output (`| true`, `| head`) or a full
//! device (standard output or error) never panics in any command; pgrig's own commands fail (exit 1) when their output could
//! not be written for another reason than a closed pipe; `--json` destinations are checked before
//! the run and a failed JSON write is exit 1 after the text report. Ctrl-C during `pgrig run`
//! exits 130 like `bench`, the summary and every JSON say so; Ctrl-C while a throwaway server is
//! initialised ends without advice to initialise again.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{finish_within, interrupt, output_of, pgbench_init};
use pgrig_testkit::{fresh_db, CmdOutput, TestDb};
use serde_json::Value;

/// `pgrig` without the test cluster's PG* environment.
fn pgrig() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE"] {
        c.env_remove(v);
    }
    c.stdin(Stdio::null());
    c
}

/// Runs `c` with its standard output a pipe whose reading end is closed at once.
fn with_closed_stdout(mut c: Command) -> CmdOutput {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    drop(child.stdout.take());
    output_of(child)
}

/// Runs `c` with its standard output on `/dev/full`.
fn with_full_stdout(mut c: Command) -> CmdOutput {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    c.stdout(full).stderr(Stdio::piped());
    output_of(c.spawn().expect("spawn"))
}

fn assert_no_panic(what: &str, out: &CmdOutput) {
    assert!(
        !out.stderr.contains("panicked") && out.code != Some(101),
        "{what} panicked (status {:?}):\n{}",
        out.code,
        out.stderr
    );
}

/// `pgrig run` of select-only on the test database for `duration`.
fn run_args(db: &TestDb, duration: &str, extra: &[&str]) -> Command {
    let mut c = pgrig();
    c.args([
        "run",
        "--target",
        &db.conninfo(),
        "--workload",
        "select-only",
    ]);
    c.args(["--clients", "1", "--duration", duration]);
    c.args(extra);
    c
}

#[test]
fn run_with_a_closed_stdout_finishes_without_panic() {
    let db = fresh_db("run_pipe");
    pgbench_init(&db, 1);
    let out = with_closed_stdout(run_args(&db, "1s", &[]));
    assert_no_panic("pgrig run | true", &out);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn run_to_a_full_device_says_so_and_exits_1() {
    let db = fresh_db("run_full");
    pgbench_init(&db, 1);
    let out = with_full_stdout(run_args(&db, "1s", &[]));
    assert_no_panic("pgrig run >/dev/full", &out);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("pgrig: error: could not write to standard output: No space left on device"),
        "{}",
        out.stderr
    );
}

#[test]
fn help_and_version_with_a_closed_stdout_do_not_panic() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["bench", "--help"],
        &["bench", "--version"],
        &["init", "--help"],
        &["run", "--help"],
    ] {
        let mut c = pgrig();
        c.args(args);
        let out = with_closed_stdout(c);
        assert_no_panic(&format!("pgrig {args:?} | true"), &out);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn errors_to_a_full_stderr_keep_their_status_without_panic() {
    let db = fresh_db("stderr_full");
    pgbench_init(&db, 1);
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
    };
    for (args, code) in [
        (&["--bogus"][..], 1),
        (&["bench", "--bogus"], 1),
        (&["bench", "-n", "-S", "-t", "5", "-P", "1"], 0),
    ] {
        let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
        c.args(args).stdout(Stdio::piped()).stderr(full());
        let out = output_of(c.spawn().expect("spawn"));
        assert_eq!(out.code, Some(code), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn bench_with_a_closed_or_full_stdout_keeps_pgbench_status() {
    let db = fresh_db("bench_pipe");
    pgbench_init(&db, 1);
    for full in [false, true] {
        let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
        c.args(["bench", "-n", "-S", "-t", "5"]);
        let out = if full {
            with_full_stdout(c)
        } else {
            with_closed_stdout(c)
        };
        assert_no_panic("pgrig bench", &out);
        // pgbench ignores failed report writes: exit 0
        assert_eq!(out.code, Some(0), "{}", out.stderr);
    }
}

#[test]
fn server_start_status_stop_with_a_closed_stdout_do_not_panic() {
    let state = tempfile::tempdir().unwrap();
    let server = |what: &str| {
        let mut c = pgrig();
        c.args(["server", what])
            .env("XDG_RUNTIME_DIR", state.path());
        with_closed_stdout(c)
    };
    let start = server("start");
    assert_no_panic("pgrig server start | true", &start);
    assert_eq!(start.code, Some(0), "{}", start.stderr);
    let status = server("status");
    assert_no_panic("pgrig server status | true", &status);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let stop = server("stop");
    assert_no_panic("pgrig server stop | true", &stop);
    assert_eq!(stop.code, Some(0), "{}", stop.stderr);
    let gone = server("status");
    assert_eq!(gone.code, Some(3), "stopped: {}", gone.stderr);
}

#[test]
fn study_and_results_with_a_closed_stdout_store_and_list_without_panic() {
    let db = fresh_db("study_pipe");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        format!(
            "name = \"pipe\"\n[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n[workload]\ntransactions = 20\n[matrix]\nclients = [1]\n",
            db.url()
        ),
    )
    .unwrap();
    let in_dir = |args: &[&str]| {
        let mut c = pgrig();
        c.args(args).current_dir(dir.path());
        c
    };
    let study = with_closed_stdout(in_dir(&["study", "study.toml"]));
    assert_no_panic("pgrig study | true", &study);
    assert_eq!(study.code, Some(0), "{}", study.stderr);
    for args in [
        &["results", "list"][..],
        &["results", "export", "--format", "json"],
        &["results", "export", "--format", "csv"],
    ] {
        let out = with_closed_stdout(in_dir(args));
        assert_no_panic(&format!("pgrig {args:?} | true"), &out);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
    }
    let full = with_full_stdout(in_dir(&["results", "list"]));
    assert_no_panic("pgrig results list >/dev/full", &full);
    assert_eq!(full.code, Some(1), "{}", full.stderr);
}

#[test]
fn a_json_path_that_cannot_be_written_fails_before_the_run() {
    let db = fresh_db("json_path");
    pgbench_init(&db, 1);
    let bad = "/nonexistent-dir/result.json";
    let t = Instant::now();
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-n", "-S", "-T", "60", "--json", bad]);
    let bench = pgrig_testkit::run(c);
    assert_eq!(bench.code, Some(1), "{}", bench.stderr);
    assert!(t.elapsed() < Duration::from_secs(30), "ran first");
    assert!(
        bench.stderr.contains(&format!(
            "could not open JSON result file \"{bad}\": No such file or directory"
        )),
        "{}",
        bench.stderr
    );
    assert!(!bench.stdout.contains("tps ="), "{}", bench.stdout);

    let mut c = pgrig();
    c.args(["run", "--duration", "60s", "--json", bad]);
    let run = pgrig_testkit::run(c);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("could not open JSON result file"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("starting a throwaway"),
        "{}",
        run.stderr
    );
}

#[test]
fn json_to_a_full_stdout_fails_after_the_text_report() {
    let db = fresh_db("json_full");
    pgbench_init(&db, 1);
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-n", "-S", "-t", "5", "--json", "-"]);
    let bench = with_full_stdout(c);
    assert_eq!(bench.code, Some(1), "{}", bench.stderr);
    assert!(
        bench.stderr.contains("tps = "),
        "report kept: {}",
        bench.stderr
    );
    assert!(
        bench.stderr.contains(
            "could not write the JSON result to standard output: No space left on device"
        ),
        "{}",
        bench.stderr
    );
    let run = with_full_stdout(run_args(&db, "1s", &["--json", "-"]));
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("throughput:"),
        "summary kept: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("could not write the JSON result to standard output"),
        "{}",
        run.stderr
    );
}

#[test]
fn json_files_are_private_and_say_the_run_was_not_interrupted() {
    use std::os::unix::fs::PermissionsExt;
    let db = fresh_db("json_file");
    pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args([
        "bench",
        "-n",
        "-S",
        "-t",
        "5",
        "--json",
        path.to_str().unwrap(),
    ]);
    let out = pgrig_testkit::run(c);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let v = json_file(&path);
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["interrupted"], false);
    assert_eq!(v["transactions"]["ok"], 5);
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Spawns `c` with stderr read line by line; returns once a line contains `marker`, with the
/// child and the reader that collects its whole stderr (the child is killed when the marker
/// never comes).
fn spawn_until(mut c: Command, marker: &str) -> (Child, std::thread::JoinHandle<String>) {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let wanted = marker.to_string();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(&wanted) {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    if rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "never saw {marker:?} in:\n{}",
            reader.join().unwrap_or_default()
        );
    }
    (child, reader)
}

#[test]
fn ctrl_c_during_run_exits_130_and_the_summary_and_json_say_interrupted() {
    let db = fresh_db("run_ctrlc");
    pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let c = run_args(&db, "60s", &["--json", path.to_str().unwrap()]);
    let (child, stderr) = spawn_until(c, "progress:");
    interrupt(&child);
    let out = finish_within(child, Duration::from_secs(60));
    let stderr = stderr.join().unwrap();
    assert_eq!(out.code, Some(130), "{stderr}");
    assert!(
        out.stdout.contains("interrupted:  stopped by Ctrl-C"),
        "{}",
        out.stdout
    );
    assert!(stderr.contains("interrupted (Ctrl-C)"), "{stderr}");
    let v = json_file(&path);
    assert_eq!(v["interrupted"], true);
    assert!(v["transactions"]["ok"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn ctrl_c_during_bench_puts_interrupted_into_the_json() {
    let db = fresh_db("bench_ctrlc");
    pgbench_init(&db, 1);
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-n", "-S", "-T", "60", "-P", "1", "--json", "-"]);
    let (child, stderr) = spawn_until(c, "progress:");
    interrupt(&child);
    let out = finish_within(child, Duration::from_secs(60));
    let stderr = stderr.join().unwrap();
    assert_eq!(out.code, Some(130), "{stderr}");
    let v: Value = serde_json::from_str(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["interrupted"], true);
}

#[test]
fn ctrl_c_while_a_throwaway_server_is_initialised_gives_no_advice_to_initialise_again() {
    let mut c = pgrig();
    c.args(["run", "--scale", "40", "--duration", "5s"]);
    let (child, stderr) = spawn_until(c, "initialising pgbench tables");
    std::thread::sleep(Duration::from_millis(1500));
    interrupt(&child);
    let out = finish_within(child, Duration::from_secs(60));
    let stderr = stderr.join().unwrap();
    assert_eq!(out.code, Some(130), "{stderr}");
    assert!(
        !stderr.contains("initialization again"),
        "advises to initialise a removed server again:\n{stderr}"
    );
    assert!(
        stderr.contains("the throwaway server is removed"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing measured: {}", out.stdout);
}

#[test]
fn ctrl_c_during_a_later_study_run_stops_it_at_once_and_exits_130() {
    let db = fresh_db("study_ctrlc");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        format!(
            "name = \"ctrlc\"\n[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n[workload]\nbuiltin = \"select-only\"\nduration = \"1s\"\n[matrix]\nduration = [\"1s\", \"60s\"]\n",
            db.url()
        ),
    )
    .unwrap();
    let mut c = pgrig();
    c.args(["study", "study.toml"]).current_dir(dir.path());
    // the first run (1 s) is stored; the second one (60 s) is running
    let (child, stderr) = spawn_until(c, "[1/2");
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    interrupt(&child);
    let out = finish_within(child, Duration::from_secs(60));
    let stderr = stderr.join().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the running run went on for {:?}:\n{stderr}",
        t.elapsed()
    );
    assert_eq!(out.code, Some(130), "{stderr}");
}
