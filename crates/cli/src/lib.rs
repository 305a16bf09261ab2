//! Library side of the `pgrig` binary: the pieces tests (and `main.rs`) use.
//! `args`: pgbench-compatible command-line parsing for `pgrig bench`.

pub mod args;
