//! Library side of the `pgrig` binary: the pieces `main.rs` and the tests use.
//! `args`: pgbench-compatible command-line parsing for `pgrig bench`; `bench`, `run`, `server`:
//! the subcommands; `report`, `json`, `sink`, `interrupt`, `prompt`: their output, signal plumbing
//! and the password prompt.

pub mod args;
pub mod bench;
pub mod init;
pub mod interrupt;
pub mod json;
pub mod prompt;
pub mod report;
pub mod run;
pub mod server;
pub mod sink;
