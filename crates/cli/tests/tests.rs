//! The CLI's integration tests: one test binary (ripgrep's `tests/tests.rs` pattern), so the
//! suite links once instead of once per file. Each file of this directory is a module named
//! after it (`bench_timers.rs` is `bench_timers`, its tests `bench_timers::NAME`); the helpers
//! every file may use are modules too: `common` (running pgrig and pgbench on a test database,
//! report normalisation, [`common::alone`]), `sysbench_common`, and `browser` (the report
//! crate's headless-Chromium oracle, read from `crates/report/tests/browser`).
//!
//! Running them:
//! - the whole suite: `cargo test -p pgrig-cli --test tests`
//! - one file: `cargo test -p pgrig-cli --test tests bench_timers::`
//! - one test: `cargo test -p pgrig-cli --test tests bench_timers::schedule_lag -- --exact` (or
//!   any part of its path)
//!
//! Adding a test file `foo.rs`: add `mod foo;` below (the list is alphabetical); in the file,
//! use `use crate::common;` (not `mod common;`), `use crate::sysbench_common;`, `use
//! crate::browser;`; a file of its own helpers goes in `foo/` as `mod helper;` inside `foo.rs`.
//! Cargo.toml has `autotests = false`, so a file not listed here is not built: the test
//! `every_test_file_is_a_module` below fails naming it.
//!
//! All tests share one process, and with it one shared cluster (`pgrig_testkit::cluster()`,
//! started on first use, removed when the process exits); each test makes its own database
//! (`fresh_db`), which keeps tests independent. So a test must not: change the process's
//! environment or current directory (set them on the `Command` it runs instead), install a
//! signal handler, or change the shared cluster for everyone (server settings, a restart, a
//! crash: take a `custom_cluster` for that, as `server_series` and `init_faults` do). Tests
//! whose figures suffer from other work on the machine (timers, CPU accounting, metrics
//! scrapes) take turns through `common::alone()`. Cargo runs the tests on as many threads as
//! there are cores (`--test-threads N` to change it).

mod bench_error_handling;
mod bench_faults;
mod bench_log_formats;
mod bench_memory;
mod bench_option_families;
mod bench_options;
mod bench_output;
mod bench_password_prompt;
mod bench_pgbench_parity;
mod bench_report;
mod bench_runtime_faults;
mod bench_script_bytes;
mod bench_scripts;
mod bench_self_check;
mod bench_timers;
mod bench_tls;
mod capture_replay;
mod client_cpu_proc;
mod compare_cli;
mod figures_pgbench;
mod fleet_hostile_rows;
mod fleet_k8s_manifest;
mod fleet_netns;
mod fleet_segments;
mod fleet_worker_trust;
mod init_faults;
mod init_parity;
mod init_statements;
mod k8s_lua;
mod k8s_lua_pods;
mod load_csv;
mod lua_interrupt;
mod lua_segments;
mod lua_segments_common;
mod lua_segments_intervals;
mod metrics_openmetrics;
mod native_run_study;
mod optimizer_example;
mod output_faults;
mod output_links;
mod parsers_proptest;
mod pgbench_tap;
mod profile;
mod query_profile;
mod replay_cli;
mod replay_compare;
mod replay_progress;
mod replay_workloads;
mod report_cli;
mod report_figures;
mod run_and_server;
mod run_document;
mod run_verdict;
mod secrets_in_output;
mod server_security;
mod server_series;
mod study_cli;
mod study_diagnostics;
mod study_examples;
mod study_lua_script;
mod study_output;
mod study_passwords;
mod study_pg_store;
mod study_query;
mod study_setup_files;
mod study_stores;
mod study_tcp;
mod study_versions;
mod sysbench_bulk_insert;
mod sysbench_compat;
mod sysbench_corpus;
mod sysbench_errors;
mod sysbench_failed_statements;
mod sysbench_ffi;
mod sysbench_live_metrics;
mod sysbench_lua;
mod sysbench_lua_calls;
mod sysbench_lua_document;
mod sysbench_lua_legacy_api;
mod sysbench_lua_limits;
mod sysbench_outputs;
mod sysbench_query_classes;
mod sysbench_rand_seed;
mod sysbench_render;
mod sysbench_report;
mod sysbench_shutdown;
mod sysbench_statements;
mod tpcc_cli;

// helpers shared by the files above
#[path = "../../report/tests/browser/mod.rs"]
mod browser;
mod common;
mod sysbench_common;

/// Every `.rs` file of this directory is a module of this binary (`autotests = false` would
/// otherwise leave a new file unbuilt and its tests silently not run).
#[test]
fn every_test_file_is_a_module() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = include_str!("tests.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&here).expect("the tests directory") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        let Some(module) = name.strip_suffix(".rs") else {
            continue;
        };
        if module != "tests" && !root.contains(&format!("\nmod {module};\n")) {
            missing.push(format!("{}", here.join(&*name).display()));
        }
    }
    assert!(
        missing.is_empty(),
        "test files not built into the test binary: {missing:?}; add `mod NAME;` to \
         crates/cli/tests/tests.rs and use `use crate::common;` in place of `mod common;`"
    );
}
