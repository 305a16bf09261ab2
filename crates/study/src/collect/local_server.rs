//! The server's own processes, when the server runs on this host: found from a session's backend
//! (its parent is the postmaster) and proven to be that server by the postmaster's start time
//! (`/proc/PID/stat` against `pg_postmaster_start_time()`), so a PID that only happens to exist
//! here (another host, another PID namespace) is never taken for the server. Their CPU time is
//! read from `/proc`: the postmaster's own and reaped children's, plus every live child's.

use crate::collect::sampler::ticks_per_s;

/// The fields of `/proc/PID/stat` used here.
#[derive(Debug, Clone, Copy)]
struct Stat {
    ppid: u32,
    /// user + system time, ticks
    own: u64,
    /// user + system time of children waited for, ticks
    children: u64,
    /// start time, ticks since boot
    start: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the parenthesised command name, from field 3 (state) on
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    Some(Stat {
        ppid: n(1)? as u32,
        own: n(11)? + n(12)?,
        children: n(13)? + n(14)?,
        start: n(19)?,
    })
}

/// Boot time, Unix seconds (`btime` of /proc/stat).
fn boot_time() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// The postmaster of the session whose backend is `backend_pid`, when it runs on this host and
/// started at `started_unix_s` (the server's `pg_postmaster_start_time()`, within 5 s).
pub fn postmaster_of(backend_pid: u32, started_unix_s: f64) -> Option<u32> {
    let backend = stat(backend_pid)?;
    let pm = stat(backend.ppid)?;
    let pm_start = boot_time()? + pm.start as f64 / ticks_per_s();
    ((pm_start - started_unix_s).abs() <= 5.0).then_some(backend.ppid)
}

/// CPU time (user + system, seconds) of the postmaster `pm` and all its processes so far: its own
/// and its reaped children's, and every child still there (zombies included, so a backend's time
/// counts once, before and after the postmaster reaps it). A child reaped while the children are
/// read would be in neither sum: the reading is repeated until the reaped children's time stayed
/// the same around it.
pub fn server_cpu_s(pm: u32) -> Option<f64> {
    for _ in 0..5 {
        let before = stat(pm)?;
        let live = children_ticks(pm)?;
        let after = stat(pm)?;
        if after.children == before.children {
            return Some((after.own + after.children + live) as f64 / ticks_per_s());
        }
    }
    None
}

/// User + system time of the live (or not yet reaped) children of `pm`, ticks.
fn children_ticks(pm: u32) -> Option<u64> {
    let mut ticks = 0;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(s) = stat(pid).filter(|s| s.ppid == pm) {
            ticks += s.own;
        }
    }
    Some(ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_the_postmaster_of_its_children_only_at_its_own_start_time() {
        // this test process stands for the postmaster, a child for a backend
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id();
        let s = stat(me).unwrap();
        let started = boot_time().unwrap() + s.start as f64 / ticks_per_s();
        assert_eq!(postmaster_of(child.id(), started), Some(me));
        assert_eq!(postmaster_of(child.id(), started - 3600.0), None);
        assert!(server_cpu_s(me).unwrap() >= 0.0);
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
