//! Library side of the `pgrig` binary: the pieces `main.rs` and the tests use.
//! `args`: pgbench-compatible command-line parsing for `pgrig bench`; `bench`, `run`, `server`,
//! `html_report` (`pgrig report`): the subcommands; `report`, `json`, `sink`, `interrupt`,
//! `prompt`: their output, signal plumbing and the password prompt; `own_args`: how pgrig's own
//! commands parse their arguments (clap).

// First: its macros take the place of std's print macros in every module below.
#[macro_use]
mod print;

pub mod args;
pub mod bench;
pub mod bench_report;
pub mod capture;
pub mod coordinator;
pub mod html_report;
pub mod init;
pub mod interrupt;
pub mod json;
pub mod k8s;
pub mod k8s_lua;
pub mod load;
pub mod own_args;
pub mod profile;
pub mod prompt;
pub mod replay;
pub mod report;
pub mod report_compare;
pub mod run;
pub mod run_args;
pub mod run_segments;
pub mod segments_progress;
pub mod segments_store;
pub mod server;
pub mod sink;
pub mod sysbench;
pub mod tpcc;
pub mod worker;
pub mod worker_args;
pub mod worker_lua;

/// The live OpenMetrics endpoint (`--metrics-addr`), in its own crate.
pub use pgrig_metrics as metrics;

// The parser's `--metrics-linger` default is the live metrics' own (checked here, where both
// modules are named, so neither file imports the other).
const _: () = assert!(args::DEFAULT_LINGER_S == metrics::DEFAULT_LINGER_S);
