//! `pgrig bench` option parsing, split by concern:
//! * `differential`: bad and odd command lines run through the installed pgbench and through our
//!   parser, comparing stderr lines and exit status (pgbench fails before connecting on a bad
//!   command line, and on a good one fails to connect to `PGHOST=/nonexistent`);
//! * `newest`: the PG17+/master wording and options where PG15 differs, help, lists, program
//!   name, pgrig's extra options;
//! * `configs`: the configs produced by valid command lines, and no panics on odd argv.

use pgrig_cli::args::{parse_pgbench_args, Action, Parsed};
use pgrig_engine::config::{BenchConfig, InitConfig};

#[path = "bench_options/configs.rs"]
mod configs;
#[path = "bench_options/differential.rs"]
mod differential;
#[path = "bench_options/newest.rs"]
mod newest;

/// Our stand-in for `argv[0]`; getopt lines name it.
const ARGV0: &str = "/opt/pg/bin/pgbench";

pub(crate) fn argv(args: &[&str]) -> Vec<String> {
    std::iter::once(ARGV0)
        .chain(args.iter().copied())
        .map(String::from)
        .collect()
}

pub(crate) fn parse_env(args: &[&str], env: &[(&str, &str)]) -> Result<Parsed, (Vec<String>, i32)> {
    let lookup = |k: &str| {
        env.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    };
    parse_pgbench_args("pgbench", &argv(args), &lookup).map_err(|e| (e.lines, e.exit_code))
}

pub(crate) fn parse(args: &[&str]) -> Result<Parsed, (Vec<String>, i32)> {
    parse_env(args, &[])
}

pub(crate) fn bench(args: &[&str]) -> BenchConfig {
    match parse(args) {
        Ok(Parsed {
            action: Action::Bench(cfg),
            ..
        }) => cfg,
        other => panic!("expected a benchmark config for {args:?}, got {other:?}"),
    }
}

pub(crate) fn init(args: &[&str]) -> InitConfig {
    match parse(args) {
        Ok(Parsed {
            action: Action::Init(cfg),
            ..
        }) => cfg,
        other => panic!("expected an init config for {args:?}, got {other:?}"),
    }
}

pub(crate) fn error_lines(args: &[&str]) -> Vec<String> {
    match parse(args) {
        Err((lines, 1)) => lines,
        other => panic!("expected exit-1 error for {args:?}, got {other:?}"),
    }
}
