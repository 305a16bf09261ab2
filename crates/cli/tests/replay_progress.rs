//! `pgrig replay`'s progress bar: drawn on standard error when it is a terminal (run under
//! `script`, which gives the command a pseudo-terminal), with the items replayed of the total and
//! the lag; absent when standard error is not a terminal, and never through the `pgreplay` link.

/// A session whose first statement sleeps a second, so the bar is drawn while it runs.
fn log(db: &pgrig_testkit::TestDb) -> String {
    let user = db.server().user().to_string();
    let line = |t: &str, msg: &str| {
        format!(
            "2010-12-31 {t} UTC|{user}|{}|4d1db7a8.4236|LOG:  {msg}\n",
            db.name
        )
    };
    [
        line("10:00:00.000", "connection authorized: user=x database=y"),
        line("10:00:00.100", "statement: SELECT pg_sleep(1)"),
        line("10:00:00.200", "statement: SELECT 1"),
        line("10:00:00.300", "disconnection: session time: 0:00:00.300"),
    ]
    .concat()
}

#[test]
fn the_progress_bar_is_drawn_on_a_terminal_only() {
    let db = pgrig_testkit::fresh_db("replay_progress");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.log"), log(&db)).unwrap();
    let Ok(script) = which("script") else {
        pgrig_testkit::skip(
            "`script` (util-linux) is not installed: no pseudo-terminal to test on",
        );
        return;
    };
    let pgrig = env!("CARGO_BIN_EXE_pgrig");
    // on a terminal: the bar, with the total of 4 items (connect, 2 statements, disconnect)
    let mut cmd = db.command(&script);
    cmd.args(["-qefc", &format!("{pgrig} replay a.log"), "/dev/null"])
        .current_dir(dir.path());
    let out = cmd.output().unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("/4 items, lag "), "{tty}");
    assert!(tty.contains("Replay statistics"), "{tty}");
    // not a terminal: no bar
    let out = db
        .command(pgrig)
        .args(["replay", "a.log"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("items, lag"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("items, lag"));
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
