//! `pgrig replay` and pgrig reached through a link named `pgreplay`: bad command lines and bad
//! input get pgreplay 1.2.0's messages and exit statuses (differential against Debian's
//! pgreplay), and `-f` writes pgreplay's replay file for a log with its warnings.

use std::path::{Path, PathBuf};
use std::process::Command;

fn oracle() -> PathBuf {
    let p = PathBuf::from(std::env::var("PGRIG_PGREPLAY").unwrap_or("/usr/bin/pgreplay".into()));
    assert!(
        p.exists(),
        "pgreplay 1.2.0 (the oracle of these tests) is not installed at {}: apt-get install -y pgreplay",
        p.display()
    );
    p
}

/// pgrig reached as `pgreplay`.
fn linked(dir: &Path) -> PathBuf {
    let link = dir.join("pgreplay");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &link).unwrap();
    }
    link
}

fn run(program: &Path, args: &[&str], cwd: &Path) -> (Option<i32>, String, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_command_lines_get_pgreplays_first_message_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let ours = linked(dir.path());
    let cases: &[&[&str]] = &[
        &["-x"],
        &["-s", "0"],
        &["-s", "fast"],
        &["-p", "70000"],
        &["-p", "port"],
        &["-d", "5"],
        &["-d", "x"],
        &["-f", "-r"],
        &["-f", "-h", "db.example", "log"],
        &["-r", "-c", "file"],
        &["-o", "out.rf", "log"],
        &["one", "two"],
        &["-b", "2010-12-31"],
        &["-e", "2010-12-31 10:59:52x241"],
        &["-s"],
    ];
    for args in cases {
        let (code, _, err) = run(&ours, args, dir.path());
        let (ocode, _, oerr) = run(&oracle(), args, dir.path());
        assert_eq!(
            code, ocode,
            "{args:?}: exit status (pgreplay said {oerr:?})"
        );
        assert_eq!(
            err.lines().next(),
            oerr.lines().next(),
            "{args:?}: first message"
        );
        assert!(
            err.contains("Usage: pgreplay"),
            "{args:?}: no help after the error"
        );
    }
}

#[test]
fn unreadable_and_malformed_inputs_get_pgreplays_messages() {
    let dir = tempfile::tempdir().unwrap();
    let ours = linked(dir.path());
    std::fs::write(
        dir.path().join("nopipes.log"),
        "2010-12-31 10:59:52.241 UTC LOG:  hello\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("badtime.log"),
        "2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8.4236|LOG:  statement: select 1\n\
         2010/12-31 10:59:53.241 UTC|u|d|4d1db7a8.4236|LOG:  statement: select 2\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("badsession.log"),
        "2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8x4236|LOG:  statement: select 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("unclosed.log"),
        "2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8.4236|LOG:  statement: select 'oops\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.csv"),
        "2010-12-31 10:59:52.241 UTC,\"u\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("short.rf"), [0u8, 1, 2]).unwrap();
    let cases: &[&[&str]] = &[
        &["-f", "-o", "x.rf", "missing.log"],
        &["-r", "missing.rf"],
        &["-f", "-o", "x.rf", "nopipes.log"],
        &["-f", "-o", "x.rf", "badtime.log"],
        &["-f", "-o", "x.rf", "badsession.log"],
        &["-f", "-o", "x.rf", "unclosed.log"],
        &["-f", "-c", "-o", "x.rf", "bad.csv"],
        &["-r", "short.rf"],
    ];
    for args in cases {
        let (code, out, err) = run(&ours, args, dir.path());
        let (ocode, oout, oerr) = run(&oracle(), args, dir.path());
        assert_eq!(
            code, ocode,
            "{args:?}: exit status (pgreplay said {oerr:?})"
        );
        assert_eq!(code, Some(1), "{args:?}");
        if args.iter().any(|a| a.starts_with("missing")) {
            // pgreplay then also closes the file it never opened ("Error closing input
            // file:: Bad file descriptor"); pgrig does not repeat that slip
            assert_eq!(err.lines().next(), oerr.lines().next(), "{args:?}: message");
        } else {
            assert_eq!(err, oerr, "{args:?}: messages");
        }
        assert_eq!(out, oout, "{args:?}: standard output");
    }
}

#[test]
fn pgrig_replay_writes_pgreplays_replay_file_and_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let log = "2010-12-31 10:59:52.235 UTC|postgres|db|4d1db7a8.4236|LOG:  connection authorized: user=postgres database=db\n\
2010-12-31 10:59:52.241 UTC|postgres|db|4d1db7a8.4236|LOG:  statement: set client_encoding to 'UTF8'; select 1\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|LOG:  execute s1: select $1::int + $2\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|DETAIL:  parameters: $1 = '1', $2 = NULL\n\
2010-12-31 10:59:52.400 UTC|postgres|db|4d1db7a8.4236|LOG:  execute s1: select $1::int + $2\n\
2010-12-31 10:59:52.400 UTC|postgres|db|4d1db7a8.4236|DETAIL:  parameters: $1 = '2', $2 = '3'\n\
2010-12-31 10:59:52.500 UTC|postgres|db|4d1db7a8.4236|LOG:  statement: copy t from stdin\n";
    std::fs::write(dir.path().join("a.log"), log).unwrap();
    let pgrig = Path::new(env!("CARGO_BIN_EXE_pgrig"));
    let (code, out, err) = run(
        pgrig,
        &["replay", "-f", "-o", "ours.rf", "a.log"],
        dir.path(),
    );
    let (ocode, oout, oerr) = run(&oracle(), &["-f", "-o", "theirs.rf", "a.log"], dir.path());
    assert_eq!((code, ocode), (Some(0), Some(0)), "{err}");
    assert_eq!(out, oout);
    assert!(out.contains("Named prepared SQL statements executions processed: 2"));
    assert_eq!(err, oerr);
    assert!(err.contains("Warning: COPY statement ignored in line 7"));
    let ours = std::fs::read(dir.path().join("ours.rf")).unwrap();
    assert_eq!(ours, std::fs::read(dir.path().join("theirs.rf")).unwrap());
    // the same file replayed back with -r -d 1 prints the same trace as pgreplay's
    let ours_trace = run(
        pgrig,
        &["replay", "-r", "-d", "1", "-h", "/nonexistent", "ours.rf"],
        dir.path(),
    );
    let theirs_trace = run(
        &oracle(),
        &["-r", "-d", "1", "-h", "/nonexistent", "ours.rf"],
        dir.path(),
    );
    let first_item = |s: &str| {
        s.split("---------------------------\n")
            .nth(1)
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(first_item(&ours_trace.2), first_item(&theirs_trace.2));
    assert_eq!(
        ours_trace.0,
        Some(1),
        "no server at /nonexistent: {}",
        ours_trace.2
    );
}

#[test]
fn ctrl_c_stops_a_replay_with_the_statistics_of_what_ran_and_status_130() {
    let db = pgrig_testkit::fresh_db("replay_ctrl_c");
    let dir = tempfile::tempdir().unwrap();
    let user = db.server().user().to_string();
    let line = |t: &str, msg: &str| {
        format!(
            "2010-12-31 {t} UTC|{user}|{}|4d1db7a8.4236|LOG:  {msg}\n",
            db.name
        )
    };
    let log = [
        line("10:00:00.000", "connection authorized: user=x database=y"),
        line("10:00:00.100", "statement: SELECT pg_sleep(60)"),
        line("10:01:30.000", "statement: SELECT 1"),
    ]
    .concat();
    std::fs::write(dir.path().join("a.log"), log).unwrap();
    let mut cmd = db.command(env!("CARGO_BIN_EXE_pgrig"));
    cmd.args(["replay", "a.log"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let started = std::time::Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("Replay interrupted"), "{stderr}");
    assert!(stdout.contains("Replay statistics"), "{stdout}");
    // the connect and the pg_sleep were sent; SELECT 1 was not yet due
    assert!(stdout.contains("Calls to the server: 2\n"), "{stdout}");
}

#[test]
fn a_jsonlog_is_recognised_and_parses_like_the_same_stderr_log_does_in_pgreplay() {
    let dir = tempfile::tempdir().unwrap();
    let stderr_log = "2010-12-31 10:59:52.235 UTC|postgres|db|4d1db7a8.4236|LOG:  connection authorized: user=postgres database=db\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|LOG:  execute <unnamed>: select $1\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|DETAIL:  parameters: $1 = 'a''b'\n\
2010-12-31 10:59:52.400 UTC|postgres|db|4d1db7a8.4236|LOG:  disconnection: session time: 0:00:00.165 user=postgres database=db host=[local]\n";
    let json_log = r#"{"timestamp":"2010-12-31 10:59:52.235 UTC","user":"postgres","dbname":"db","pid":1,"session_id":"4d1db7a8.4236","error_severity":"LOG","message":"connection authorized: user=postgres database=db"}
{"timestamp":"2010-12-31 10:59:52.300 UTC","user":"postgres","dbname":"db","pid":1,"session_id":"4d1db7a8.4236","error_severity":"LOG","message":"execute <unnamed>: select $1","detail":"parameters: $1 = 'a''b'"}
{"timestamp":"2010-12-31 10:59:52.400 UTC","user":"postgres","dbname":"db","pid":1,"session_id":"4d1db7a8.4236","error_severity":"LOG","message":"disconnection: session time: 0:00:00.165 user=postgres database=db host=[local]"}
"#;
    std::fs::write(dir.path().join("a.log"), stderr_log).unwrap();
    std::fs::write(dir.path().join("a.json"), json_log).unwrap();
    let pgrig = Path::new(env!("CARGO_BIN_EXE_pgrig"));
    let (code, _, err) = run(
        pgrig,
        &["replay", "-f", "-o", "ours.rf", "a.json"],
        dir.path(),
    );
    assert_eq!(code, Some(0), "{err}");
    let (ocode, _, oerr) = run(&oracle(), &["-f", "-o", "theirs.rf", "a.log"], dir.path());
    assert_eq!(ocode, Some(0), "{oerr}");
    let ours = std::fs::read(dir.path().join("ours.rf")).unwrap();
    assert_eq!(ours, std::fs::read(dir.path().join("theirs.rf")).unwrap());
    assert!(
        ours.windows(3).any(|w| w == b"a'b"),
        "the bind value is missing"
    );
}

#[test]
fn pgrig_replay_reads_several_files_as_one_rotated_log() {
    let dir = tempfile::tempdir().unwrap();
    let part1 = "2010-12-31 10:59:52.235 UTC|postgres|db|4d1db7a8.4236|LOG:  connection authorized: user=postgres database=db\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|LOG:  execute s1: select $1\n\
2010-12-31 10:59:52.300 UTC|postgres|db|4d1db7a8.4236|DETAIL:  parameters: $1 = '1'\n";
    let part2 =
        "2010-12-31 10:59:53.300 UTC|postgres|db|4d1db7a8.4236|LOG:  execute s1: select $1\n\
2010-12-31 10:59:53.300 UTC|postgres|db|4d1db7a8.4236|DETAIL:  parameters: $1 = '2'\n\
2010-12-31 10:59:53.400 UTC|postgres|db|4d1db7a8.4236|LOG:  statement: select 3\n";
    std::fs::write(dir.path().join("p1.log"), part1).unwrap();
    std::fs::write(dir.path().join("p2.log"), part2).unwrap();
    std::fs::write(dir.path().join("all.log"), format!("{part1}{part2}")).unwrap();
    let pgrig = Path::new(env!("CARGO_BIN_EXE_pgrig"));
    let (code, out, err) = run(
        pgrig,
        &["replay", "-f", "-o", "ours.rf", "p1.log", "p2.log"],
        dir.path(),
    );
    assert_eq!(code, Some(0), "{err}");
    let (ocode, oout, _) = run(&oracle(), &["-f", "-o", "theirs.rf", "all.log"], dir.path());
    assert_eq!(ocode, Some(0));
    assert_eq!(out, oout);
    // one prepare: the session and its prepared statement continue into the second file
    assert!(
        out.contains("Different named prepared SQL statements processed: 1"),
        "{out}"
    );
    let ours = std::fs::read(dir.path().join("ours.rf")).unwrap();
    assert_eq!(ours, std::fs::read(dir.path().join("theirs.rf")).unwrap());
    // a parse error names the file it is in; the pgreplay link still takes one file only
    std::fs::write(dir.path().join("bad.log"), "no prefix here\n").unwrap();
    let (code, _, err) = run(
        pgrig,
        &["replay", "-f", "-o", "x.rf", "p1.log", "bad.log"],
        dir.path(),
    );
    assert_eq!(code, Some(1));
    assert!(err.starts_with("bad.log: Error parsing line 1:"), "{err}");
    let (code, _, err) = run(&linked(dir.path()), &["-f", "p1.log", "p2.log"], dir.path());
    assert_eq!(code, Some(1));
    assert!(err.starts_with("More than one argument given"), "{err}");
}

fn run_measured(args: &[&str], cwd: &Path) -> (Option<i32>, String, i64) {
    crate::common::run_measured(env!("CARGO_BIN_EXE_pgrig"), args, cwd)
}

/// A log entry is at most 64 MiB: `/dev/zero` as the log (which aborted with SIGABRT) and a
/// 70 MiB line (about twice its size in memory before) are refused naming the file and the
/// line the entry starts on, within a bounded memory.
#[test]
fn an_endless_or_overlong_log_line_is_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, mib) = run_measured(&["replay", "-f", "-o", "x.rf", "/dev/zero"], dir.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("/dev/zero: Error reading line 1: a log entry longer than 64 MiB"),
        "{err}"
    );
    assert!(mib < 400, "peak memory {mib} MiB");

    let mut log = b"2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8.4236|LOG:  statement: select 1\n\
2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8.4236|LOG:  statement: select '"
        .to_vec();
    log.resize(log.len() + (70 << 20), b'x');
    log.extend_from_slice(b"'\n");
    std::fs::write(dir.path().join("long.log"), &log).unwrap();
    drop(log);
    let (code, err, mib) = run_measured(&["replay", "-f", "-o", "x.rf", "long.log"], dir.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("long.log: Error reading line 2: a log entry longer than 64 MiB"),
        "{err}"
    );
    assert!(mib < 400, "peak memory {mib} MiB");
}
