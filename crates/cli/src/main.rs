//! The `pgrig` binary. Invoked through a link named `pgbench`, it is `pgrig bench`. pgrig's own
//! commands write standard output through `pgrig_cli::sink::out` (never a panic) and fail when
//! it could not be written; `bench` keeps pgbench's ways.

// pgrig_cli's print macros, which never panic, in place of std's (see its `print` module).
#[macro_use]
extern crate pgrig_cli;

use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use pgrig_cli::sink::stdout_status;

mod compare;
mod results;
mod study;

fn main() -> ExitCode {
    // Arguments that are not UTF-8 (a Latin-1 `-D` value) are kept byte for byte.
    let args: Vec<String> = std::env::args_os()
        .map(|a| pgrig_script::bytes::decode(a.as_bytes()).into_owned())
        .collect();
    let argv0 = args.first().cloned().unwrap_or_else(|| "pgrig".into());
    let base = std::path::Path::new(&argv0)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("pgrig");
    let code = if base == "pgbench" {
        pgrig_cli::bench::main("pgbench", &args)
    } else if base == "pgreplay" {
        stdout_status(pgrig_cli::replay::main(&args[1..]))
    } else if base == "sysbench" {
        stdout_status(pgrig_cli::sysbench::main(&args))
    } else {
        match args.get(1).map(String::as_str) {
            Some("bench") => {
                let mut rest = vec![format!("{argv0} bench")];
                rest.extend(args[2..].iter().cloned());
                pgrig_cli::bench::main("pgrig bench", &rest)
            }
            Some("run") => stdout_status(pgrig_cli::run::main(&args[1..])),
            Some("worker") => stdout_status(pgrig_cli::worker::main(&args[1..])),
            Some("k8s") => stdout_status(pgrig_cli::k8s::main(&args[1..])),
            Some("sysbench") => stdout_status(pgrig_cli::sysbench::main(&args[1..])),
            Some("init") => stdout_status(pgrig_cli::init::main(&args)),
            Some("server") => stdout_status(pgrig_cli::server::main(&args)),
            Some("study") => stdout_status(study::main(&args[1..])),
            Some("results") => stdout_status(results::main(&args[1..])),
            Some("compare") => stdout_status(compare::main(&args[1..])),
            Some("capture") => stdout_status(pgrig_cli::capture::main(&args[1..])),
            Some("replay") => stdout_status(pgrig_cli::replay::pgrig_main(&args[2..])),
            Some("tpcc") => stdout_status(pgrig_cli::tpcc::main(&args[1..])),
            Some("load") => stdout_status(pgrig_cli::load::main(&args[1..])),
            Some("report") => stdout_status(pgrig_cli::html_report::main(&args[1..])),
            Some("--version") | Some("-V") => {
                println!("pgrig {}", env!("CARGO_PKG_VERSION"));
                stdout_status(0)
            }
            Some("--help") | Some("-h") | Some("help") | None => {
                print!("{USAGE}");
                stdout_status(0)
            }
            Some(other) => {
                eprintln!("pgrig: error: unknown command \"{other}\"");
                eprintln!("pgrig: hint: Try \"pgrig --help\" for more information.");
                1
            }
        }
    };
    ExitCode::from(code as u8)
}

const USAGE: &str = "pgrig: a PostgreSQL benchmarking rig.

Usage:
  pgrig bench [pgbench options] [DBNAME]   pgbench's CLI, scripts and report (also as a link named pgbench)
  pgrig init [pgbench -i options] [DBNAME]  pgbench's tables, loaded faster (--load-jobs)
  pgrig sysbench [options] TEST CMD        sysbench 1.0's command line and report (also as a link named sysbench)
  pgrig run [OPTIONS]                      a named workload, with a throwaway server when no target is given
  pgrig worker --segment I/N --coordinator URL   one segment of a run from several hosts
  pgrig k8s manifest --segments N --image IMG --target-secret NAME [-- OPTIONS]   its Kubernetes Jobs
  pgrig server start|stop|status           a private scratch PostgreSQL cluster
  pgrig study FILE [--store PATH]          a matrix of runs from a study file, into the results store
  pgrig results list|summary|show|export   the runs in the results store (export --format json|csv)
  pgrig compare A B [--metric tps,p99]     is the difference between two selections of runs real?
  pgrig report [STUDY|RUN-ID|FILE ...]     charts as one self-contained HTML page (-o FILE, --svg DIR)
  pgrig replay [options] [LOGFILE...]      pgreplay 1.2's command line: replay a server log (also as a link named pgreplay)
  pgrig capture --upstream URL -o FILE     a recording proxy: sessions with typed parameters, for pgrig replay FILE
  pgrig tpcc load|check                    TPC-C's dataset and its consistency conditions
  pgrig load --csv DIR [--schema FILE]     CSV files (NAME.csv into table NAME) through COPY FROM STDIN, then ANALYZE
  pgrig --version

Run \"pgrig bench --help\" or \"pgrig run --help\" for the options of each command.
";
