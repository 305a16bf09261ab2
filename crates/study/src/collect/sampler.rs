//! Sampling alongside a run: a thread with its own connection counts the wait events of the
//! benchmark's sessions in pg_stat_activity several times a second; and the CPU (user/sys) and
//! I/O of a local server's processes, read from /proc before and after the run (the
//! postmaster's reaped-children figures keep exited backends in the sum).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::db::Db;

/// Counts of `type:event` (or `CPU:running`) over all samples.
#[derive(Debug, Default, Clone)]
pub struct WaitEvents {
    pub samples: u64,
    pub counts: BTreeMap<String, u64>,
}

impl WaitEvents {
    pub fn to_json(&self) -> Value {
        json!({"samples": self.samples, "events": self.counts})
    }

    /// Share (0..1) of sampled active sessions waiting on a lock.
    pub fn lock_share(&self) -> f64 {
        let total: u64 = self.counts.values().sum();
        let lock: u64 = self
            .counts
            .iter()
            .filter(|(k, _)| k.starts_with("Lock:") || k.starts_with("LWLock:"))
            .map(|(_, v)| v)
            .sum();
        if total == 0 {
            0.0
        } else {
            lock as f64 / total as f64
        }
    }
}

const WAIT_SQL: &str =
    "SELECT COALESCE(wait_event_type, 'CPU') || ':' || COALESCE(wait_event, 'running'), count(*) \
     FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() \
     AND state IS DISTINCT FROM 'idle' AND datname = current_database() \
     AND application_name IS DISTINCT FROM 'pgrig-server-seconds' GROUP BY 1";

pub struct WaitSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<WaitEvents>>,
}

impl WaitSampler {
    /// Starts sampling with connection `db` every `interval`.
    pub fn start(mut db: Db, interval: Duration) -> WaitSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut w = WaitEvents::default();
            while !flag.load(Ordering::Relaxed) {
                if let Ok(rows) = db.query(WAIT_SQL) {
                    w.samples += 1;
                    for r in rows {
                        if let (Some(Some(k)), Some(Some(n))) = (r.first(), r.get(1)) {
                            *w.counts.entry(k.clone()).or_default() +=
                                n.parse::<u64>().unwrap_or(0);
                        }
                    }
                }
                std::thread::sleep(interval);
            }
            w
        });
        WaitSampler {
            stop,
            handle: Some(handle),
        }
    }

    pub fn finish(mut self) -> WaitEvents {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

/// Cumulative CPU and I/O of a server's processes at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct ProcUsage {
    pub user_s: f64,
    pub sys_s: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

pub(crate) fn ticks_per_s() -> f64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    }
}

/// `(utime, stime, cutime, cstime)` in ticks from /proc/PID/stat.
fn stat_times(pid: u32) -> Option<(u64, u64, u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the parenthesised command name; utime is field 14 overall
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    Some((n(11)?, n(12)?, n(13)?, n(14)?))
}

fn io_bytes(pid: u32) -> (u64, u64) {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/io")) else {
        return (0, 0);
    };
    let get = |key: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (get("read_bytes:"), get("write_bytes:"))
}

/// Usage of the postmaster `pids[0]` and its children `pids[1..]`, including children the
/// postmaster has already reaped.
pub fn proc_usage(pids: &[u32]) -> ProcUsage {
    let tps = ticks_per_s();
    let mut u = ProcUsage::default();
    for (i, &pid) in pids.iter().enumerate() {
        if let Some((ut, st, cut, cst)) = stat_times(pid) {
            u.user_s += ut as f64 / tps;
            u.sys_s += st as f64 / tps;
            if i == 0 {
                u.user_s += cut as f64 / tps;
                u.sys_s += cst as f64 / tps;
            }
        }
        let (r, w) = io_bytes(pid);
        u.read_bytes += r;
        u.write_bytes += w;
    }
    u
}

impl ProcUsage {
    pub fn delta_json(&self, before: &ProcUsage, wall_s: f64) -> Value {
        let user = (self.user_s - before.user_s).max(0.0);
        let sys = (self.sys_s - before.sys_s).max(0.0);
        json!({
            "cpu_user_s": user,
            "cpu_sys_s": sys,
            "cpus_busy": if wall_s > 0.0 { (user + sys) / wall_s } else { 0.0 },
            "read_bytes": self.read_bytes.saturating_sub(before.read_bytes),
            "write_bytes": self.write_bytes.saturating_sub(before.write_bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_usage_is_readable() {
        let me = std::process::id();
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let u = proc_usage(&[me]);
        assert!(u.user_s + u.sys_s >= 0.0);
        assert!(stat_times(me).is_some());
    }

    #[test]
    fn lock_share_counts_lock_waits() {
        let mut w = WaitEvents::default();
        w.counts.insert("Lock:transactionid".into(), 3);
        w.counts.insert("CPU:running".into(), 1);
        assert!((w.lock_share() - 0.75).abs() < 1e-9);
    }
}
