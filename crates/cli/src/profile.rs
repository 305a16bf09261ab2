//! `--profile DIR` of `pgrig bench` and `pgrig run`: perf follows the server's processes (and
//! pgrig's own with `--profile-client`) from before the benchmark and samples them from the
//! engine's `Sink::measuring` (setup and vacuum done, clients about to connect) to the end of
//! the run (through [`Measured`], a sink passing everything else on), then writes
//! `DIR/server.folded`, `DIR/server.svg` (and `client.*`). The server is a throwaway one's
//! postmaster, `--profile-pid`, or the postmaster named by the unix socket's lock file
//! (`<socket dir>/.s.PGSQL.<port>.lock`, first line).

use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};

use pgrig_engine::config::ConnArgs;
use pgrig_engine::sink::{Sink, Tap, Tapped};
use pgrig_profile::{Profile, ProfileError, Recording};

use crate::args::ProfileOptions;

/// The recordings of one run.
pub struct Profiler {
    dir: PathBuf,
    server: Recording,
    client: Option<Recording>,
}

/// What `--profile` wrote, for the closing lines.
pub struct Written {
    pub name: &'static str,
    pub samples: u64,
}

impl Profiler {
    /// Starts perf on the server whose postmaster is `postmaster` (and on pgrig with `client`).
    pub fn start(dir: &Path, postmaster: u32, client: bool) -> Result<Profiler, String> {
        let tree = pgrig_lab::postgres_tree(postmaster).ok_or_else(|| {
            format!("--profile: process {postmaster} is not a running PostgreSQL server (postgres)")
        })?;
        let server = Recording::start("the server's processes", &tree, true).map_err(text)?;
        let client = if client {
            let me = [std::process::id()];
            Some(Recording::start("pgrig's own process", &me, false).map_err(text)?)
        } else {
            None
        };
        Ok(Profiler {
            dir: dir.to_path_buf(),
            server,
            client,
        })
    }

    /// Turns sampling on.
    fn enable(&mut self) -> Result<(), String> {
        self.server.enable().map_err(text)?;
        if let Some(c) = self.client.as_mut() {
            c.enable().map_err(text)?;
        }
        Ok(())
    }

    /// Stops perf and writes the profiles; an empty profile is an error.
    pub fn finish(mut self) -> Result<Vec<Written>, String> {
        let mut out = Vec::new();
        self.server.stop().map_err(text)?;
        if let Some(c) = self.client.as_mut() {
            c.stop().map_err(text)?;
        }
        let server = self.server.finish().map_err(text)?;
        let client = self
            .client
            .map(Recording::finish)
            .transpose()
            .map_err(text)?;
        write(&self.dir, "server", "PostgreSQL server", &server, &mut out)?;
        if let Some(c) = client {
            write(&self.dir, "client", "pgrig (client)", &c, &mut out)?;
        }
        Ok(out)
    }
}

fn write(
    dir: &Path,
    name: &'static str,
    title: &str,
    p: &Profile,
    out: &mut Vec<Written>,
) -> Result<(), String> {
    p.write(dir, name, title).map_err(text)?;
    out.push(Written {
        name,
        samples: p.samples,
    });
    Ok(())
}

fn text(e: ProfileError) -> String {
    e.to_string()
}

/// The lines announcing the written profiles.
pub fn written_lines(dir: &Path, written: &[Written]) -> Vec<String> {
    written
        .iter()
        .map(|w| {
            let base = dir.join(w.name);
            format!(
                "profile: {}.folded, {}.svg ({} samples)",
                base.display(),
                base.display(),
                w.samples
            )
        })
        .collect()
}

/// The postmaster `pgrig bench --profile` samples: `--profile-pid`, else the one listening on
/// the unix socket the connection options name (`-h`/`PGHOST`, default socket directory, port).
pub fn bench_postmaster(opts: &ProfileOptions, conn: &ConnArgs) -> Result<u32, String> {
    if let Some(pid) = opts.pid {
        return Ok(pid);
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let host = conn
        .host
        .clone()
        .or_else(|| env("PGHOST"))
        .unwrap_or_else(|| pgrig_wire::config::DEFAULT_SOCKET_DIR.to_string());
    let port = conn
        .port
        .clone()
        .or_else(|| env("PGPORT"))
        .unwrap_or_else(|| "5432".into());
    if !host.starts_with('/') {
        return Err(format!(
            "--profile: the server is reached over TCP (host \"{host}\"): name its postmaster \
             with --profile-pid PID (profiling needs a server on this host)"
        ));
    }
    let lock = Path::new(&host).join(format!(".s.PGSQL.{port}.lock"));
    let first = std::fs::read_to_string(&lock)
        .map_err(|e| {
            format!(
                "--profile: cannot find the server's postmaster ({}: {e}); name it with \
                 --profile-pid PID",
                lock.display()
            )
        })?
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    first.parse::<u32>().map_err(|_| {
        format!(
            "--profile: {} does not start with a process id; name the postmaster with \
             --profile-pid PID",
            lock.display()
        )
    })
}

/// What the engine returned for a run.
pub type BenchOutcome = Result<pgrig_engine::result::RunResult, pgrig_engine::EngineError>;
/// The profile's files, or why there is none.
pub type ProfileOutcome = Result<Vec<Written>, String>;

/// Runs the benchmark, profiled when a profiler is given (it samples from the moment the engine
/// says the measured window starts); returns the run and the profile's files or its error.
pub fn run_bench_profiled(
    profiler: Option<Profiler>,
    sink: Arc<dyn Sink>,
    cfg: pgrig_engine::config::BenchConfig,
    stop: &pgrig_engine::StopHandle,
) -> (BenchOutcome, Option<ProfileOutcome>) {
    let measured = profiler.map(|p| Arc::new(Measured::new(p)));
    let engine_sink: Arc<dyn Sink> = match &measured {
        Some(m) => Arc::new(Tapped {
            inner: sink,
            tap: m.clone(),
        }),
        None => sink,
    };
    let result = pgrig_engine::run_bench(cfg, engine_sink, stop);
    (result, measured.as_ref().and_then(|m| m.finish()))
}

/// A profiled benchmark's profiler: the tap of the engine's sink, whose `measuring` turns the
/// profiler's sampling on.
pub struct Measured {
    profiler: Mutex<Option<Profiler>>,
    enabled: Mutex<Option<Result<(), String>>>,
}

impl Measured {
    pub fn new(profiler: Profiler) -> Measured {
        Measured {
            profiler: Mutex::new(Some(profiler)),
            enabled: Mutex::new(None),
        }
    }

    /// After the run: stops perf and writes the profiles (`None`: the benchmark never started
    /// measuring, nothing was sampled).
    pub fn finish(&self) -> Option<Result<Vec<Written>, String>> {
        let profiler = self.profiler.lock().ok()?.take()?;
        let enabled = self.enabled.lock().ok()?.take()?;
        Some(enabled.and_then(|()| profiler.finish()))
    }
}

impl Tap for Measured {
    fn measuring(&self) {
        let (Ok(mut profiler), Ok(mut enabled)) = (self.profiler.lock(), self.enabled.lock())
        else {
            return;
        };
        if let Some(p) = profiler.as_mut() {
            *enabled = Some(p.enable());
        }
    }
}
