//! What of a `sysbench SCRIPT.lua --segments N ... run` command line travels to the workers,
//! and what a worker accepts from the coordination schema: **run options only** — sysbench's
//! general options that shape the run (threads, limits, rate, randomness, report figures) and
//! the script's own options. Never a connection option (`--pgsql-*`, `--mysql-*`,
//! `--db-driver`: "not sent to workers", each worker's target is its own), never a path
//! (`--config-file`, the script: the schema names it by SHA-256), never pgrig's own options.
//! The coordinator stores them as `--name=value` (aliases under their current names, its
//! fixed `--rand-seed` last); the worker checks them again, since anyone who can write the
//! schema can write them.

use super::cmdline::CmdLine;
use super::options::{self, Section};

/// sysbench's general options a worker runs with as the schema says.
const RUN: [&str; 18] = [
    "threads",
    "events",
    "time",
    "rate",
    "report-interval",
    "rand-type",
    "rand-spec-iter",
    "rand-spec-pct",
    "rand-spec-res",
    "rand-seed",
    "rand-pareto-h",
    "verbosity",
    "percentile",
    "histogram",
    "db-ps-mode",
    "forced-shutdown",
    "thread-stack-size",
    "validate",
];

/// Deprecated aliases, stored under the current names.
const ALIASES: [(&str, &str); 4] = [
    ("num-threads", "threads"),
    ("max-requests", "events"),
    ("max-time", "time"),
    ("tx-rate", "rate"),
];

/// The longest option value stored or accepted.
const MAX_VALUE: usize = 4096;

/// Where to connect: stays on the coordinator's command line.
fn connection(name: &str) -> bool {
    name.starts_with("pgsql-") || name.starts_with("mysql-") || name == "db-driver"
}

/// The run options for the workers, and the connection options left out ("not sent to
/// workers"); `seed` is the run's `--rand-seed`. Refused: a driver other than pgsql, a general
/// option that is no run option, a script option that is not `--name=value` with a plain name,
/// or that holds a password.
pub fn for_workers(c: &CmdLine, seed: u32) -> Result<(Vec<String>, Vec<String>), String> {
    let (mut out, mut dropped) = (Vec::new(), Vec::new());
    for (name, value) in &c.general {
        let section = options::find(name).map(|o| o.section);
        if section == Some(Section::Pgrig) || *name == "rand-seed" {
            continue;
        }
        if connection(name) {
            if *name == "db-driver" && value.as_deref().is_some_and(|v| v != "pgsql") {
                return Err(format!(
                    "--db-driver={}: a segmented run uses pgsql",
                    value.as_deref().unwrap_or("")
                ));
            }
            dropped.push(format!("--{name}"));
            continue;
        }
        let name = ALIASES
            .iter()
            .find(|(a, _)| a == name)
            .map_or(*name, |(_, to)| *to);
        if !RUN.contains(&name) {
            return Err(format!(
                "--{name} does not combine with --segments (it is not sent to workers)"
            ));
        }
        if let Some(v) = value {
            figure(name, v)?;
        }
        out.push(match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        });
    }
    for (_, _, raw) in &c.rest {
        script_option(raw)?;
        out.push(raw.clone());
    }
    if out.iter().any(|a| pgrig_wire::mask_passwords(a) != *a) {
        return Err(
            "a password among the options of a segmented run would be stored in the \
             coordination schema: give it to every host in PGPASSWORD or a password file"
                .into(),
        );
    }
    dropped.dedup();
    out.push(format!("--rand-seed={seed}"));
    Ok((out, dropped))
}

/// The range of each figure a run option can carry, for a worker (`pgrig_fleet::bounds`):
/// sysbench reads a negative `--time` or `--events` as none, so a row's sign is checked here,
/// on the text. `--threads` is checked per worker, on its share (`crate::worker_lua`).
const FIGURES: [(&str, f64, f64); 10] = [
    ("threads", 1.0, u32::MAX as f64),
    ("events", 0.0, pgrig_fleet::bounds::MAX_COUNT as f64),
    ("time", 0.0, pgrig_fleet::bounds::MAX_SECONDS as f64),
    ("rate", 0.0, pgrig_fleet::bounds::MAX_RATE),
    (
        "report-interval",
        0.0,
        pgrig_fleet::bounds::MAX_INTERVAL_S as f64,
    ),
    ("percentile", 0.0, 100.0),
    ("verbosity", 0.0, 5.0),
    ("rand-spec-iter", 1.0, 10_000.0),
    ("rand-spec-pct", 0.0, 100.0),
    ("rand-spec-res", 0.0, 100.0),
];

/// Refuses a figure of a general option outside its range ([`FIGURES`]; `--rand-pareto-h`
/// within 0 to 1), by name. Text that is no number is left to sysbench's own parser.
fn figure(name: &str, value: &str) -> Result<(), String> {
    let t = value.trim();
    let Ok(v) = t.strip_prefix('+').unwrap_or(t).parse::<f64>() else {
        return Ok(());
    };
    if name == "rand-pareto-h" {
        return pgrig_fleet::bounds::within(name, v, 0.0, 1.0);
    }
    match FIGURES.iter().find(|(n, _, _)| *n == name) {
        Some((_, min, max)) => pgrig_fleet::bounds::within(name, v, *min, *max),
        None => Ok(()),
    }
}

/// A script option as stored: `--name` or `--name=value`, the name plain (letters, digits, `-`
/// and `_`, at most 64), the value printable and at most [`MAX_VALUE`] bytes.
fn script_option(arg: &str) -> Result<(), String> {
    let shown = || {
        arg.chars()
            .take(80)
            .collect::<String>()
            .escape_debug()
            .to_string()
    };
    let body = arg
        .strip_prefix("--")
        .ok_or_else(|| format!("\"{}\" is not an option", shown()))?;
    let (name, value) = body.split_once('=').unwrap_or((body, ""));
    let plain = !name.is_empty()
        && name.len() <= 64
        && (name.chars()).all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain || value.len() > MAX_VALUE || value.chars().any(char::is_control) {
        return Err(format!(
            "option \"{}\" is not a plain --name=value",
            shown()
        ));
    }
    Ok(())
}

/// Checks the run options a worker read from the schema: each a run option of [`RUN`] or a
/// script option (checked against the script's declarations by the worker); anything else —
/// a connection option, `--test`, `--config-file`, pgrig's options, a bare word — is refused,
/// named.
pub fn check_stored(args: &[String]) -> Result<(), String> {
    for a in args {
        script_option(a)?;
        let body = &a[2..];
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        if let Some((_, value)) = body.split_once('=') {
            figure(name, value)?;
        }
        let general = options::find(name).map(|o| o.name);
        let refused = match general {
            Some(n) => !RUN.contains(&n),
            None => name.eq_ignore_ascii_case("test"),
        };
        if refused {
            let shown: String = a.chars().take(80).collect();
            return Err(format!(
                "stored option {} is not a run option: refused (a worker connects only to its \
                 own --target and runs only its own --lua-script)",
                shown.escape_debug()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> CmdLine {
        let a: Vec<String> = s.split_whitespace().map(String::from).collect();
        CmdLine::parse(&a).unwrap()
    }

    #[test]
    fn connection_options_stay_and_run_options_travel() {
        let c = cmd(
            "--pgsql-host=db --pgsql-db=x --num-threads=4 --time=5 --tables=2 \
                     --segments=2 --coordinator=u --json=f x.lua run",
        );
        let (out, dropped) = for_workers(&c, 7).unwrap();
        assert_eq!(
            out,
            ["--threads=4", "--time=5", "--tables=2", "--rand-seed=7"]
        );
        assert_eq!(dropped, ["--pgsql-host", "--pgsql-db"]);
        check_stored(&out).unwrap();
    }

    #[test]
    fn what_is_no_run_option_is_refused() {
        assert!(for_workers(&cmd("--config-file=/etc/x x.lua run"), 1).is_err());
        assert!(for_workers(&cmd("--db-driver=mysql x.lua run"), 1).is_err());
        for bad in [
            "--pgsql-host=evil",
            "--pgsql_port=1",
            "--test=/tmp/other.lua",
            "--config-file=/etc/passwd",
            "--json=/tmp/x",
            "run",
            "--a=b\nc",
        ] {
            assert!(check_stored(&[bad.to_string()]).is_err(), "{bad}");
        }
    }
}
