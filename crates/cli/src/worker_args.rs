//! `pgrig worker`'s command line (clap) and its checks; what it joins with is
//! `pgrig_fleet::join::Joining`.

use clap::Parser;
use pgrig_fleet::join::Joining;
use pgrig_fleet::share::SegmentId;
use pgrig_fleet::FleetError;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig worker",
    about = "Run one segment of a benchmark coordinated by `pgrig bench --segments N --coordinator URL` (or, with --lua-script, by `pgrig sysbench SCRIPT.lua --segments=N --coordinator=URL ... run`)"
)]
pub struct WorkerArgs {
    /// This worker's segment: I/N, 0 <= I < N (a Kubernetes Indexed Job's completion index).
    #[arg(long, value_name = "I/N")]
    pub segment: SegmentId,
    /// The database holding the coordination schema (postgresql:// URI or conninfo; the
    /// password from PGPASSWORD or the password file).
    #[arg(long, value_name = "URL")]
    pub coordinator: String,
    /// Join this run only (default: the newest run waiting for N segments whose coordinator
    /// is alive); refused when it is not waiting or its coordinator is gone.
    #[arg(long, value_name = "ID")]
    pub run: Option<i64>,
    /// Join only a run with these options: a prefix (8 to 64 hex digits) of the options digest
    /// the coordinator prints (`run R (options digest HEX) waits for N workers`).
    #[arg(long, value_name = "HEX", value_parser = parse_digest)]
    pub options_digest: Option<String>,
    /// Refuse to run when this host's clock is further than MS from the database's, or the
    /// offset cannot be measured closer than that.
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    pub max_clock_offset: f64,
    /// How long to wait for the coordinator's run and its start.
    #[arg(long, value_name = "SEC", default_value_t = 300)]
    pub wait: u64,
    /// The target this worker benchmarks (postgresql:// URI or conninfo; default: libpq's
    /// environment, PGHOST, PGPORT, PGUSER, PGDATABASE). Never taken from the coordinator.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Where this worker writes the run's `-l` transaction logs (a run asking for them is
    /// refused without it); the run names only the files' prefix.
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<std::path::PathBuf>,
    /// Run a sysbench Lua script run (`pgrig sysbench SCRIPT.lua --segments N --coordinator
    /// URL ... run`) with this local script file: the run names its script by SHA-256 and the
    /// worker runs the file of that digest, never text from the coordinator. Repeatable; a
    /// directory stands for its `*.lua` files.
    #[arg(long, value_name = "FILE")]
    pub lua_script: Vec<std::path::PathBuf>,
}

/// `--options-digest`: 8 to 64 hex digits, lower-cased.
pub(crate) fn parse_digest(s: &str) -> Result<String, String> {
    if (8..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err("8 to 64 hexadecimal digits expected".into())
    }
}

impl WorkerArgs {
    /// The run this worker joins and who it is, for `pgrig_fleet::join`.
    pub fn joining(&self) -> Joining {
        Joining {
            segment: self.segment,
            run: self.run,
            options_digest: self.options_digest.clone(),
            max_clock_offset: self.max_clock_offset,
            wait: self.wait,
            host: crate::metrics::host_name(),
        }
    }
}

/// Refuses a password in `--target` (it would show in the process list) and a `--log-dir`
/// that is no directory.
pub fn check_args(a: &WorkerArgs) -> Result<(), FleetError> {
    if a.target
        .as_deref()
        .is_some_and(|t| pgrig_wire::mask_passwords(t) != t)
    {
        return Err(FleetError::new(
            "a password in --target would show in the process list: give it in PGPASSWORD or \
             a password file",
        ));
    }
    if let Some(d) = &a.log_dir {
        if !d.is_dir() {
            return Err(FleetError::new(format!(
                "--log-dir {}: not a directory",
                d.display()
            )));
        }
    }
    Ok(())
}
