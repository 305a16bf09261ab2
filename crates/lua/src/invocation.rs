//! What the `sysbench` command line hands the Lua runtime: the script, its command, its own
//! options (still unparsed: only the script's declarations can tell them), the general options
//! that a run uses, and where to connect. Plain data; the command line fills it.

use std::path::PathBuf;

/// A general option's value as the script sees it in `sysbench.opt`.
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Int(i64),
    Bool(bool),
    Str(String),
}

/// One `sysbench SCRIPT [COMMAND]` invocation.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// The test argument as given (`cmdline.lua`), for messages.
    pub name: String,
    /// The script file, found as sysbench finds it.
    pub script: PathBuf,
    /// The script's text when it is not read from `script` (sysbench reads standard input
    /// when no test is named).
    pub source: Option<Vec<u8>>,
    /// `prepare`, `run`, `cleanup`, `help`, a custom command, or none (the script's body only).
    pub command: Option<String>,
    /// The whole command line, program name first (`sysbench.cmdline.argv`).
    pub argv: Vec<String>,
    /// Options that are no general option: (name with `_`, value, the argument as given).
    pub script_args: Vec<(String, Option<String>, String)>,
    /// General options for `sysbench.opt` (`threads`, `time`, `events`, ...).
    pub general: Vec<(String, OptValue)>,
    pub threads: u32,
    /// `--events` (0: no limit)
    pub events: u64,
    /// `--time` in seconds (0: no limit)
    pub time: u64,
    /// `--forced-shutdown`: the second (from the threads' start) at which the run is ended with
    /// its report, status 2, as sysbench's alarm ends it (`None`: off; `Some(0)`: sysbench's
    /// alarm of 0, which never goes off)
    pub forced_shutdown: Option<u32>,
    /// `--rate`: events per second over all threads, scheduled as a Poisson process (0: as
    /// fast as possible)
    pub rate: u64,
    pub report_interval: u32,
    /// `--rand-seed` (0: from the clock)
    pub rand_seed: u32,
    /// `--rand-type`
    pub rand_type: String,
    pub percentile: u32,
    pub histogram: bool,
    /// `--verbosity` 3 or more: the header, interval lines and report are printed.
    pub notices: bool,
    /// `--db-ps-mode=disable`: prepared statements run as simple queries.
    pub ps_mode_disable: bool,
    /// `--db-driver`
    pub driver: String,
    /// Where to connect (`--pgsql-*`; a password only through the environment).
    pub conn: pgrig_wire::ConnArgs,
}
