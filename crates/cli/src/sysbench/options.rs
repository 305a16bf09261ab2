//! sysbench 1.0.20's general options as a table (names, kinds, defaults, help texts, the
//! `--help` section of each) and how sysbench reads a boolean value.

use super::seam::OptKind;

/// One general option: sysbench's name, kind, default, help.
pub struct GeneralOption {
    pub name: &'static str,
    pub kind: OptKind,
    pub default: Option<&'static str>,
    pub help: &'static str,
    /// The section `--help` lists it under.
    pub section: Section,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    General,
    Rand,
    Log,
    /// the logger's own option, listed first under "Log options:" in a table of its own
    Verbosity,
    Db,
    Pgsql,
    /// accepted for command-line compatibility, without effect (`--mysql-*`, `--debug`, ...)
    Ignored,
    /// pgrig's own (`--json`, `--store`, `--metrics-addr`): not sysbench's, so not in its `--help` sections
    /// nor in a script's `sysbench.opt`
    Pgrig,
}

const fn opt(
    name: &'static str,
    kind: OptKind,
    default: Option<&'static str>,
    help: &'static str,
    section: Section,
) -> GeneralOption {
    GeneralOption {
        name,
        kind,
        default,
        help,
        section,
    }
}

use OptKind::{Bool, Float, Int, Str};
use Section::{Db, General as Gen, Ignored, Log, Pgrig, Pgsql, Rand, Verbosity};

/// Every general option, in `--help`'s order.
pub const GENERAL_OPTIONS: &[GeneralOption] = &[
    opt("threads", Int, Some("1"), "number of threads to use", Gen),
    opt("events", Int, Some("0"), "limit for total number of events", Gen),
    opt("time", Int, Some("10"), "limit for total execution time in seconds", Gen),
    opt("forced-shutdown", Str, Some("off"), "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable", Gen),
    opt("thread-stack-size", Str, Some("64K"), "size of stack per thread", Gen),
    opt("rate", Int, Some("0"), "average transactions rate. 0 for unlimited rate", Gen),
    opt("report-interval", Int, Some("0"), "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports", Gen),
    opt("report-checkpoints", Str, Some(""), "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default.", Gen),
    opt("debug", Bool, Some("off"), "print more debugging info", Gen),
    opt("validate", Bool, Some("off"), "perform validation checks where possible", Gen),
    opt("help", Bool, Some("off"), "print help and exit", Gen),
    opt("version", Bool, Some("off"), "print version and exit", Gen),
    opt("config-file", Str, None, "File containing command line options", Gen),
    opt("tx-rate", Int, Some("0"), "deprecated alias for --rate", Gen),
    opt("max-requests", Int, Some("0"), "deprecated alias for --events", Gen),
    opt("max-time", Int, Some("0"), "deprecated alias for --time", Gen),
    opt("num-threads", Int, Some("1"), "deprecated alias for --threads", Gen),
    opt("rand-type", Str, Some("special"), "random numbers distribution {uniform,gaussian,special,pareto}", Rand),
    opt("rand-spec-iter", Int, Some("12"), "number of iterations used for numbers generation", Rand),
    opt("rand-spec-pct", Int, Some("1"), "percentage of values to be treated as 'special' (for special distribution)", Rand),
    opt("rand-spec-res", Int, Some("75"), "percentage of 'special' values to use (for special distribution)", Rand),
    opt("rand-seed", Int, Some("0"), "seed for random number generator. When 0, the current time is used as a RNG seed.", Rand),
    opt("rand-pareto-h", Float, Some("0.2"), "parameter h for pareto distribution", Rand),
    opt("verbosity", Int, Some("3"), "verbosity level {5 - debug, 0 - only critical messages}", Verbosity),
    opt("percentile", Int, Some("95"), "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations", Log),
    opt("histogram", Bool, Some("off"), "print latency histogram in report", Log),
    opt("db-driver", Str, Some("pgsql"), "specifies database driver to use ('help' to get list of available drivers)", Db),
    opt("db-ps-mode", Str, Some("auto"), "prepared statements usage mode {auto, disable}", Db),
    opt("db-debug", Bool, Some("off"), "print database-specific debug information", Db),
    opt("pgsql-host", Str, Some("localhost"), "PostgreSQL server host", Pgsql),
    opt("pgsql-port", Int, Some("5432"), "PostgreSQL server port", Pgsql),
    opt("pgsql-user", Str, Some("sbtest"), "PostgreSQL user", Pgsql),
    opt("pgsql-password", Str, Some(""), "PostgreSQL password", Pgsql),
    opt("pgsql-db", Str, Some("sbtest"), "PostgreSQL database name", Pgsql),
    opt("mysql-host", Str, Some("localhost"), "MySQL server host", Ignored),
    opt("mysql-port", Str, Some("3306"), "MySQL server port", Ignored),
    opt("mysql-socket", Str, None, "MySQL socket", Ignored),
    opt("mysql-user", Str, Some("sbtest"), "MySQL user", Ignored),
    opt("mysql-password", Str, Some(""), "MySQL password", Ignored),
    opt("mysql-db", Str, Some("sbtest"), "MySQL database name", Ignored),
    opt("mysql-ssl", Bool, Some("off"), "use SSL connections", Ignored),
    opt("mysql-ignore-errors", Str, Some("1213,1020,1205"), "list of errors to ignore", Ignored),
    opt("json", Str, None, "write the run document (pgrig's JSON) to FILE", Pgrig),
    opt("store", Str, None, "store the run in the results store at PATH or postgresql:// URL", Pgrig),
    opt("metrics-addr", Str, None, "serve the run's live metrics (OpenMetrics) at HOST:PORT", Pgrig),
    opt("metrics-linger", Str, None, "seconds the final metrics stay served unless scraped (60)", Pgrig),
    opt("segments", Int, None, "split a Lua script's run over N client hosts (pgrig worker --lua-script)", Pgrig),
    opt("coordinator", Str, None, "the database holding the coordination schema of --segments", Pgrig),
    opt("segments-wait", Int, None, "seconds to wait for every segment's worker (300)", Pgrig),
];

/// The general option called `name` (`-` and `_` alike).
pub fn find(name: &str) -> Option<&'static GeneralOption> {
    let key = name.replace('_', "-");
    GENERAL_OPTIONS.iter().find(|o| o.name == key)
}

/// A boolean as sysbench reads it: no value, `on`, `true`, `1`; or `off`, `false`, `0`.
pub fn parse_bool(value: Option<&str>) -> Option<bool> {
    match value {
        None | Some("on") | Some("true") | Some("1") => Some(true),
        Some("off") | Some("false") | Some("0") => Some(false),
        Some(_) => None,
    }
}

/// Whether `value` is one sysbench stores for an option of `kind` (a bad boolean is not: the
/// option is then treated as unknown).
pub fn accepts(kind: OptKind, value: Option<&str>) -> bool {
    kind != OptKind::Bool || parse_bool(value).is_some()
}
