//! sysbench 1.0.20's OLTP family as native workloads: the 11 tests with sysbench's statements
//! (byte for byte as its pgsql driver sends them), per-event statement counts and order, its
//! options and defaults, random numbers, dataset and ignorable errors.
//!
//! * [`options`]: the option table (names, defaults, help) and [`Settings`].
//! * [`rand`]: the PRNG and `--rand-type` distributions; [`seeding`]: sysbench's seeds per
//!   thread (so a `--rand-seed` gives sysbench's numbers).
//! * [`sql`]: the statement texts and sysbench's read/write/other classes.
//! * [`workload`]: the catalogue and the clients' programs ([`shared`]: what they share);
//!   [`oltp`], [`special`] and [`bulk`]: the programs (bulk_insert: an event is a row, sent
//!   in sysbench's multi-row INSERTs).
//! * [`dataset`]: `prepare` (a `LoadPlan`; [`prepare_streams`]: its rows' random streams,
//!   sysbench's) and `cleanup`; [`test`](mod@test): the test names.
//! * [`report`], [`histogram`]: sysbench's run output from plain figures (the command
//!   line in pgrig-cli and the Lua scripts of pgrig-lua print it).
//!
//! `--db-ps-mode=disable` is the simple query mode ([`Settings::ps_disabled`]; the caller sets
//! the run's query mode): values are inlined as sysbench's client-side emulation writes them.

pub mod bulk;
pub mod dataset;
pub mod histogram;
pub mod oltp;
pub mod options;
pub mod prepare_streams;
pub mod rand;
pub mod report;
pub mod seeding;
pub mod shared;
pub mod special;
pub mod sql;
pub mod test;
pub mod workload;

use std::sync::Arc;

use crate::options::{OptionError, Options};
use crate::Native;

pub use options::{options_for, OptionGroup, OptionKind, OptionSpec, Settings};
pub use sql::{classify, nominal_class, returns_rows, QueryClass};
pub use test::{Test, TESTS};
pub use workload::SysbenchWorkload;

/// The test names (for the family table).
pub fn names() -> Vec<&'static str> {
    TESTS.to_vec()
}

/// The settings `options` give `test` (the caller reads `ps_disabled`, `threads`, ...).
pub fn settings(test: &str, options: &Options) -> Result<Settings, OptionError> {
    let t = Test::parse(test).ok_or_else(|| {
        OptionError::new(format!(
            "unknown sysbench test \"{test}\" (tests: {})",
            TESTS.join(", ")
        ))
    })?;
    Settings::parse(t, options)
}

/// Builds `test` from `options`: the workload, `prepare`'s plan and `cleanup`'s statements.
pub fn build(test: &str, options: &Options) -> Result<Native, OptionError> {
    let s = settings(test, options)?;
    Ok(Native {
        load: dataset::load_plan(&s),
        cleanup: dataset::cleanup(&s),
        workload: Arc::new(SysbenchWorkload::new(s)),
    })
}
