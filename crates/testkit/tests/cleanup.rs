//! The shared cluster is a static that is never dropped; it must still vanish when the test
//! binary exits. The "test binary" here is this one, re-executed to run `binary_helper`.

use std::process::Command;
use std::time::{Duration, Instant};

const HELPER_ENV: &str = "PGRIG_TESTKIT_CLEANUP_HELPER";

/// Not a test by itself: the process `shared_cluster_is_removed_after_the_test_binary_exits`
/// starts; uses the shared cluster, reports it, and lets the process exit.
#[test]
#[ignore = "a helper process of shared_cluster_is_removed_after_the_test_binary_exits"]
fn binary_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    let db = pgrig_testkit::fresh_db("helper");
    std::mem::forget(db);
    let server = pgrig_testkit::cluster();
    println!(
        "\nCLUSTER {} {}",
        server.postmaster_pid().unwrap(),
        server.root_dir().display()
    );
}

#[test]
fn shared_cluster_is_removed_after_the_test_binary_exits() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "binary_helper",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("CLUSTER "))
        .expect("helper reported");
    let mut parts = line.split_whitespace().skip(1);
    let pid: u32 = parts.next().unwrap().parse().unwrap();
    let root = std::path::PathBuf::from(parts.next().unwrap());
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains("(postgres)") && !s.contains(") Z"))
            .unwrap_or(false)
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while (alive() || root.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "postmaster {pid} outlived its test binary");
    assert!(
        !root.exists(),
        "{} outlived its test binary",
        root.display()
    );
}
