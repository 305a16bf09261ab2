//! `pgrig run`: the modern front door. A named workload (or a script file) for a duration, with a
//! live progress line and a readable summary (tps, latency percentiles, failures, client CPU).
//! With no target (and no PGHOST), a throwaway local PostgreSQL is started, initialised, used and
//! removed.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::Parser;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, InitConfig, ScriptSource};
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_script::QueryMode;

use crate::sink::StderrSink;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig run",
    about = "Run a named workload against PostgreSQL (a throwaway local server when no target is given)"
)]
pub struct RunArgs {
    /// Server to benchmark: a postgresql:// URI or a conninfo string. Default: PGHOST/PGDATABASE if
    /// set, else a throwaway local server.
    #[arg(long)]
    pub target: Option<String>,
    /// tpcb-like, simple-update, select-only (or a prefix), or a script file (FILE[@WEIGHT]).
    #[arg(long, short = 'w', default_value = "tpcb-like")]
    pub workload: Vec<String>,
    /// How long to run, e.g. 10s, 2m.
    #[arg(long, short = 'T', default_value = "10s", value_parser = parse_duration)]
    pub duration: u64,
    #[arg(long, short = 'c', default_value_t = 1)]
    pub clients: u32,
    #[arg(long, short = 'j', default_value_t = 1)]
    pub threads: u32,
    /// Scale of the pgbench tables to create (throwaway server, or with --init). Default: the
    /// number of clients (at most 100), so TPC-B clients do not queue on branch rows.
    #[arg(long, short = 's')]
    pub scale: Option<i32>,
    /// simple, extended or prepared.
    #[arg(long, short = 'M', default_value = "prepared")]
    pub protocol: String,
    /// (Re)initialise the pgbench tables on the target first (always done on a throwaway server).
    #[arg(long)]
    pub init: bool,
    /// Retries of serialization failures and deadlocks (0 = unlimited).
    #[arg(long, default_value_t = 10)]
    pub max_tries: u32,
    /// Write the whole result as JSON to FILE (- for stdout).
    #[arg(long)]
    pub json: Option<String>,
    /// Random seed (for reproducible runs).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Throwaway server: connect over TCP to 127.0.0.1 (scram-sha-256 with a generated
    /// password) instead of its unix socket.
    #[arg(long)]
    pub tcp: bool,
}

fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600)
    } else {
        (s, 1)
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid duration \"{s}\" (use e.g. 10s, 2m, 1h)"))?;
    if mult == 0 || v == 0 {
        return Err(format!("invalid duration \"{s}\": must be at least 1s"));
    }
    Ok(v * mult)
}

/// A progress sink that rewrites one line on a terminal and prints pgbench's lines otherwise.
struct LiveSink {
    inner: StderrSink,
    tty: bool,
}

impl Sink for LiveSink {
    fn message(&self, level: Level, text: &str) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        self.inner.message(level, text)
    }
    fn stdout(&self, text: &str) {
        self.inner.stdout(text)
    }
    fn progress(&self, p: &Progress) {
        if self.tty {
            eprint!(
                "\r\x1b[K{:>5.0} s  {:>10.1} tps  lat {:.3} ms  {} failed  {} retries",
                p.time, p.tps, p.latency_ms, p.failed, p.retries
            );
        } else {
            self.inner.progress(p)
        }
    }
}

/// One branch row per client (TPC-B-like transactions update one of `scale` branch rows), within
/// what initialises in seconds.
fn default_scale(clients: u32) -> i32 {
    clients.clamp(1, 100) as i32
}

pub fn main(args: &[String]) -> i32 {
    let a = match RunArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    let mode = match a.protocol.as_str() {
        "simple" => QueryMode::Simple,
        "extended" => QueryMode::Extended,
        "prepared" => QueryMode::Prepared,
        other => {
            eprintln!("pgrig: error: invalid --protocol \"{other}\" (expected simple, extended or prepared)");
            return 1;
        }
    };
    let mut scripts = Vec::new();
    for w in &a.workload {
        let (name, weight) = match w.rsplit_once('@') {
            Some((n, wt)) if wt.parse::<i64>().is_ok() => (n, wt.parse::<i64>().unwrap_or(1)),
            _ => (w.as_str(), 1),
        };
        if std::path::Path::new(name).exists() {
            match std::fs::read_to_string(name) {
                Ok(text) => scripts.push(ScriptSource::File {
                    path: name.into(),
                    text,
                    weight,
                }),
                Err(e) => {
                    eprintln!("pgrig: error: could not read workload file \"{name}\": {e}");
                    return 1;
                }
            }
        } else {
            match pgrig_script::builtin::lookup(name) {
                Ok(b) => scripts.push(ScriptSource::Builtin {
                    name: b.name.to_string(),
                    weight,
                }),
                Err(e) => {
                    eprintln!("pgrig: error: {e} (and no such file)");
                    return 1;
                }
            }
        }
    }

    let use_env = std::env::var_os("PGHOST").is_some() || std::env::var_os("PGDATABASE").is_some();
    let mut server = None;
    let conn = match (&a.target, use_env) {
        (Some(t), _) => ConnArgs {
            dbname: Some(t.clone()),
            ..Default::default()
        },
        (None, true) => ConnArgs::default(),
        (None, false) => {
            if let Err(code) = ensure_server_binaries() {
                return code;
            }
            eprintln!("pgrig: starting a throwaway PostgreSQL server...");
            let opts = pgrig_lab::ServerOptions::default()
                .fast(false)
                .tcp(a.tcp)
                .max_connections((a.clients + 20).max(100));
            match pgrig_lab::Server::start(opts) {
                Ok(s) => {
                    eprintln!(
                        "pgrig: PostgreSQL {} on {}port {} in {} (removed when the run ends)",
                        pgrig_lab::release_of(s.version()),
                        if a.tcp { "127.0.0.1 " } else { "" },
                        s.port(),
                        s.root_dir().display()
                    );
                    let c = if a.tcp {
                        ConnArgs {
                            dbname: Some(s.tcp_conninfo("postgres")),
                            ..Default::default()
                        }
                    } else {
                        ConnArgs {
                            host: Some(s.socket_dir().display().to_string()),
                            port: Some(s.port().to_string()),
                            user: Some(s.user().to_string()),
                            dbname: Some("postgres".into()),
                        }
                    };
                    server = Some(s);
                    c
                }
                Err(e) => {
                    eprintln!("pgrig: error: could not start a throwaway PostgreSQL server: {e}");
                    return 1;
                }
            }
        }
    };
    let sink = LiveSink {
        inner: StderrSink {
            prog: "pgrig".into(),
            max_tries: a.max_tries,
            rate: false,
            latency_limit: false,
            progress_timestamp: false,
            json_stdout: false,
        },
        tty: std::io::stderr().is_terminal(),
    };
    if server.is_some() || a.init {
        let scale = a.scale.unwrap_or_else(|| default_scale(a.clients));
        let init = InitConfig {
            conn: conn.clone(),
            scale,
            ..Default::default()
        };
        eprintln!("pgrig: initialising pgbench tables at scale {scale}...");
        if let Err(e) = pgrig_engine::init::run_init(&init, &sink.inner) {
            for (level, l) in &e.lines {
                sink.inner.message(*level, l);
            }
            return e.exit_code;
        }
    }
    let cfg = BenchConfig {
        conn,
        scripts,
        clients: a.clients,
        threads: a.threads.min(a.clients).max(1),
        duration: Duration::Seconds(a.duration),
        mode,
        progress: Some(1),
        max_tries: a.max_tries,
        random_seed: a.seed.map(pgrig_engine::config::SeedOption::Value),
        json: a.json.clone(),
        percentiles: true,
        no_vacuum: false,
        ..Default::default()
    };
    let sink = Arc::new(sink);
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let r = match pgrig_engine::run_bench(cfg, sink.clone(), &stop) {
        Ok(r) => r,
        Err(e) => {
            for (level, l) in &e.lines {
                sink.message(*level, l);
            }
            return e.exit_code;
        }
    };
    if sink.tty {
        eprintln!();
    }
    print!("{}", summary(&r));
    for w in crate::bench::self_check(&r) {
        sink.message(Level::Warning, &w);
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&crate::json::render(&r)).unwrap_or_default();
        if path == "-" {
            println!("{text}");
        } else if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("pgrig: error: could not write \"{path}\": {e}");
            return 1;
        }
    }
    drop(server);
    if r.aborted_clients > 0 {
        eprintln!(
            "pgrig: error: {} client(s) aborted; the results are incomplete",
            r.aborted_clients
        );
        return 2;
    }
    0
}

/// Makes sure PostgreSQL's server binaries are installed: as root on a Debian-like system,
/// installs the `postgresql` package; otherwise says exactly what to install.
fn ensure_server_binaries() -> Result<(), i32> {
    if pgrig_lab::PgBinaries::discover().is_ok() {
        return Ok(());
    }
    let root = unsafe { libc::geteuid() } == 0;
    let apt = std::path::Path::new("/usr/bin/apt-get").exists();
    if !(root && apt) {
        eprintln!("pgrig: error: PostgreSQL server binaries (initdb, postgres) not found");
        eprintln!("pgrig: hint: install them, e.g. \"sudo apt-get install postgresql\" (Debian/Ubuntu) or \"sudo dnf install postgresql-server\" (Fedora), or put their directory on PATH");
        return Err(1);
    }
    eprintln!("pgrig: PostgreSQL server binaries not found; installing the Debian package \"postgresql\" (running as root)...");
    let ok = std::process::Command::new("apt-get")
        .arg("update")
        .arg("-qq")
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        && std::process::Command::new("apt-get")
            .args(["install", "-y", "-qq", "postgresql"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
    if !ok || pgrig_lab::PgBinaries::discover().is_err() {
        eprintln!("pgrig: error: could not install the \"postgresql\" package with apt-get");
        return Err(1);
    }
    Ok(())
}

/// The human-readable summary of `pgrig run`.
pub fn summary(r: &RunResult) -> String {
    use std::fmt::Write;
    let k = &r.stats.total().counts;
    let h = &r.stats.histogram();
    let q = |p: f64| {
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(p) as f64 / 1000.0
        }
    };
    let tps = if r.bench_duration_s > 0.0 {
        k.ok as f64 / r.bench_duration_s
    } else {
        0.0
    };
    let mut s = String::new();
    let desc: Vec<&str> = r.scripts.iter().map(|s| s.desc.as_str()).collect();
    let _ = writeln!(
        s,
        "workload:     {} (scale {}, {} protocol)",
        desc.join(" + "),
        r.scale,
        r.config.mode.name()
    );
    let _ = writeln!(s, "server:       PostgreSQL {}", r.server_version);
    let _ = writeln!(
        s,
        "clients:      {} on {} thread(s), {:.1} s",
        r.config.clients,
        r.threads_cpu.len(),
        r.bench_duration_s
    );
    let _ = writeln!(
        s,
        "transactions: {} ok, {} failed, {} retried ({} retries)",
        k.ok,
        k.failed(),
        k.retried,
        k.retries
    );
    let _ = writeln!(s, "throughput:   {tps:.1} tps");
    let _ = writeln!(
        s,
        "latency ms:   mean {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        r.stats.total().latency.mean() / 1000.0,
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        if h.is_empty() {
            0.0
        } else {
            h.max() as f64 / 1000.0
        }
    );
    let cpu: Vec<String> = r
        .threads_cpu
        .iter()
        .map(|c| format!("{:.0}%", 100.0 * c.busy()))
        .collect();
    let total_cpu: f64 = r.threads_cpu.iter().map(|c| c.user_s + c.sys_s).sum();
    let per_tx = if k.ok > 0 {
        total_cpu * 1e6 / k.ok as f64
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "client CPU:   {} busy per thread, {:.1} µs per transaction",
        cpu.join(" "),
        per_tx
    );
    s
}
