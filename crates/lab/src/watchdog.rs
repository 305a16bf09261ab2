//! The owner-death watchdog: a detached `sh` that blocks reading a pipe whose only write end is
//! held by the owning process. When the owner goes away, however it goes (normal exit without
//! destructors, panic=abort, Ctrl-C, SIGKILL), the kernel closes that end, the read returns EOF
//! and the script stops the postmaster and removes the cluster directory. No polling, no
//! pid-reuse race on the owner.
//!
//! The owner tells the watchdog which postmaster is its own (`pid PID START_TIME`, see
//! `identity`): the script signals only a process with that pid that still started at that
//! time, never one named by `postmaster.pid` (which the server's account can rewrite).
//! The write end is close-on-exec, so other programs we spawn never hold it open. Writing
//! `done` (normal cleanup already happened) or `keep` (server handed over to someone else) tells
//! the watchdog to exit without touching anything.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::error::LabError;
use crate::identity::ProcessId;

const SCRIPT: &str = r#"
pid=; start=
while read -r cmd a b; do
  case "$cmd" in
    done|keep) exit 0 ;;
    pid) pid="$a"; start="$b" ;;
  esac
done
root="$1"
alive() {
  [ -n "$pid" ] && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f20)" = "$start" ] \
    && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}
if alive; then
  kill -QUIT "$pid" 2>/dev/null
  i=0
  while [ $i -lt 100 ] && alive; do sleep 0.05; i=$((i+1)); done
  alive && kill -KILL "$pid" 2>/dev/null
fi
i=0
while [ -e "$root" ] && [ $i -lt 40 ]; do
  rm -rf "$root" 2>/dev/null
  [ -e "$root" ] && sleep 0.05
  i=$((i+1))
done
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

    /// Tells the watchdog which postmaster to stop if the owner dies.
    pub fn watch(&mut self, id: ProcessId) {
        if let Some(pipe) = &mut self.pipe {
            let _ = writeln!(pipe, "pid {} {}", id.pid, id.start_time);
        }
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
