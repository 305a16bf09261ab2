//! What of a `bench` command line travels to the workers of a segmented run, and what a worker
//! accepts from the coordination schema: **run options only** (clients, duration, rate, protocol,
//! retries, `-D` variables, `-l` with a plain `--log-prefix` name …). Never a connection option
//! or target (a worker connects to its own target), never a local path (scripts travel as their
//! text, the worker writes logs under its own `--log-dir`), never pgrig's own options. The
//! coordinator stores them canonically (`--name` / `--name=value`); the worker checks them again,
//! since anyone who can write the schema can write them.

use super::getopt::{Event, Getopt};
use super::options::{self, long_name, Opt};

/// The options a worker runs with as the coordination schema says.
const RUN: [Opt; 25] = [
    Opt::Client,
    Opt::Connect,
    Opt::Define,
    Opt::Jobs,
    Opt::Log,
    Opt::LatencyLimit,
    Opt::NoVacuum,
    Opt::Progress,
    Opt::Protocol,
    Opt::ReportPerCommand,
    Opt::Rate,
    Opt::Scale,
    Opt::Time,
    Opt::Transactions,
    Opt::VacuumAll,
    Opt::SamplingRate,
    Opt::AggregateInterval,
    Opt::ProgressTimestamp,
    Opt::LogPrefix,
    Opt::RandomSeed,
    Opt::FailuresDetailed,
    Opt::MaxTries,
    Opt::VerboseErrors,
    Opt::ExitOnAbort,
    Opt::ContinueOnError,
];

/// The coordinator's own options: they stay with it.
const OWN: [Opt; 11] = [
    Opt::Json,
    Opt::Percentiles,
    Opt::Profile,
    Opt::ProfilePid,
    Opt::ProfileClient,
    Opt::MetricsAddr,
    Opt::MetricsLinger,
    Opt::Segments,
    Opt::Coordinator,
    Opt::SegmentsWait,
    Opt::Store,
];

/// Script selection: the scripts travel on their own (`pgrig_fleet::scripts`).
const SCRIPTS: [Opt; 4] = [
    Opt::Builtin,
    Opt::File,
    Opt::SelectOnly,
    Opt::SkipSomeUpdates,
];

/// A `--log-prefix` a worker accepts: a file name (no directory), placed in its `--log-dir`.
pub fn plain_name(prefix: &str) -> Result<(), String> {
    let bad = prefix.is_empty()
        || prefix == "."
        || prefix == ".."
        || prefix.len() > 200
        || prefix.contains('/')
        || prefix.chars().any(char::is_control);
    if bad {
        return Err(format!(
            "--log-prefix \"{}\" of a segmented run must be a plain file name (each worker \
             writes its logs under its own --log-dir)",
            prefix.escape_debug()
        ));
    }
    Ok(())
}

fn refused(id: Opt) -> String {
    match id {
        Opt::Dbname | Opt::Host | Opt::Port | Opt::Username => format!(
            "--{} is a connection option: it is not sent to workers, each connects to its own \
             target (pgrig worker --target URL, or PGHOST/PGPORT/PGUSER/PGDATABASE on its host)",
            long_name(id)
        ),
        _ => format!("--{} is not a run option of a segmented run", long_name(id)),
    }
}

/// `--name` or `--name=value`.
fn canonical(id: Opt, arg: Option<String>) -> String {
    match arg {
        Some(v) => format!("--{}={v}", long_name(id)),
        None => format!("--{}", long_name(id)),
    }
}

/// Scans `args` (after the program name): each option through `keep` (its canonical form kept
/// when it says so); a non-option argument (a database or conninfo) is refused.
fn scan(
    args: &[String],
    mut keep: impl FnMut(Opt, &Option<String>) -> Result<bool, String>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut it = Getopt::new(options::spec(), "pgrig", args, false);
    for event in it.by_ref() {
        match event {
            Event::Error(line) => return Err(line),
            Event::Opt { id, arg } => {
                let id = if id == Opt::Dbname && arg.is_none() {
                    Opt::Debug
                } else {
                    id
                };
                if keep(id, &arg)? {
                    out.push(canonical(id, arg));
                }
            }
        }
    }
    if let Some(p) = it.positionals().first() {
        return Err(format!(
            "\"{}\": a database or connection string is not sent to workers, each connects to \
             its own target (pgrig worker --target URL, or PGHOST/PGPORT/PGUSER/PGDATABASE on \
             its host)",
            pgrig_wire::mask_passwords(p)
        ));
    }
    Ok(out)
}

/// The run options of a coordinator's command line (`args` after the program name), canonical,
/// for the workers: its own options and the script options dropped (the scripts travel on
/// their own); a connection option, a target or a `--log-prefix` with a directory refused.
pub fn for_workers(args: &[String]) -> Result<Vec<String>, String> {
    scan(args, |id, arg| {
        if OWN.contains(&id) || SCRIPTS.contains(&id) {
            return Ok(false);
        }
        if id == Opt::LogPrefix {
            plain_name(arg.as_deref().unwrap_or(""))?;
        }
        if RUN.contains(&id) || id == Opt::Debug {
            Ok(true)
        } else {
            Err(refused(id))
        }
    })
}

/// A worker's check of the options the coordination schema holds: run options only.
pub fn check_stored(args: &[String]) -> Result<(), String> {
    scan(args, |id, arg| {
        if id == Opt::LogPrefix {
            plain_name(arg.as_deref().unwrap_or(""))?;
        }
        if RUN.contains(&id) || id == Opt::Debug {
            Ok(true)
        } else {
            Err(refused(id))
        }
    })
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn run_options_travel_canonically_and_the_rest_stays() {
        let args = v(&[
            "-c5",
            "-j",
            "2",
            "-T",
            "3",
            "-S",
            "-f",
            "x.sql@2",
            "--json",
            "o.json",
            "-l",
            "--log-prefix",
            "seg",
            "-Dk=v",
            "--segments",
            "2",
            "--coordinator",
            "host=db",
        ]);
        assert_eq!(
            for_workers(&args).unwrap(),
            v(&[
                "--client=5",
                "--jobs=2",
                "--time=3",
                "--log",
                "--log-prefix=seg",
                "--define=k=v"
            ])
        );
    }

    #[test]
    fn targets_and_paths_are_refused() {
        for bad in [
            &["-h", "evil"][..],
            &["--port=1"],
            &["-U", "x"],
            &["-d", "postgres"],
            &["host=evil password=x"],
            &["--log-prefix", "/etc/x"],
            &["--log-prefix=../x"],
        ] {
            assert!(for_workers(&v(bad)).is_err(), "{bad:?}");
            assert!(check_stored(&v(bad)).is_err(), "{bad:?}");
        }
        for bad in [
            &["-f", "/etc/shadow"][..],
            &["--file=/etc/shadow"],
            &["-i"],
            &["--json=x"],
        ] {
            assert!(check_stored(&v(bad)).is_err(), "{bad:?}");
        }
        let msg = for_workers(&v(&["postgresql://u:hunter2@db/x"])).unwrap_err();
        assert!(!msg.contains("hunter2"), "{msg}");
    }
}
