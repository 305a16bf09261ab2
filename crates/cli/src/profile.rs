//! `--profile DIR` of `pgrig bench` and `pgrig run`: perf samples the server's processes (and
//! pgrig's own with `--profile-client`) from just before the benchmark to its end, then writes
//! `DIR/server.folded`, `DIR/server.svg` (and `client.*`). The server is a throwaway one's
//! postmaster, `--profile-pid`, or the postmaster named by the unix socket's lock file
//! (`<socket dir>/.s.PGSQL.<port>.lock`, first line).

use std::path::{Path, PathBuf};

use pgrig_engine::config::ConnArgs;
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
        if pgrig_lab::server::postgres_tree(postmaster).is_none() {
            return Err(format!(
                "--profile: process {postmaster} is not a running PostgreSQL server (postgres)"
            ));
        }
        let tree = || pgrig_lab::server::postgres_tree(postmaster).unwrap_or_default();
        let server = Recording::start("the server's processes", tree).map_err(text)?;
        let client = if client {
            let me = || vec![std::process::id()];
            Some(Recording::start("pgrig's own process", me).map_err(text)?)
        } else {
            None
        };
        Ok(Profiler {
            dir: dir.to_path_buf(),
            server,
            client,
        })
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
