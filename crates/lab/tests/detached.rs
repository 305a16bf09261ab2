//! Detached servers (`pgrig server start|stop|status`): they outlive the starting process and
//! are found again through the state directory.

use std::process::Command;

use pgrig_lab::{start_detached, status, stop, ServerOptions};

fn state_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-lab-state-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn detached_server_survives_its_starter_and_stop_removes_it() {
    let dir = state_dir("survive");
    // The starter is the `lab-test-owner` helper binary (`testbin/lab_test_owner.rs`).
    let ok = Command::new(env!("CARGO_BIN_EXE_lab-test-owner"))
        .arg("detach")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    std::thread::sleep(std::time::Duration::from_millis(300)); // a watchdog would act by now
    let st = status(&dir).unwrap().expect("state recorded");
    assert!(st.running, "server died with its starter");
    let out = Command::new("psql")
        .args([
            "-X",
            "-At",
            "-d",
            &st.info.conninfo("postgres"),
            "-c",
            "SELECT 1",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");

    let stopped = stop(&dir).unwrap().expect("something to stop");
    assert_eq!(stopped.port, st.info.port);
    assert!(!st.info.root.exists());
    assert!(status(&dir).unwrap().is_none());
    assert!(stop(&dir).unwrap().is_none(), "second stop finds nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn starting_twice_is_refused_while_the_first_runs() {
    let dir = state_dir("twice");
    let info = start_detached(&dir, ServerOptions::default()).unwrap();
    let err = start_detached(&dir, ServerOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("already running"), "{err}");
    assert_eq!(stop(&dir).unwrap().unwrap().port, info.port);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stale_state_is_replaced_by_a_new_start() {
    let dir = state_dir("stale");
    let info = start_detached(&dir, ServerOptions::default()).unwrap();
    // Kill the server behind the state file's back.
    let pid = info.pid.unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!status(&dir).unwrap().unwrap().running);
    let again = start_detached(&dir, ServerOptions::default()).unwrap();
    assert!(!info.root.exists() || info.root != again.root);
    stop(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
