//! A script's limits (issue 36, item 6), against the real sysbench 1.0.20 where it has a
//! behaviour: a script that allocates without bound gets LuaJIT's `not enough memory` as a
//! `FATAL:` line, status 1, and its run document (never an abort); a `thread_init()` that never
//! returns ends after sysbench's 30 s with its FATAL line and status 2; a script body or
//! `init()` that never returns (sysbench waits for ever) ends at the `--time` limit.

use crate::{common, sysbench_common};

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pgrig_testkit::{fresh_db, CmdOutput, TestDb};
use sysbench_common::{command, link, normalise, oracle};

/// `program ARGS` against `db` with its address space limited to `bytes` (as `ulimit -v`).
fn limited(program: &Path, db: &TestDb, args: &[&str], bytes: u64) -> Command {
    let mut c = command(program, db, args);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

fn script(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const HOG: &str = r#"
function event()
  local t, i = {}, 0
  while true do i = i + 1; t[i] = string.rep("x", 1000000) .. i end
end
"#;

#[test]
fn a_script_that_allocates_without_bound_fails_as_in_sysbench() {
    let db = fresh_db("sb_limits_memory");
    let dir = tempfile::tempdir().unwrap();
    let hog = script(dir.path(), "hog.lua", HOG);
    let four_gb = 4_000_000_000;
    let args = [hog.as_str(), "--threads=2", "--time=30", "run"];
    let theirs = pgrig_testkit::run(limited(&oracle(), &db, &args, four_gb));
    let json = dir.path().join("hog.json");
    let path = json.display().to_string();
    let with_json = [&args[..3], &["--json", &path, "run"]].concat();
    let ours = pgrig_testkit::run(limited(link(), &db, &with_json, four_gb));
    assert_eq!(theirs.code, Some(1), "sysbench: {}", theirs.stdout);
    assert_eq!(ours.code, Some(1), "pgrig: {}{}", ours.stdout, ours.stderr);
    assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
    assert!(
        ours.stdout
            .contains("FATAL: `thread_run' function failed: not enough memory"),
        "{}",
        ours.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("run document")).unwrap();
    assert_eq!(doc["aborted_clients"], 1);
}

#[test]
fn a_thread_init_that_never_returns_ends_after_30_seconds_as_in_sysbench() {
    let db = fresh_db("sb_limits_thread_init");
    let dir = tempfile::tempdir().unwrap();
    let text = "function thread_init()\n  while true do end\nend\nfunction event() end\n";
    let spin = script(dir.path(), "spin_init.lua", text);
    let args = [spin.as_str(), "--threads=2", "--time=1", "run"];
    // both at once: each waits half a minute
    let t = Instant::now();
    let theirs = common::spawn_piped(command(&oracle(), &db, &args));
    let ours = common::spawn_piped(command(link(), &db, &args));
    let theirs = common::finish_within(theirs, Duration::from_secs(90));
    let ours: CmdOutput = common::finish_within(ours, Duration::from_secs(90));
    let took = t.elapsed();
    assert_eq!(theirs.code, Some(2), "sysbench: {}", theirs.stdout);
    assert_eq!(ours.code, Some(2), "pgrig: {}{}", ours.stdout, ours.stderr);
    assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
    assert!(ours
        .stdout
        .contains("FATAL: Worker threads failed to initialize within 30 seconds!"));
    assert!(took >= Duration::from_secs(29), "{took:?}");
}

#[test]
fn a_script_body_or_init_that_never_returns_ends_at_the_time_limit() {
    let db = fresh_db("sb_limits_body");
    let dir = tempfile::tempdir().unwrap();
    for (name, text, what) in [
        (
            "body.lua",
            "while true do end\nfunction event() end\n",
            "body",
        ),
        (
            "init.lua",
            "function init()\n  while true do end\nend\nfunction event() end\n",
            "init()",
        ),
    ] {
        let path = script(dir.path(), name, text);
        let t = Instant::now();
        let child = common::spawn_piped(command(
            link(),
            &db,
            &[&path, "--threads=2", "--time=2", "run"],
        ));
        let out = common::finish_within(child, Duration::from_secs(30));
        assert_eq!(out.code, Some(1), "{name}: {}", out.stdout);
        let line =
            format!("FATAL: the script's {what} has not returned within the --time limit (2 s)");
        assert!(out.stdout.contains(&line), "{name}: {}", out.stdout);
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    }
}
