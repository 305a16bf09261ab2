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
pub mod sysbench;
pub mod tpcc;
pub mod ycsb;

use std::sync::Arc;

use pgrig_engine::document::RunDocument;
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
    /// The family's own report lines for a finished run (YCSB's `[READ], ...`, TPC-C's tpmC),
    /// printed after pgrig's summary.
    report: fn(&RunDocument, &Options) -> Vec<String>,
}

/// Every family, in the order `names` lists them.
const FAMILIES: &[Family] = &[
    Family {
        names: sysbench::names,
        build: sysbench::build,
        // sysbench's report layout is the `pgrig sysbench` command line's
        report: |_, _| Vec::new(),
    },
    Family {
        names: ycsb::names,
        build: ycsb::build,
        report: |doc, _| ycsb::summary_lines(doc),
    },
    Family {
        names: tpcc::names,
        build: tpcc::build,
        report: |doc, options| tpcc::metrics::lines_for(doc, options).unwrap_or_default(),
    },
];

/// Every native workload name.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().flat_map(|f| (f.names)()).collect()
}

/// Whether `name` is a native workload.
pub fn is_native(name: &str) -> bool {
    names().contains(&name)
}

/// The report lines workload `name`'s family adds to pgrig's summary of a finished run.
pub fn report_lines(name: &str, doc: &RunDocument, options: &Options) -> Vec<String> {
    FAMILIES
        .iter()
        .find(|f| (f.names)().contains(&name))
        .map(|f| (f.report)(doc, options))
        .unwrap_or_default()
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
