//! Helpers shared by the CLI's integration tests: run `pgrig` and the installed pgbench against
//! a test database, normalise reports for comparison, and [`alone`]: the turn-taking of the
//! tests that need the machine to themselves.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgrig_testkit::{run, CmdOutput, TestDb};

/// Tests whose figures suffer from other work on the machine (timer and CPU-accounting
/// comparisons, live metrics scrapes, report figures against pgbench's clock) and the heaviest
/// load generator (`pgbench_tap`) hold this guard for their whole run, so none of them runs
/// beside another. (All the suite's tests share one process; cargo runs them on as many threads
/// as there are cores, so such a test still runs beside at most that many ordinary ones.) A
/// test that panicked while holding it does not block the others.
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn pgrig_cmd(db: &TestDb) -> Command {
    db.command(env!("CARGO_BIN_EXE_pgrig"))
}

/// `pgrig bench ARGS` with the database's PG* environment.
pub fn pgrig_bench(db: &TestDb, args: &[&str]) -> CmdOutput {
    let mut c = pgrig_cmd(db);
    c.arg("bench").args(args);
    run(c)
}

/// The installed pgbench (the oracle; the test fails when it is missing) with the same
/// environment.
pub fn pgbench(db: &TestDb, args: &[&str]) -> CmdOutput {
    let mut c = db.pgbench();
    c.args(args);
    run(c)
}

/// Initialises pgbench's tables with the installed pgbench (the oracle), quietly.
pub fn pgbench_init(db: &TestDb, scale: u32) {
    let s = scale.to_string();
    let out = pgbench(db, &["-i", "-q", "-s", &s]);
    assert!(out.success(), "pgbench -i failed: {}", out.stderr);
}

/// Replaces every number in `s` with `N` (to compare report lines apart from the figures).
pub fn without_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() || (in_num && (ch == '.' || ch == '-')) {
            if !in_num {
                out.push('N');
                in_num = true;
            }
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out
}

/// The report lines of stdout, numbers normalised, spacing collapsed, banner dropped.
pub fn report_shape(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.starts_with("pgbench (") && !l.starts_with("pgrig ("))
        .map(|l| {
            without_numbers(l)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

pub fn line_value<'a>(stdout: &'a str, prefix: &str) -> Option<&'a str> {
    stdout.lines().find_map(|l| l.strip_prefix(prefix))
}

/// Runs `pgrig bench ARGS` and pgbench with the same arguments; both must succeed and print the
/// same report lines apart from the figures. Returns both stderrs (ours, pgbench's).
pub fn assert_same_report_shape(db: &TestDb, args: &[&str]) -> (String, String) {
    let ours = pgrig_bench(db, args);
    assert_eq!(
        ours.code,
        Some(0),
        "pgrig {args:?}:\n{}\n{}",
        ours.stdout,
        ours.stderr
    );
    let theirs = pgbench(db, args);
    assert_eq!(theirs.code, Some(0), "pgbench {args:?}:\n{}", theirs.stderr);
    assert_eq!(
        report_shape(&ours.stdout),
        report_shape(&theirs.stdout),
        "args {args:?}\nours:\n{}\npgbench:\n{}",
        ours.stdout,
        theirs.stdout
    );
    (ours.stderr, theirs.stderr)
}

/// pgrig through a link named `pgbench` (so it prints exactly what pgbench prints), with the
/// database's environment; the link lives in `dir`.
pub fn pgbench_link(db: &TestDb, dir: &std::path::Path) -> Command {
    let link = dir.join("pgbench");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &link).expect("link pgbench");
    }
    db.command(link)
}

/// Runs the same arguments through pgrig (as `pgbench`) and the installed pgbench 15; returns
/// (ours, theirs). Panics when the oracle is missing: a differential test must not pass
/// without it.
pub fn both(db: &TestDb, dir: &std::path::Path, args: &[&str]) -> (CmdOutput, CmdOutput) {
    let mut c = pgbench_link(db, dir);
    c.args(args).current_dir(dir);
    let ours = run(c);
    let mut p = db.pgbench();
    p.args(args).current_dir(dir);
    (ours, run(p))
}

/// Both runs end with the same exit status, the same report lines (figures aside) and the same
/// stderr lines (order kept).
pub fn assert_same_run(
    db: &TestDb,
    dir: &std::path::Path,
    args: &[&str],
) -> (CmdOutput, CmdOutput) {
    let (ours, theirs) = both(db, dir, args);
    let ctx = format!(
        "args {args:?}\n--- pgrig stdout:\n{}--- pgrig stderr:\n{}--- pgbench stdout:\n{}--- pgbench stderr:\n{}",
        ours.stdout, ours.stderr, theirs.stdout, theirs.stderr
    );
    assert_eq!(ours.code, theirs.code, "exit status\n{ctx}");
    assert_eq!(
        report_shape(&ours.stdout),
        report_shape(&theirs.stdout),
        "report\n{ctx}"
    );
    assert_eq!(ours.stderr, theirs.stderr, "stderr\n{ctx}");
    (ours, theirs)
}

/// Starts `c` with its standard output and error piped (read by [`finish_within`]).
pub fn spawn_piped(mut c: Command) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().expect("start pgrig")
}

/// Ctrl-C: SIGINT to `child`.
pub fn interrupt(child: &Child) {
    // SAFETY: plain kill(2) on our own child.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(r, 0);
}

/// A finished child's output.
pub fn output_of(child: Child) -> CmdOutput {
    let out = child.wait_with_output().expect("output");
    CmdOutput {
        status: out.status,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Waits at most `limit` for `child`, killing it (and failing, with its output) if it hangs.
pub fn finish_within(mut child: Child, limit: Duration) -> CmdOutput {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = output_of(child);
            panic!(
                "pgrig did not finish within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                out.stdout, out.stderr
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    output_of(child)
}

/// Runs `program args` in `cwd` (standard output discarded) under GNU time, returning its exit
/// status, standard error and peak resident memory in MiB. (Measured by `time`, a small
/// process that forks the program: a child of the test process itself would report the test
/// process's own peak, which the kernel carries across `exec`.)
pub fn run_measured(
    program: &str,
    args: &[&str],
    cwd: &std::path::Path,
) -> (Option<i32>, String, i64) {
    let time = std::path::Path::new("/usr/bin/time");
    assert!(
        time.exists(),
        "GNU time (/usr/bin/time) measures memory here: apt-get install -y time"
    );
    let report = tempfile::NamedTempFile::new().expect("temp file");
    let out = Command::new(time)
        .args(["-f", "%M", "-o"])
        .arg(report.path())
        .arg(program)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .output()
        .expect("run /usr/bin/time");
    let kib: i64 = std::fs::read_to_string(report.path())
        .expect("time's report")
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("time's figure");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), err, kib / 1024)
}
