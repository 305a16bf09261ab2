//! One `perf record -g` session for a set of processes. perf samples every CPU (`-a`: per-task
//! counters inherited into each new backend cost a third of a context-switch-heavy server's
//! throughput, CPU-wide sampling a few per cent); the samples kept are those of the processes
//! named and of every process they fork during the recording (perf's task events, see
//! `fold::keep_tree`), so a postmaster's later backends and parallel workers are included. perf
//! starts with its events disabled; [`Recording::enable`] turns sampling on through perf's
//! control FIFO when the measured window starts, and perf's acknowledgement is the moment
//! sampling began.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::ProfileError;
use crate::Profile;

/// Sampling frequency (Hz): off the timer tick, so samples do not beat with periodic work.
const FREQUENCY: &str = "999";

/// The perf to run: `PGRIG_PERF` if set, else `perf` on PATH.
pub fn perf_binary() -> PathBuf {
    std::env::var_os("PGRIG_PERF")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("perf"))
}

/// A running `perf record`; [`Recording::finish`] stops it and folds its samples.
pub struct Recording {
    what: String,
    perf: PathBuf,
    child: Child,
    /// The processes whose samples are kept
    roots: Vec<u32>,
    /// Their children's too (the server's backends; not pgrig's own perf processes)
    children: bool,
    dir: tempfile::TempDir,
    /// perf's control and acknowledgement FIFOs
    ctl: File,
    ack: File,
    /// When sampling was enabled (`None`: not yet)
    started: Option<Instant>,
    /// Set by [`Recording::stop`]: perf's exit status and the seconds it sampled
    stopped: Option<(std::process::ExitStatus, f64)>,
}

impl Recording {
    /// Starts perf for the processes `pids` (with `children`, also what they fork from now on),
    /// sampling not yet enabled; `what` names them in messages ("the server's processes").
    /// Returns once perf runs, so a refusal is known before anything is measured.
    pub fn start(what: &str, pids: &[u32], children: bool) -> Result<Recording, ProfileError> {
        if pids.is_empty() {
            return Err(ProfileError::Target(format!("{what}: no processes")));
        }
        let dir = tempfile::Builder::new()
            .prefix("pgrig-profile-")
            .tempdir()
            .map_err(|e| ProfileError::io(&std::env::temp_dir(), e))?;
        let (ctl, ack) = (dir.path().join("ctl"), dir.path().join("ack"));
        for f in [&ctl, &ack] {
            nix::unistd::mkfifo(
                f,
                nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
            )
            .map_err(|e| ProfileError::io(f, e.into()))?;
        }
        // Read-write opens of a FIFO do not wait for the other end.
        let open = |p: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| ProfileError::io(p, e))
        };
        let (ctl_f, ack_f) = (open(&ctl)?, open(&ack)?);
        let err = File::create(dir.path().join("perf.err"))
            .map_err(|e| ProfileError::io(dir.path(), e))?;
        let perf = perf_binary();
        let child = Command::new(&perf)
            .args(["record", "-g", "-F", FREQUENCY, "--delay=-1"])
            .arg(format!(
                "--control=fifo:{},{}",
                ctl.display(),
                ack.display()
            ))
            .arg("-o")
            .arg(dir.path().join("perf.data"))
            .arg("-a")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| spawn_error(&perf, e))?;
        let mut rec = Recording {
            what: what.to_string(),
            perf,
            child,
            roots: pids.to_vec(),
            children,
            dir,
            ctl: ctl_f,
            ack: ack_f,
            started: None,
            stopped: None,
        };
        rec.command("ping")?;
        Ok(rec)
    }

    /// Turns sampling on; returns once perf has acknowledged it.
    pub fn enable(&mut self) -> Result<(), ProfileError> {
        self.command("enable")?;
        self.started = Some(Instant::now());
        Ok(())
    }

    /// Sends a control command and waits for perf's `ack`; a perf that exits instead is
    /// explained.
    fn command(&mut self, cmd: &str) -> Result<(), ProfileError> {
        use std::os::fd::AsFd;
        if let Err(e) = self.ctl.write_all(format!("{cmd}\n").as_bytes()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return Err(self.failure(&format!("control FIFO: {e}")));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut fds = [nix::poll::PollFd::new(
                self.ack.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            let ready =
                nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(100u16)).unwrap_or(0);
            if ready > 0 {
                let mut buf = [0u8; 4];
                let _ = self.ack.read_exact(&mut buf);
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.failure(&status.to_string()));
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(self.failure("no answer within 30 s"));
            }
        }
    }

    /// Stops sampling (perf writes its recording and exits). Stop every recording of a run
    /// before finishing any, so no recording samples another one's `perf script`.
    pub fn stop(&mut self) -> Result<(), ProfileError> {
        if self.stopped.is_some() {
            return Ok(());
        }
        let seconds = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let status = self
            .child
            .wait()
            .map_err(|e| ProfileError::io(&self.perf, e))?;
        self.stopped = Some((status, seconds));
        Ok(())
    }

    /// Stops perf if still running and folds what it recorded; no samples is an error.
    pub fn finish(mut self) -> Result<Profile, ProfileError> {
        self.stop()?;
        let Some((status, seconds)) = self.stopped else {
            return Err(self.failure("not stopped"));
        };
        let data = self.dir.path().join("perf.data");
        // perf exits with 130 (or by SIGINT) when stopped that way
        let stopped = status.success()
            || status.code() == Some(130)
            || std::os::unix::process::ExitStatusExt::signal(&status) == Some(2);
        if !stopped || !data.exists() {
            return Err(self.failure(&status.to_string()));
        }
        let folded = self.script(&data)?;
        let profile = Profile::from_folded(folded);
        if profile.samples == 0 {
            return Err(ProfileError::NoSamples {
                what: self.what.clone(),
                seconds,
            });
        }
        Ok(profile)
    }

    /// `perf script` on the recording, folded.
    fn script(&self, data: &Path) -> Result<String, ProfileError> {
        let text = self.dir.path().join("perf.script");
        let out = File::create(&text).map_err(|e| ProfileError::io(&text, e))?;
        let status = Command::new(&self.perf)
            // no period field: each sample counts once; task events: what forked what
            .args([
                "script",
                "--force",
                "--show-task-events",
                "-F",
                "comm,pid,tid,time,event,ip,sym,dso",
                "-i",
            ])
            .arg(data)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(Stdio::null())
            .status()
            .map_err(|e| spawn_error(&self.perf, e))?;
        if !status.success() {
            return Err(ProfileError::Failed {
                what: self.what.clone(),
                status: format!("perf script: {status}"),
                detail: "could not read the recording".into(),
            });
        }
        let f = File::open(&text).map_err(|e| ProfileError::io(&text, e))?;
        let mut kept = Vec::new();
        crate::fold::keep_tree(BufReader::new(f), &self.roots, self.children, &mut kept)
            .map_err(|e| ProfileError::io(&text, e))?;
        crate::fold::fold(kept.as_slice())
    }

    /// The error for a perf that stopped early, from what it printed.
    fn failure(&self, status: &str) -> ProfileError {
        let said = std::fs::read_to_string(self.dir.path().join("perf.err")).unwrap_or_default();
        classify(&self.what, status, &said)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn spawn_error(perf: &Path, e: std::io::Error) -> ProfileError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ProfileError::NotInstalled {
            what: format!("`{}`: {e}", perf.display()),
        }
    } else {
        ProfileError::Failed {
            what: "processes".into(),
            status: format!("could not start `{}`", perf.display()),
            detail: e.to_string(),
        }
    }
}

/// Turns perf's complaint into the error that says what to change.
pub(crate) fn classify(what: &str, status: &str, said: &str) -> ProfileError {
    let detail = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Events "))
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let lower = said.to_lowercase();
    if lower.contains("perf not found for kernel") || lower.contains("install linux-perf") {
        return ProfileError::NotInstalled { what: detail };
    }
    if lower.contains("perf_event_paranoid")
        || lower.contains("permission denied")
        || lower.contains("access to performance monitoring")
        || lower.contains("operation not permitted")
    {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let uid = nix::unistd::geteuid();
        let user = if uid.is_root() {
            String::new()
        } else {
            format!(" and pgrig runs as uid {uid}, not root")
        };
        return ProfileError::Forbidden {
            what: what.to_string(),
            paranoid,
            user,
            detail,
        };
    }
    ProfileError::Failed {
        what: what.to_string(),
        status: status.to_string(),
        detail: if detail.is_empty() {
            "it printed nothing".into()
        } else {
            detail
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paranoid_kernel_is_explained_with_what_to_change() {
        let e = classify(
            "the server's processes",
            "exit status: 255",
            "Error:\nAccess to performance monitoring and observability operations is limited.\n",
        );
        let msg = e.to_string();
        assert!(matches!(e, ProfileError::Forbidden { .. }), "{msg}");
        assert!(msg.contains("kernel.perf_event_paranoid is"), "{msg}");
        assert!(msg.contains("sysctl kernel.perf_event_paranoid=1"), "{msg}");
    }

    #[test]
    fn debians_wrapper_without_a_matching_perf_asks_to_install_it() {
        let e = classify(
            "x",
            "exit status: 1",
            "/usr/bin/perf: line 13: exec: perf_5.10: not found\nE: perf not found for kernel 5.10\n\n  You may need to install linux-perf-5.10\n",
        );
        assert!(e.to_string().contains("apt-get install linux-perf"), "{e}");
    }

    #[test]
    fn a_missing_perf_binary_names_the_package_and_pgrig_perf() {
        let e = spawn_error(
            Path::new("/nonexistent/perf"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        let msg = e.to_string();
        assert!(msg.contains("/nonexistent/perf"), "{msg}");
        assert!(
            msg.contains("linux-perf") && msg.contains("PGRIG_PERF"),
            "{msg}"
        );
    }
}
