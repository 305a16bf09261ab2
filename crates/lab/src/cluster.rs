//! [`Server`]: one throwaway PostgreSQL cluster, from creation to removal.

use std::path::Path;
use std::process::Child;
use std::time::Duration;

use crate::binaries::PgBinaries;
use crate::cluster_dir::{default_base_dir, sweep_stale, ClusterDir};
use crate::error::LabError;
use crate::identity::{is_postgres_alive, ProcessId};
use crate::info::ServerInfo;
use crate::initdb::run_initdb;
use crate::options::ServerOptions;
use crate::process::{self, StartError, StopMode};
use crate::runas::RunAs;
use crate::secret::Secret;
use crate::template::data_dir_from_template;
use crate::watchdog::Watchdog;

const PORT_ATTEMPTS: usize = 8;
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A private PostgreSQL cluster in its own temporary directory, listening on a unix socket in
/// `socket_dir()` (a directory only the server's account and root can enter) and, with
/// [`ServerOptions::tcp`], on 127.0.0.1:`port()` with a password. Dropping it stops the server
/// and removes the directory; a watchdog does the same if this process dies first.
#[derive(Debug)]
pub struct Server {
    pub(super) bins: PgBinaries,
    pub(super) runas: RunAs,
    pub(super) dir: ClusterDir,
    pub(super) opts: ServerOptions,
    pub(super) port: u16,
    /// The superuser password pgrig made for TCP (in `dir.passfile`; never shown).
    pub(super) generated_password: Option<Secret>,
    pub(super) postmaster: Option<Child>,
    /// The running postmaster as recorded at its start.
    pub(super) postmaster_id: Option<ProcessId>,
    pub(super) watchdog: Option<Watchdog>,
    /// Set when the server was handed over (detached): Drop leaves it alone.
    pub(super) kept: bool,
}

impl Server {
    /// Creates, configures and starts a new cluster.
    pub fn start(opts: ServerOptions) -> Result<Server, LabError> {
        Self::start_inner(opts).map_err(LabError::log_removed)
    }

    fn start_inner(opts: ServerOptions) -> Result<Server, LabError> {
        opts.check()?;
        let t0 = std::time::Instant::now();
        let bins = match &opts.bin_dir {
            Some(dir) => PgBinaries::in_dir(dir)?,
            None => PgBinaries::discover()?,
        };
        timing("discover binaries", t0);
        let runas = RunAs::resolve()?;
        let base = opts
            .base_dir
            .clone()
            .unwrap_or_else(|| default_base_dir(opts.fast));
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep_stale(&base, "cluster"));
        let dir = ClusterDir::create(&base, &runas)?;
        // From here on, Drop cleans up whatever exists.
        let mut server = Server {
            bins,
            runas,
            dir,
            port: opts.port.unwrap_or(0),
            generated_password: (opts.tcp && opts.superuser_password.is_none())
                .then(Secret::random)
                .transpose()?,
            opts,
            postmaster: None,
            postmaster_id: None,
            watchdog: None,
            kept: false,
        };
        if server.opts.watchdog {
            server.watchdog = Some(Watchdog::spawn(&server.dir.root)?);
        }
        timing("dirs + watchdog", t0);
        server.create_data_dir(&base)?;
        timing("data dir ready", t0);
        server.first_start()?;
        timing("postmaster ready", t0);
        Ok(server)
    }

    fn create_data_dir(&mut self, base: &Path) -> Result<(), LabError> {
        let (bins, runas, dir, opts) = (&self.bins, &self.runas, &self.dir, &self.opts);
        if opts.use_template {
            data_dir_from_template(bins, runas, base, &dir.data, &opts.superuser)?;
        } else {
            run_initdb(bins, runas, &dir.data, &opts.superuser)?;
        }
        if self.port == 0 {
            self.port = free_port()?;
        }
        dir.configure(opts, self.port, runas)?;
        let generated = self.generated_password.as_ref().map(Secret::expose);
        let stmts = opts.bootstrap_statements(generated);
        if !stmts.is_empty() {
            process::single_user(bins, runas, dir, &stmts)?;
        }
        Ok(())
    }

    fn first_start(&mut self) -> Result<(), LabError> {
        for attempt in 1..=PORT_ATTEMPTS {
            match self.start_postmaster() {
                Ok(child) => {
                    self.started(child);
                    return self.write_passfile();
                }
                Err(StartError::PortInUse(e))
                    if self.opts.port.is_some() || attempt == PORT_ATTEMPTS =>
                {
                    return Err(e)
                }
                Err(StartError::PortInUse(_)) => {
                    self.port = free_port()?;
                    self.dir
                        .write_settings(&self.opts, self.port, &self.runas)?;
                }
                Err(StartError::Other(e)) => return Err(e),
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Stops the server with a clean (fast) shutdown if it runs, then starts it again on the
    /// same port. Settings changed with `ALTER SYSTEM` take effect.
    pub fn restart(&mut self) -> Result<(), LabError> {
        self.stop_with(StopMode::Fast);
        match self.start_postmaster() {
            Ok(child) => {
                self.started(child);
                Ok(())
            }
            Err(StartError::PortInUse(e) | StartError::Other(e)) => Err(e),
        }
    }

    /// Starts the postmaster on the cluster as it is configured now.
    fn start_postmaster(&mut self) -> Result<Child, StartError> {
        process::start_postmaster(
            &self.bins,
            &self.runas,
            &self.dir,
            self.opts.start_timeout,
            self.watchdog.as_mut(),
        )
    }

    /// Records the postmaster just started.
    fn started(&mut self, child: Child) {
        let id = ProcessId::of(child.id()).unwrap_or(ProcessId {
            pid: child.id(),
            start_time: 0,
        });
        self.postmaster = Some(child);
        self.postmaster_id = Some(id);
    }

    /// With TCP, writes the password file for pgrig's own connections.
    fn write_passfile(&self) -> Result<(), LabError> {
        if !self.opts.tcp {
            return Ok(());
        }
        let password = match (&self.opts.superuser_password, &self.generated_password) {
            (Some(given), _) => given.as_str(),
            (None, Some(made)) => made.expose(),
            (None, None) => return Ok(()),
        };
        self.dir.write_passfile(self.port, self.user(), password)
    }

    /// Kills the server like a crash would (immediate shutdown, no checkpoint). The directory
    /// stays; `restart()` brings the server back (with crash recovery).
    pub fn stop_immediate(&mut self) {
        self.stop_with(StopMode::Immediate);
    }

    fn stop_with(&mut self, mode: StopMode) {
        self.postmaster_id = None;
        if let Some(mut child) = self.postmaster.take() {
            process::stop_child(&mut child, mode, STOP_TIMEOUT);
        }
    }

    /// True while the postmaster runs.
    pub fn is_running(&self) -> bool {
        self.postmaster_pid().is_some_and(is_postgres_alive)
    }

    /// The postmaster's pid, while it runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        self.postmaster.as_ref().map(Child::id)
    }

    /// The postmaster followed by all its child processes (backends, checkpointer, ...),
    /// e.g. for CPU-affinity control. Empty when the server is stopped.
    pub fn pids(&self) -> Vec<u32> {
        match self.postmaster_pid() {
            Some(pid) if is_postgres_alive(pid) => process::process_tree(pid),
            _ => Vec::new(),
        }
    }

    /// Describes this server (for the detached-server state file).
    pub fn info(&self) -> ServerInfo {
        ServerInfo {
            root: self.dir.root.clone(),
            data_dir: self.dir.data.clone(),
            socket_dir: self.dir.sock.clone(),
            log: self.dir.log.clone(),
            port: self.port,
            user: self.user().to_string(),
            os_user: self.runas.name.clone(),
            os_uid: Some(self.runas.uid),
            bin_dir: self.bin_dir().to_path_buf(),
            version: self.version().to_string(),
            pid: self.postmaster_pid(),
            start_time: self.postmaster_id.map(|id| id.start_time),
            tcp: self.opts.tcp,
            passfile: self.passfile().map(Path::to_path_buf),
        }
    }

    /// Hands the running server over to whoever keeps the returned info: no watchdog, no
    /// cleanup on drop. Stop it later with [`crate::stop`]-style code using the info.
    pub fn into_detached(mut self) -> ServerInfo {
        let info = self.info();
        self.kept = true;
        if let Some(w) = self.watchdog.take() {
            w.dismiss("keep");
        }
        // Dropping the Child handle neither kills nor waits; the postmaster gets reparented
        // when this process exits.
        self.postmaster.take();
        info
    }

    /// The watchdog's pid, if one runs (for tests).
    pub fn watchdog_pid(&self) -> Option<u32> {
        self.watchdog.as_ref().map(Watchdog::pid)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        self.stop_with(StopMode::Immediate);
        self.dir.remove();
        if let Some(w) = self.watchdog.take() {
            w.dismiss("done");
        }
    }
}

/// Prints start-up phase timings when `PGRIG_LAB_TIMING` is set.
fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("PGRIG_LAB_TIMING").is_some() {
        eprintln!("pgrig-lab: {phase} after {:?}", since.elapsed());
    }
}

/// A TCP port on 127.0.0.1 that is free right now.
fn free_port() -> Result<u16, LabError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| LabError::io("finding a free TCP port", "127.0.0.1:0", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| LabError::io("finding a free TCP port", "127.0.0.1:0", e))
}
