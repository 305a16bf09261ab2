//! No postgres is ever left behind: when the process owning a cluster dies without running
//! destructors (SIGKILL, exit()), the watchdog stops the server and removes its directory.
//!
//! The owner is the `lab-test-owner` helper binary (`testbin/lab_test_owner.rs`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgrig_lab::{Server, ServerOptions};

/// The caller waits for the returned child.
#[allow(clippy::zombie_processes)]
fn spawn_owner(mode: &str) -> (std::process::Child, u32, PathBuf) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lab-test-owner"))
        .args(["own", mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("helper exited without reporting a cluster");
        }
        let mut parts = line.split_whitespace();
        if let (Some("OWNER"), Some(pid), Some(root)) = (parts.next(), parts.next(), parts.next()) {
            if let Ok(pid) = pid.parse() {
                return (child, pid, PathBuf::from(root));
            }
        }
    }
}

fn is_postgres(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains("(postgres)") && !s.contains(") Z"))
        .unwrap_or(false)
}

fn assert_cleaned_up(pid: u32, root: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while (is_postgres(pid) || root.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!is_postgres(pid), "postmaster {pid} still running");
    assert!(!root.exists(), "{} still exists", root.display());
}

#[test]
fn cluster_is_removed_when_owner_is_killed() {
    let (mut child, pid, root) = spawn_owner("sleep");
    assert!(is_postgres(pid));
    assert!(root.exists());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_cleaned_up(pid, &root);
}

#[test]
fn cluster_is_removed_when_owner_is_interrupted() {
    let (mut child, pid, root) = spawn_owner("sleep");
    let owner = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(owner, nix::sys::signal::Signal::SIGINT).unwrap();
    child.wait().unwrap();
    assert_cleaned_up(pid, &root);
}

#[test]
fn cluster_is_removed_when_owner_exits_without_destructors() {
    let (mut child, pid, root) = spawn_owner("exit");
    child.wait().unwrap();
    assert_cleaned_up(pid, &root);
}

#[test]
fn normal_drop_dismisses_the_watchdog() {
    let server = Server::start(ServerOptions::default()).unwrap();
    let watchdog = server.watchdog_pid().unwrap();
    drop(server);
    let alive = std::fs::read_to_string(format!("/proc/{watchdog}/stat"))
        .map(|s| !s.contains(") Z"))
        .unwrap_or(false);
    assert!(!alive, "watchdog {watchdog} still running after drop");
}
