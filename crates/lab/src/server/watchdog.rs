//! The owner-death watchdog: a detached `sh` that blocks reading a pipe whose only write end is
//! held by the owning process. When the owner goes away, however it goes (normal exit without
//! destructors, panic=abort, Ctrl-C, SIGKILL), the kernel closes that end, the read returns EOF
//! and the script stops the postmaster (pid from `postmaster.pid`, checked to be a `postgres`
//! process) and removes the cluster directory. No polling, no pid-reuse race on the owner.
//!
//! The write end is close-on-exec, so other programs we spawn never hold it open. Writing
//! `done` (normal cleanup already happened) or `keep` (server handed over to someone else) tells
//! the watchdog to exit without touching anything.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use super::error::LabError;

const SCRIPT: &str = r#"
read -r cmd
case "$cmd" in done|keep) exit 0 ;; esac
root="$1"
pidfile="$root/data/postmaster.pid"
if [ -f "$pidfile" ]; then
  pid=$(head -n 1 "$pidfile")
  if [ -n "$pid" ] && [ "$(cat /proc/$pid/comm 2>/dev/null)" = postgres ]; then
    kill -QUIT "$pid" 2>/dev/null
    i=0
    while [ $i -lt 100 ] && [ "$(cat /proc/$pid/comm 2>/dev/null)" = postgres ] \
          && ! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; do
      sleep 0.05; i=$((i+1))
    done
    kill -KILL "$pid" 2>/dev/null
  fi
fi
rm -rf "$root"
"#;

/// A running watchdog for one cluster directory.
#[derive(Debug)]
pub(crate) struct Watchdog {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watchdog for the cluster rooted at `root`.
    pub fn spawn(root: &Path) -> Result<Watchdog, LabError> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(SCRIPT)
            .arg("pgrig-watchdog")
            .arg(root)
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Own process group: a Ctrl-C aimed at the owner must not take the watchdog with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| LabError::Command {
            what: "starting the cleanup watchdog".into(),
            command: "/bin/sh -c <watchdog script>".into(),
            status: format!("could not start: {e}"),
            output: String::new(),
        })?;
        let pipe = child.stdin.take();
        Ok(Watchdog { child, pipe })
    }

    /// Tells the watchdog to exit without cleaning up, and reaps it.
    pub fn dismiss(mut self, word: &str) {
        if let Some(mut pipe) = self.pipe.take() {
            let _ = writeln!(pipe, "{word}");
        }
        let _ = self.child.wait();
    }

    /// The watchdog's pid (for tests).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}
