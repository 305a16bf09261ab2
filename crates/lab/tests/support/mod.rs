//! Shared by the security tests: a throwaway second OS account (the attacker) and a way to run
//! programs as it.

#![allow(dead_code)] // each test binary uses a part

use std::process::Command;
use std::sync::Mutex;

/// useradd/userdel lock /etc/passwd; tests of one binary run in parallel.
static ACCOUNTS: Mutex<()> = Mutex::new(());

/// A throwaway OS account, removed when dropped. Not `nobody` (that is the server's account
/// when the tests run as root).
pub struct Attacker {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl Attacker {
    /// Creates the account, or says why it cannot (then the caller prints "skipped: ...").
    pub fn create(tag: &str) -> Result<Attacker, String> {
        if !nix::unistd::Uid::effective().is_root() {
            return Err("not root, so no second OS account can be created".into());
        }
        let name = format!("pgrigx{tag}{}", std::process::id() % 100_000);
        let _guard = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        let _ = Command::new("userdel").arg(&name).output(); // a leftover of a killed run
        let out = Command::new("useradd")
            .args(["--system", "--no-create-home", "--user-group", "--shell"])
            .args(["/usr/sbin/nologin", &name])
            .output()
            .map_err(|e| format!("useradd could not run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "useradd failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let user = nix::unistd::User::from_name(&name)
            .ok()
            .flatten()
            .ok_or("the new account cannot be looked up")?;
        Ok(Attacker {
            name,
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
        })
    }

    /// `program` run as this account (no supplementary groups) with only `PATH` set.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .args(["--clear-groups", "--", program])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        cmd
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        let _guard = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

/// Runs `cmd` and returns (success, stdout, stderr).
pub fn output(mut cmd: Command) -> (bool, String, String) {
    let out = cmd.output().expect("command runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Prints why a test could not check anything (never a silent pass).
pub fn skipped(test: &str, reason: &str) {
    println!("{test}: skipped: {reason}");
    eprintln!("{test}: skipped: {reason}");
}
