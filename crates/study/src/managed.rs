//! The server a study runs against: a throwaway local cluster (settings written into its
//! configuration, restarted when a setting needs it, CPU affinity of the postmaster and its
//! backends) or an external server (ALTER SYSTEM + reload when permitted, clear refusals
//! otherwise; its settings are reset at the end).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nix::sched::CpuSet;
use nix::unistd::Pid;

use pgrig_lab::{Server, ServerOptions};

use crate::db::{lit, Db};
use crate::error::StudyError;
use crate::plan::TargetPlan;
use crate::target::Endpoint;

pub struct Managed {
    pub name: String,
    pub server: Option<Server>,
    pub endpoint: Endpoint,
    /// Settings this study changed, with their current values.
    applied: BTreeMap<String, String>,
    /// Settings given at server start (throwaway server).
    pub start_settings: Vec<(String, String)>,
    /// Server CPU count in force (None: all).
    cpus: Option<u32>,
}

impl Managed {
    /// Starts a throwaway server for `t`, or connects to its URL; applies the target settings.
    /// A throwaway server takes `max_clients` benchmark clients plus 20 connections for
    /// pgrig's own sessions (at least PostgreSQL's default 100).
    pub fn open(t: &TargetPlan, max_clients: u32) -> Result<Managed, StudyError> {
        match &t.url {
            Some(url) => {
                let mut m = Managed {
                    name: t.name.clone(),
                    server: None,
                    endpoint: Endpoint {
                        conninfo: url.clone(),
                    },
                    applied: BTreeMap::new(),
                    start_settings: Vec::new(),
                    cpus: None,
                };
                m.apply_settings(&t.settings)?;
                Ok(m)
            }
            None => {
                let mut opts = ServerOptions::default()
                    .fast(t.fast)
                    .tcp(t.tcp)
                    .max_connections((max_clients + 20).max(100));
                if let Some(dir) = &t.bin_dir {
                    opts.bin_dir = Some(dir.into());
                }
                for (k, v) in &t.settings {
                    opts = opts.setting(k.clone(), v.clone());
                }
                let server = Server::start(opts).map_err(|e| StudyError::Server(e.to_string()))?;
                let endpoint = Endpoint {
                    conninfo: if t.tcp {
                        server.tcp_conninfo("postgres")
                    } else {
                        server.conninfo("postgres")
                    },
                };
                Ok(Managed {
                    name: t.name.clone(),
                    server: Some(server),
                    endpoint,
                    applied: BTreeMap::new(),
                    start_settings: t.settings.clone(),
                    cpus: None,
                })
            }
        }
    }

    pub fn is_local(&self) -> bool {
        self.server.is_some()
    }

    pub fn admin(&self) -> Result<Db, StudyError> {
        Db::connect(
            &self.endpoint.conninfo,
            &format!("target \"{}\"", self.name),
        )
    }

    /// Applies settings that differ from what is in force: ALTER SYSTEM, then a reload, or a
    /// restart of the throwaway server when one of them needs it.
    pub fn apply_settings(&mut self, settings: &[(String, String)]) -> Result<(), StudyError> {
        let changed: Vec<&(String, String)> = settings
            .iter()
            .filter(|(k, v)| self.applied.get(k) != Some(v))
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        if self.is_local() {
            for (k, v) in &changed {
                crate::plan::check_local_setting(k, v)
                    .map_err(|m| StudyError::Refused(format!("target \"{}\": {m}", self.name)))?;
            }
        }
        let mut db = self.admin()?;
        let mut needs_restart = Vec::new();
        for (k, v) in &changed {
            let ctx = db.scalar(&format!(
                "SELECT context FROM pg_settings WHERE name = {}",
                lit(k)
            ))?;
            let Some(ctx) = ctx else {
                return Err(StudyError::Refused(format!(
                    "target \"{}\": unknown server setting \"{k}\"",
                    self.name
                )));
            };
            if ctx == "internal" {
                return Err(StudyError::Refused(format!(
                    "target \"{}\": setting \"{k}\" cannot be changed (it is fixed when PostgreSQL is built or initialised)",
                    self.name
                )));
            }
            if ctx == "postmaster" {
                if !self.is_local() {
                    return Err(StudyError::Refused(format!(
                        "target \"{}\": setting \"{k}\" needs a server restart, which pgrig does not do on an external server; set it there by hand or use a throwaway server",
                        self.name
                    )));
                }
                needs_restart.push(k.to_string());
            }
            db.query(&format!("ALTER SYSTEM SET {} = {}", k, lit(v))).map_err(|e| {
                StudyError::Refused(format!(
                    "target \"{}\": could not set \"{k}\" with ALTER SYSTEM ({e}); a superuser (or GRANT ALTER SYSTEM ON PARAMETER) is needed",
                    self.name
                ))
            })?;
            self.applied.insert(k.to_string(), v.to_string());
        }
        db.query("SELECT pg_reload_conf()")?;
        drop(db);
        if !needs_restart.is_empty() {
            self.restart()?;
        }
        let names: Vec<String> = changed.iter().map(|(k, _)| lit(k)).collect();
        self.wait_applied(&names.join(", "))
    }

    /// Waits until a new session sees the settings from the configuration files.
    fn wait_applied(&self, names: &str) -> Result<(), StudyError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut db = self.admin()?;
            let pending = db.scalar(&format!(
                "SELECT count(*) FROM pg_file_settings WHERE name IN ({names}) AND NOT applied AND error IS NULL \
                 AND seqno = (SELECT max(seqno) FROM pg_file_settings f2 WHERE f2.name = pg_file_settings.name)"
            ));
            match pending {
                Ok(Some(n)) if n == "0" => return Ok(()),
                Err(_) => return Ok(()), // no permission to read pg_file_settings: trust the reload
                _ if Instant::now() > deadline => {
                    return Err(StudyError::Refused(format!(
                        "target \"{}\": settings {names} did not take effect after a reload",
                        self.name
                    )))
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Restarts the throwaway server (keeping its data) and re-applies the CPU affinity.
    pub fn restart(&mut self) -> Result<(), StudyError> {
        let Some(server) = self.server.as_mut() else {
            return Err(StudyError::Refused(
                "pgrig does not restart external servers".into(),
            ));
        };
        server
            .restart()
            .map_err(|e| StudyError::Server(e.to_string()))?;
        if let Some(n) = self.cpus {
            self.cpus = None;
            self.set_cpus(Some(n))?;
        }
        Ok(())
    }

    /// Lets the throwaway server's processes (postmaster, so all future backends, and every
    /// running child) use only the first `n` CPUs this process may use; `None`: all of them.
    pub fn set_cpus(&mut self, n: Option<u32>) -> Result<(), StudyError> {
        if n == self.cpus {
            return Ok(());
        }
        let Some(server) = &self.server else {
            return Err(StudyError::Refused(
                "server_cpus needs a throwaway local server (refused for external targets)".into(),
            ));
        };
        let set = cpu_set(n, CpuPick::First)?;
        for pid in server.pids() {
            // a process may have exited meanwhile
            let _ = nix::sched::sched_setaffinity(Pid::from_raw(pid as i32), &set);
        }
        if let Some(pm) = server.postmaster_pid() {
            nix::sched::sched_setaffinity(Pid::from_raw(pm as i32), &set).map_err(|e| {
                StudyError::Server(format!(
                    "could not set the CPU affinity of the postmaster: {e}"
                ))
            })?;
        }
        self.cpus = n;
        Ok(())
    }

    /// The target as provenance records it (a throwaway server's binaries and transport, or
    /// the external server's URL without its password).
    pub fn provenance(&self) -> serde_json::Value {
        match &self.server {
            Some(s) => serde_json::json!({"kind": "throwaway", "name": self.name,
                "bin_dir": s.bin_dir().display().to_string(), "tcp": s.tcp()}),
            None => serde_json::json!({"kind": "external", "name": self.name,
                "url": self.endpoint.redacted()}),
        }
    }

    /// CPUs the throwaway server's postmaster may run on now (empty for external servers).
    pub fn server_cpu_list(&self) -> Vec<usize> {
        let Some(pm) = self.server.as_ref().and_then(Server::postmaster_pid) else {
            return Vec::new();
        };
        match nix::sched::sched_getaffinity(Pid::from_raw(pm as i32)) {
            Ok(set) => (0..CpuSet::count())
                .filter(|&i| set.is_set(i).unwrap_or(false))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Resets what the study changed on an external server (best effort).
    pub fn close(&mut self) {
        if self.is_local() || self.applied.is_empty() {
            return;
        }
        if let Ok(mut db) = self.admin() {
            for k in self.applied.keys() {
                let _ = db.query(&format!("ALTER SYSTEM RESET {k}"));
            }
            let _ = db.query("SELECT pg_reload_conf()");
        }
        self.applied.clear();
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        self.close();
    }
}

#[derive(Clone, Copy)]
pub enum CpuPick {
    First,
    Last,
}

/// CPUs this process may run on (as when first asked, before any affinity of our own).
pub fn allowed_cpus() -> Vec<usize> {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED
        .get_or_init(|| match nix::sched::sched_getaffinity(Pid::from_raw(0)) {
            Ok(set) => (0..CpuSet::count())
                .filter(|&i| set.is_set(i).unwrap_or(false))
                .collect(),
            Err(_) => (0..std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1))
                .collect(),
        })
        .clone()
}

/// `n` of the allowed CPUs (from the start or the end of the list), or all for `None`.
pub fn cpu_list(n: Option<u32>, pick: CpuPick) -> Result<Vec<usize>, StudyError> {
    let all = allowed_cpus();
    Ok(match n {
        None => all,
        Some(n) if n as usize > all.len() => {
            return Err(StudyError::Refused(format!(
                "{n} CPUs asked for, but only {} are available to pgrig",
                all.len()
            )))
        }
        Some(n) => match pick {
            CpuPick::First => all[..n as usize].to_vec(),
            CpuPick::Last => all[all.len() - n as usize..].to_vec(),
        },
    })
}

/// [`cpu_list`] as a set for `sched_setaffinity`.
fn cpu_set(n: Option<u32>, pick: CpuPick) -> Result<CpuSet, StudyError> {
    let mut set = CpuSet::new();
    for c in cpu_list(n, pick)? {
        set.set(c)
            .map_err(|e| StudyError::Other(format!("CPU {c}: {e}")))?;
    }
    Ok(set)
}
