//! Running the postmaster: spawning it (as the server account, in its own process group, with
//! output to the cluster's log), waiting until `postmaster.pid` says "ready", stopping it, single-
//! user bootstrap runs, and process inspection via /proc.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::binaries::PgBinaries;
use crate::cluster_dir::ClusterDir;
use crate::error::{file_tail, read_private, tail_lines, LabError};
use crate::identity::{ProcessId, Stat};
use crate::runas::{die_with_parent, RunAs};
use crate::watchdog::Watchdog;

const POLL: Duration = Duration::from_millis(5);

/// Why a start attempt failed: the port was taken (worth retrying elsewhere) or anything else.
pub(crate) enum StartError {
    PortInUse(LabError),
    Other(LabError),
}

/// Spawns `postgres -D <data>`, tells the watchdog (if any) which process it is, and waits until
/// it is ready to accept connections.
pub(crate) fn start_postmaster(
    bins: &PgBinaries,
    runas: &RunAs,
    dir: &ClusterDir,
    timeout: Duration,
    watchdog: Option<&mut Watchdog>,
) -> Result<Child, StartError> {
    let log_start = std::fs::metadata(&dir.log).map(|m| m.len()).unwrap_or(0);
    // The log's directory belongs to the server's account: never follow a link planted there.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&dir.log)
        .map_err(|e| StartError::Other(LabError::io("opening server log", &dir.log, e)))?;
    let log2 = log
        .try_clone()
        .map_err(|e| StartError::Other(LabError::io("opening server log", &dir.log, e)))?;
    let mut cmd = Command::new(bins.tool("postgres"));
    cmd.arg("-D")
        .arg(&dir.data)
        .current_dir(&dir.root)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    runas.apply(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        StartError::Other(LabError::Command {
            what: "starting postgres".into(),
            command: format!("{cmd:?}"),
            status: format!("could not start: {e}"),
            output: String::new(),
        })
    })?;
    if let (Some(w), Some(id)) = (watchdog, ProcessId::of(child.id())) {
        w.watch(id);
    }
    let deadline = Instant::now() + timeout;
    let pid_file = dir.data.join("postmaster.pid");
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let tail = new_log_tail(&dir.log, log_start);
            let err = LabError::StartFailed {
                reason: format!("postgres exited ({status})"),
                log: Some(dir.log.clone()),
                log_tail: tail.clone(),
            };
            let port_taken = tail.contains("Address already in use")
                || tail.contains("could not bind")
                || tail.contains("could not create any TCP/IP sockets");
            return Err(if port_taken {
                StartError::PortInUse(err)
            } else {
                StartError::Other(err)
            });
        }
        if is_ready(&pid_file, child.id()) {
            return Ok(child);
        }
        if Instant::now() > deadline {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGQUIT);
            let _ = wait_child(&mut child, Duration::from_secs(10));
            return Err(StartError::Other(LabError::StartFailed {
                reason: format!("not ready after {timeout:?}"),
                log: Some(dir.log.clone()),
                log_tail: new_log_tail(&dir.log, log_start),
            }));
        }
        std::thread::sleep(POLL);
    }
}

fn new_log_tail(log: &Path, from: u64) -> String {
    match read_private(log) {
        Ok(bytes) => {
            let start = (from as usize).min(bytes.len());
            tail_lines(&String::from_utf8_lossy(&bytes[start..]), 20)
        }
        Err(_) => file_tail(log, 20),
    }
}

/// True when `postmaster.pid` names `pid` and has status "ready" (line 8).
fn is_ready(pid_file: &Path, pid: u32) -> bool {
    let Ok(text) = read_private(pid_file).map(|b| String::from_utf8_lossy(&b).into_owned()) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    lines.len() >= 8 && lines[0].trim() == pid.to_string() && lines[7].trim() == "ready"
}

/// How to shut down: `Immediate` = SIGQUIT (no checkpoint), `Fast` = SIGINT (clean).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopMode {
    Immediate,
    Fast,
}

impl StopMode {
    fn signal(self) -> Signal {
        match self {
            StopMode::Immediate => Signal::SIGQUIT,
            StopMode::Fast => Signal::SIGINT,
        }
    }
}

/// Stops our own postmaster child and reaps it; SIGKILL after `timeout`.
pub(crate) fn stop_child(child: &mut Child, mode: StopMode, timeout: Duration) {
    let pid = Pid::from_raw(child.id() as i32);
    if let Ok(None) = child.try_wait() {
        let _ = kill(pid, mode.signal());
        if !wait_child(child, timeout) {
            let _ = kill(pid, Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

fn wait_child(child: &mut Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() > deadline => return false,
            Ok(None) => std::thread::sleep(POLL),
        }
    }
}

/// Stops a postmaster that is not our child (detached servers), after checking it is the one
/// recorded (see [`ProcessId::is_postmaster_of`]); true if it is gone. A process that is not
/// the recorded postmaster is never signalled: the recorded one is gone already.
pub(crate) fn stop_pid(
    id: ProcessId,
    uid: u32,
    data: &Path,
    mode: StopMode,
    timeout: Duration,
) -> bool {
    let ours = || id.is_postmaster_of(uid, data);
    if !ours() {
        return true;
    }
    let p = Pid::from_raw(id.pid as i32);
    let _ = kill(p, mode.signal());
    let deadline = Instant::now() + timeout;
    while ours() {
        if Instant::now() > deadline {
            let _ = kill(p, Signal::SIGKILL);
            std::thread::sleep(Duration::from_millis(100));
            return !ours();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// `postmaster` followed by its live child processes (backends and auxiliary processes).
pub(crate) fn process_tree(postmaster: u32) -> Vec<u32> {
    let mut pids = vec![postmaster];
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(st) = Stat::read(pid) {
                if st.ppid == postmaster && st.state != 'Z' {
                    pids.push(pid);
                }
            }
        }
    }
    pids
}

/// Runs statements in single-user mode (before the first start), stopping at the first error.
pub(crate) fn single_user(
    bins: &PgBinaries,
    runas: &RunAs,
    dir: &ClusterDir,
    statements: &[String],
) -> Result<(), LabError> {
    let mut cmd = Command::new(bins.tool("postgres"));
    cmd.args(["--single", "-j", "-c", "exit_on_error=on", "-D"])
        .arg(&dir.data)
        .arg("postgres")
        .current_dir(&dir.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    runas.apply(&mut cmd);
    die_with_parent(&mut cmd);
    let shown = format!("{cmd:?}");
    let fail = |status: String, output: String| LabError::Command {
        what: "bootstrap SQL in single-user mode".into(),
        command: shown.clone(),
        status,
        output,
    };
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(format!("could not start: {e}"), String::new()))?;
    let mut input = String::new();
    for s in statements {
        input.push_str(s.trim().trim_end_matches(';'));
        input.push_str(";\n\n");
    }
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| fail(format!("wait failed: {e}"), String::new()))?;
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() || text.contains("ERROR:") || text.contains("FATAL:") {
        return Err(fail(out.status.to_string(), tail_lines(&text, 20)));
    }
    Ok(())
}
