//! pgrig's native workloads: each is a dataset (a [`pgrig_init::generic::LoadPlan`]) and a
//! transaction mix (a [`pgrig_engine::workload::Workload`]) built from named options, so the
//! same workload runs through its drop-in command line, `pgrig run --workload NAME` and study
//! files (every option a matrix key).
//!
//! * [`options`]: the `key=value` options every workload is built from (typed getters whose
//!   errors name the option).
//! * one module per family: `sysbench` (sysbench 1.0's OLTP tests), `ycsb` (core workloads
//!   A–F), `tpcc` (TPC-C).

pub mod options;
pub mod tpcc;

use std::sync::Arc;

use pgrig_engine::workload::Workload;
use pgrig_init::generic::LoadPlan;

pub use options::{OptionError, Options};

/// A workload ready to load and run.
pub struct Native {
    pub workload: Arc<dyn Workload>,
    /// The dataset the workload runs on (`prepare`).
    pub load: LoadPlan,
    /// Statements that remove the dataset (`cleanup`).
    pub cleanup: Vec<String>,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({})", self.workload.name())
    }
}

/// One family's entry: the workload names it answers to and how to build one.
struct Family {
    names: fn() -> Vec<&'static str>,
    build: fn(&str, &Options) -> Result<Native, OptionError>,
}

/// Every family, in the order `names` lists them.
const FAMILIES: &[Family] = &[Family {
    names: tpcc::names,
    build: tpcc::build,
}];

/// Every native workload name.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().flat_map(|f| (f.names)()).collect()
}

/// Whether `name` is a native workload.
pub fn is_native(name: &str) -> bool {
    names().contains(&name)
}

/// Builds workload `name` from `options`.
pub fn build(name: &str, options: &Options) -> Result<Native, OptionError> {
    for f in FAMILIES {
        if (f.names)().contains(&name) {
            return (f.build)(name, options);
        }
    }
    Err(OptionError::new(format!(
        "unknown workload \"{name}\" (native workloads: {})",
        names().join(", ")
    )))
}
