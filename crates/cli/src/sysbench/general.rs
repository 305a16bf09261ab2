//! sysbench 1.0.20's general options (those every test takes: threads, limits, reports, random
//! numbers, the database driver and `--pgsql-*`; the table is [`super::options`]) read into
//! [`General`] with sysbench's checks and messages, in sysbench's order, and the deprecated
//! aliases' warnings.

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
    /// `--forced-shutdown`: the second of the run (from its threads' start) at which sysbench's
    /// alarm ends it ([`forced_shutdown`]); `None`: off, or no `--time` limit
    pub forced_shutdown: Option<u32>,
    pub rate: u64,
    pub report_interval: u32,
    pub rand_seed: u32,
    pub percentile: u32,
    pub histogram: bool,
    pub ps_mode_disable: bool,
    /// `--verbosity` 3 or more: sysbench's notices are printed (the banner, the run's header,
    /// interval lines and report); below, only its warnings and errors and the tests' own lines.
    pub notices: bool,
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
        let forced_shutdown = forced_shutdown(c, time)?;
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
            forced_shutdown,
            rate: rate.max(0) as u64,
            report_interval: report_interval.max(0) as u32,
            rand_seed: rand_seed as u32,
            percentile: percentile as u32,
            histogram,
            ps_mode_disable: c.value("db-ps-mode") == Some("disable"),
            notices: int(c, "verbosity")? >= 3,
        })
    }
}

/// `--forced-shutdown` as sysbench 1.0.20 reads it, with a `--time` limit of `time` seconds (none:
/// the option is not read): `off` (the default, any case) turns it off; no value or an empty
/// one waits `time / 20` seconds after the limit; `N` waits N seconds, `N%` N percent of `time`
/// (C's `strtol` and unsigned arithmetic: `-1` wraps around). Returns the second of the run at
/// which the run is ended (`time` plus the wait, wrapping as sysbench's `unsigned` does; 0 sets
/// no alarm). Anything else: `FATAL: Invalid value for --forced-shutdown: 'V'`, status 1.
pub fn forced_shutdown(c: &super::cmdline::CmdLine, time: i64) -> Result<Option<u32>, Exit> {
    if time <= 0 {
        return Ok(None);
    }
    let time_s = time as u32;
    let wait = match c.given("forced-shutdown") {
        None => return Ok(None),
        Some(None) | Some(Some("")) => time_s / 20,
        Some(Some(v)) if v.eq_ignore_ascii_case("off") => return Ok(None),
        Some(Some(v)) => {
            let (n, rest) = strtol(v);
            let n = n as u32;
            if rest.starts_with('%') {
                (f64::from(n) * f64::from(time_s) / 100.0) as u32
            } else if !rest.is_empty() {
                return Err(Exit::fatal(format!(
                    "Invalid value for --forced-shutdown: '{v}'"
                )));
            } else {
                n
            }
        }
    };
    Ok(Some(time_s.wrapping_add(wait)))
}

/// C's `strtol(s, &end, 10)`: the number (clamped to a `long`) and what follows it; no digits:
/// 0 and the whole text.
fn strtol(s: &str) -> (i64, &str) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return (0, s);
    }
    let mut n: i64 = 0;
    for b in body[..digits].bytes() {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    (if neg { n.saturating_neg() } else { n }, &body[digits..])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `--forced-shutdown` with `arg` (`None`: not given) and `--time=time`.
    fn at(arg: Option<&str>, time: i64) -> Result<Option<u32>, String> {
        let args: Vec<String> = arg.map(String::from).into_iter().collect();
        let c = super::super::cmdline::CmdLine::parse(&args).unwrap();
        forced_shutdown(&c, time).map_err(|e| e.stdout)
    }

    #[test]
    fn forced_shutdown_is_read_as_sysbench_reads_it() {
        assert_eq!(at(None, 30), Ok(None));
        assert_eq!(at(Some("--forced-shutdown=Off"), 30), Ok(None));
        assert_eq!(at(Some("--forced-shutdown=5"), 30), Ok(Some(35)));
        // a percentage of --time, truncated; no value or an empty one: 5 %
        assert_eq!(at(Some("--forced-shutdown=5%"), 30), Ok(Some(31)));
        assert_eq!(at(Some("--forced-shutdown=50%x"), 2), Ok(Some(3)));
        assert_eq!(at(Some("--forced-shutdown"), 100), Ok(Some(105)));
        assert_eq!(at(Some("--forced-shutdown="), 2), Ok(Some(2)));
        // C's unsigned arithmetic: -1 wraps around to --time - 1; a bare % is 0 %
        assert_eq!(at(Some("--forced-shutdown=-1"), 2), Ok(Some(1)));
        assert_eq!(at(Some("--forced-shutdown=%"), 2), Ok(Some(2)));
        // not read without a time limit
        assert_eq!(at(Some("--forced-shutdown=abc"), 0), Ok(None));
        for bad in ["abc", "1x", "on"] {
            assert_eq!(
                at(Some(&format!("--forced-shutdown={bad}")), 2),
                Err(format!(
                    "FATAL: Invalid value for --forced-shutdown: '{bad}'\n"
                ))
            );
        }
    }
}
