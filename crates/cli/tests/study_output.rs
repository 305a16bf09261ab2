//! Output of `pgrig study` and `pgrig results`: a closed pipe (`| head`, `| true`) on stdout or
//! stderr ends the output without a panic; a full device fails the command (the result was not
//! written); `results export -o FILE` writes a private (0600) file whatever the umask.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use pgrig_testkit::{run, TestDb};

fn cmd(db: &TestDb, dir: &Path, args: &[&str]) -> Command {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    c
}

/// Runs with stdout and stderr on pipes whose read ends are already closed; returns the status.
fn with_closed_pipes(mut c: Command) -> std::process::ExitStatus {
    let (r1, w1) = std::io::pipe().unwrap();
    let (r2, w2) = std::io::pipe().unwrap();
    drop((r1, r2));
    c.stdout(w1).stderr(w2).stdin(Stdio::null());
    let mut child = c.spawn().unwrap();
    drop(c);
    child.wait().unwrap()
}

#[test]
fn study_and_results_survive_a_closed_pipe_and_fail_on_a_full_device() {
    let db = pgrig_testkit::fresh_db("study_output");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        format!(
            "name = \"out\"\n[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n[workload]\ntransactions = 3\n\
             [collect]\nwait_events = false\n",
            db.url()
        ),
    )
    .unwrap();
    // a whole study with nobody reading: stored, exit 0, no panic (101)
    let status = with_closed_pipes(cmd(&db, dir.path(), &["study", "s.toml"]));
    assert_eq!(status.code(), Some(0), "{status:?}");
    for args in [
        &["study", "s.toml", "--dry-run"][..],
        &["results", "list"],
        &["results", "export"],
        &["results", "show", "1"],
    ] {
        let status = with_closed_pipes(cmd(&db, dir.path(), args));
        assert_eq!(status.code(), Some(0), "{args:?}: {status:?}");
    }
    // a full device: the output was not written, so the command fails
    for args in [
        &["results", "export"][..],
        &["study", "s.toml", "--dry-run"],
    ] {
        let mut c = cmd(&db, dir.path(), args);
        c.stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        );
        let out = run(c);
        assert_eq!(out.code, Some(1), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("could not write to standard output: No space left on device"),
            "{}",
            out.stderr
        );
    }
    // an export file is private even with a permissive umask
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!(
            "umask 000; exec {} results export --format csv -o runs.csv",
            env!("CARGO_BIN_EXE_pgrig")
        ))
        .current_dir(dir.path());
    let out = run(c);
    assert!(out.success(), "{}", out.stderr);
    let meta = std::fs::metadata(dir.path().join("runs.csv")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(meta.len() > 0);
}
