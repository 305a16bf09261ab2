//! YCSB's core workloads A–F on pgrig's engine: `usertable` with YCSB's key format and random
//! field values, the operations read, update, insert, scan and read-modify-write as transaction
//! types named as YCSB reports them, in each workload's proportions, with YCSB's request
//! distributions (uniform, scrambled Zipfian θ = 0.99, latest, hotspot) and insert key order.
//!
//! * [`config`]: the options (YCSB's property names) and each workload's defaults.
//! * [`keys`], [`rng`], [`value`]: key names (FNV-64), random streams, field values.
//! * [`zipf`], [`choose`], [`sequence`]: YCSB's generators and the shared insert sequence.
//! * [`dataset`]: the table and its rows (a `LoadPlan`); [`sql`]: statements and catalogue.
//! * [`program`]: the workload and its per-client programs; [`summary`]: YCSB's summary lines
//!   rendered from a run document.
//!
//! Names: `ycsb-a` … `ycsb-f` (YCSB's `workloads/workloada` … `workloadf`) and `ycsb`
//! (`CoreWorkload`'s own defaults, for mixes set entirely by options). Only the dash spelling
//! is accepted: one name per workload in study files and stored results.

pub mod choose;
pub mod config;
pub mod dataset;
pub mod keys;
pub mod program;
pub mod rng;
pub mod sequence;
pub mod sql;
pub mod summary;
pub mod value;
pub mod zipf;

use std::sync::Arc;

use crate::options::{OptionError, Options};
use crate::Native;

pub use config::Config;
pub use program::Ycsb;
pub use summary::summary_lines;

/// The workload names this family answers to.
pub fn names() -> Vec<&'static str> {
    config::NAMES.to_vec()
}

/// Workload `name` with its dataset.
pub fn build(name: &str, options: &Options) -> Result<Native, OptionError> {
    let config = Config::from_options(name, options)?;
    Ok(Native {
        load: dataset::load_plan(&config),
        cleanup: vec![dataset::drop_table(&config)],
        workload: Arc::new(Ycsb::new(config)),
    })
}
