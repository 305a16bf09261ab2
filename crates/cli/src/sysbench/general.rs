//! sysbench 1.0.20's general options (those every test takes: threads, limits, reports, random
//! numbers, the database driver and `--pgsql-*`), their defaults and help texts, and reading
//! them into [`General`] with sysbench's checks and messages, in sysbench's order.

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
    Db,
    Pgsql,
    /// accepted for command-line compatibility, without effect (`--mysql-*`, `--debug`, ...)
    Ignored,
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
use Section::{Db, General as Gen, Ignored, Log, Pgsql, Rand};

/// Every general option, in `--help`'s order.
pub const GENERAL_OPTIONS: &[GeneralOption] = &[
    opt("threads", Int, Some("1"), "number of threads to use", Gen),
    opt("events", Int, Some("0"), "limit for total number of events", Gen),
    opt("time", Int, Some("10"), "limit for total execution time in seconds", Gen),
    opt("forced-shutdown", Str, Some("off"), "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable", Ignored),
    opt("thread-stack-size", Str, Some("64K"), "size of stack per thread", Ignored),
    opt("rate", Int, Some("0"), "average transactions rate. 0 for unlimited rate", Gen),
    opt("report-interval", Int, Some("0"), "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports", Gen),
    opt("report-checkpoints", Str, Some(""), "dump full statistics and reset all counters at specified points in time (not supported by pgrig)", Ignored),
    opt("debug", Bool, Some("off"), "print more debugging info", Ignored),
    opt("validate", Bool, Some("off"), "perform validation checks where possible", Ignored),
    opt("help", Bool, Some("off"), "print help and exit", Gen),
    opt("version", Bool, Some("off"), "print version and exit", Gen),
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
    opt("verbosity", Int, Some("3"), "verbosity level {5 - debug, 0 - only critical messages}", Ignored),
    opt("percentile", Int, Some("95"), "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations", Log),
    opt("histogram", Bool, Some("off"), "print latency histogram in report", Log),
    opt("db-driver", Str, Some("pgsql"), "specifies database driver to use (pgrig: pgsql only)", Db),
    opt("db-ps-mode", Str, Some("auto"), "prepared statements usage mode {auto, disable}", Db),
    opt("db-debug", Bool, Some("off"), "print database-specific debug information", Ignored),
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

/// `--pgsql-*`: where to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pg {
    pub host: String,
    pub port: String,
    pub user: String,
    /// never printed
    pub password: String,
    pub db: String,
}

/// The general options a run uses, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct General {
    pub threads: u32,
    pub events: u64,
    pub time: u64,
    pub rate: u64,
    pub report_interval: u32,
    pub rand_seed: u32,
    pub percentile: u32,
    pub histogram: bool,
    pub ps_mode_disable: bool,
}

/// How a sysbench command ends early: what it prints on each stream, and its status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exit {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Exit {
    /// A message on standard error, status 1 (sysbench's `fprintf(stderr, ...)` errors).
    pub fn stderr(msg: impl std::fmt::Display) -> Exit {
        Exit {
            stderr: format!("{msg}\n"),
            code: 1,
            ..Exit::default()
        }
    }

    /// sysbench's `FATAL: ...` line on standard output, status 1.
    pub fn fatal(msg: impl std::fmt::Display) -> Exit {
        Exit {
            stdout: format!("FATAL: {msg}\n"),
            code: 1,
            ..Exit::default()
        }
    }
}

/// An integer option as sysbench's `sb_get_value_int` reads it (the whole value a C `int`).
fn int(c: &super::cmdline::CmdLine, name: &str) -> Result<i64, Exit> {
    let v = c.value(name).unwrap_or("0");
    let t = v.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    t.parse::<i32>()
        .map(i64::from)
        .map_err(|_| Exit::stderr(format!("Invalid value for the '{name}' option: '{v}'")))
}

/// A deprecated alias wins when set above its default, as in sysbench.
fn aliased(c: &super::cmdline::CmdLine, old: &str, new: &str, floor: i64) -> Result<i64, Exit> {
    let v = int(c, old)?;
    if v > floor {
        Ok(v)
    } else {
        int(c, new)
    }
}

/// The deprecated aliases, each with the option it stands for and the value above which it is
/// used (and sysbench warns), in the order sysbench warns.
const ALIASES: [(&str, &str, i64); 4] = [
    ("num-threads", "threads", 1),
    ("max-requests", "events", 0),
    ("max-time", "time", 0),
    ("tx-rate", "rate", 0),
];

/// sysbench's warnings for the deprecated aliases in use (`WARNING: --max-time is deprecated,
/// use --time instead`), printed on standard output before the banner.
pub fn deprecations(c: &super::cmdline::CmdLine) -> String {
    ALIASES
        .iter()
        .filter(|(old, _, floor)| int(c, old).is_ok_and(|v| v > *floor))
        .map(|(old, new, _)| format!("WARNING: --{old} is deprecated, use --{new} instead\n"))
        .collect()
}

impl General {
    /// The general options, checked in sysbench's order with its messages.
    pub fn read(c: &super::cmdline::CmdLine) -> Result<General, Exit> {
        let threads = aliased(c, "num-threads", "threads", 1)?;
        if threads <= 0 {
            return Err(Exit::fatal(format!(
                "Invalid value for --threads: {threads}.\n"
            )));
        }
        let events = aliased(c, "max-requests", "events", 0)?;
        let time = aliased(c, "max-time", "time", 0)?;
        let rand_type = c.value("rand-type").unwrap_or("special");
        // zipfian: sysbench 1.1's, a pgrig extension here
        if !["uniform", "gaussian", "special", "pareto", "zipfian"].contains(&rand_type) {
            return Err(Exit::fatal(format!(
                "Invalid random numbers distribution: {rand_type}."
            )));
        }
        let rand_seed = int(c, "rand-seed")?;
        let rate = aliased(c, "tx-rate", "rate", 0)?;
        let report_interval = int(c, "report-interval")?;
        let percentile = int(c, "percentile")?;
        if !(0..=100).contains(&percentile) {
            return Err(Exit::fatal(format!(
                "Invalid value for --percentile: {percentile}"
            )));
        }
        let histogram = c.flag("histogram");
        if percentile == 0 && histogram {
            return Err(Exit::fatal(
                "--histogram cannot be used with --percentile=0",
            ));
        }
        Ok(General {
            threads: threads as u32,
            events: events.max(0) as u64,
            time: time.max(0) as u64,
            rate: rate.max(0) as u64,
            report_interval: report_interval.max(0) as u32,
            rand_seed: rand_seed as u32,
            percentile: percentile as u32,
            histogram,
            ps_mode_disable: c.value("db-ps-mode") == Some("disable"),
        })
    }
}

/// Where a database failure happens, which sysbench's messages name: the command's Lua
/// function, and for `run` every thread's initialisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `prepare` runs on `--threads` threads (each connects)
    Prepare {
        threads: u32,
    },
    Cleanup,
    Run {
        threads: u32,
    },
}

impl Phase {
    /// sysbench's report of a failure in the phase: `first` (the driver's message), then the
    /// function that failed and `why` — once per thread under `run`, then its last words.
    pub fn failed(self, first: &str, why: &str) -> Exit {
        let function = match self {
            Phase::Prepare { .. } => "sysbench.cmdline.call_command",
            Phase::Cleanup => "cleanup",
            Phase::Run { .. } => "thread_init",
        };
        let once = format!("FATAL: {first}\nFATAL: `{function}' function failed: {why}\n");
        let stdout = match self {
            Phase::Run { threads } => {
                once.repeat(threads as usize) + "FATAL: Thread initialization failed!\n"
            }
            Phase::Prepare { threads } => once.repeat(threads as usize),
            Phase::Cleanup => once,
        };
        Exit {
            stdout,
            code: 1,
            ..Exit::default()
        }
    }
}

/// The checks sysbench makes when the database driver starts: the driver's name and
/// `--db-ps-mode`.
pub fn check_driver(c: &super::cmdline::CmdLine, phase: Phase) -> Result<(), Exit> {
    let why = "failed to initialize the DB driver";
    let driver = c.value("db-driver").unwrap_or("pgsql");
    if driver != "pgsql" {
        let msg = format!(
            "invalid database driver name: '{driver}' (pgrig runs sysbench's pgsql driver only)"
        );
        return Err(phase.failed(&msg, why));
    }
    let mode = c.value("db-ps-mode").unwrap_or("auto");
    if mode != "auto" && mode != "disable" {
        return Err(phase.failed(&format!("Invalid value for db-ps-mode: {mode}"), why));
    }
    Ok(())
}

impl Pg {
    /// `--pgsql-*`, read when the test loads (after the banner), as sysbench's driver does.
    pub fn read(c: &super::cmdline::CmdLine) -> Result<Pg, Exit> {
        let port = c.value("pgsql-port").unwrap_or("5432");
        let port = port.trim_start().parse::<i32>().map_err(|_| {
            Exit::stderr(format!(
                "Invalid value for the 'pgsql_port' option: '{port}'"
            ))
        })?;
        Ok(Pg {
            host: c.value("pgsql-host").unwrap_or("localhost").into(),
            port: port.to_string(),
            user: c.value("pgsql-user").unwrap_or("sbtest").into(),
            password: c.value("pgsql-password").unwrap_or("").into(),
            db: c.value("pgsql-db").unwrap_or("sbtest").into(),
        })
    }

    /// Where to connect, as sysbench's `PQsetdbLogin` call says it: host, port, user and
    /// database always given (sysbench's defaults), the password from the environment or
    /// `~/.pgpass` when none is given. The password itself never goes into the arguments.
    pub fn conn_args(&self) -> pgrig_wire::ConnArgs {
        pgrig_wire::ConnArgs {
            host: Some(self.host.clone()),
            port: Some(self.port.clone()),
            user: Some(self.user.clone()),
            dbname: Some(format!(
                "dbname='{}'",
                self.db.replace('\\', "\\\\").replace('\'', "\\'")
            )),
        }
    }
}
