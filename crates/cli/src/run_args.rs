//! `pgrig run`'s command line ([`RunArgs`], clap): what `run` and its segmented form read.

use clap::Parser;

/// `--duration`: the study file's duration syntax (`10s`, `1500ms`, `2m`, `1h`, bare seconds) and
/// rule (at least 1 s), in whole seconds rounded up, as a study runs it.
pub(crate) fn parse_duration(s: &str) -> Result<u64, String> {
    let ms = pgrig_study::workload::parse_duration_ms(s)?;
    if ms < 1000 {
        return Err(format!("invalid duration \"{s}\": must be at least 1s"));
    }
    Ok(ms.div_ceil(1000))
}

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
    /// tpcb-like, simple-update, select-only (or a prefix), a script file (`FILE[@WEIGHT]`), or a
    /// native workload (sysbench's oltp_read_write ..., ycsb-a ... ycsb-f, tpcc).
    #[arg(long, short = 'w', default_value = "tpcb-like")]
    pub workload: Vec<String>,
    /// An option of a native workload, e.g. -o tables=4 -o table_size=100000 (repeatable).
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
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
    /// Write an HTML report (charts, see `pgrig report`) of the run to FILE.
    #[arg(long)]
    pub report: Option<std::path::PathBuf>,
    /// Random seed (for reproducible runs).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Throwaway server: connect over TCP to 127.0.0.1 (scram-sha-256 with a generated
    /// password) instead of its unix socket.
    #[arg(long)]
    pub tcp: bool,
    /// Profile the server with perf during the run: DIR/server.folded and DIR/server.svg.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<std::path::PathBuf>,
    /// With --target: the server's postmaster to profile (default: from the unix socket).
    #[arg(long, value_name = "PID", requires = "profile")]
    pub profile_pid: Option<u32>,
    /// With --profile: also profile pgrig itself (DIR/client.folded, DIR/client.svg).
    #[arg(long, requires = "profile")]
    pub profile_client: bool,
    /// Serve live OpenMetrics at http://HOST:PORT/metrics while the run lasts.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// After the run, serve the final figures until scraped once, at most SEC seconds (default:
    /// 60, one scrape interval of a Prometheus left at its defaults).
    #[arg(
        long,
        value_name = "SEC",
        default_value_t = crate::metrics::DEFAULT_LINGER_S,
        requires = "metrics_addr"
    )]
    pub metrics_linger: u32,
    /// Coordinate N `pgrig worker` segments (one per client host) instead of running clients
    /// here; needs --coordinator and a target other than a throwaway server.
    #[arg(long, value_name = "N", requires = "coordinator")]
    pub segments: Option<u32>,
    /// The database holding the coordination schema pgrig_fleet (with --segments).
    #[arg(long, value_name = "URL", requires = "segments")]
    pub coordinator: Option<String>,
}
