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

impl Native {
    /// Loads the dataset through the parallel loader (`jobs` 0: as many as useful): its tables,
    /// rows and keys, after its cleanup (the tables dropped) when `replacing`.
    pub fn load(
        &self,
        conn: &pgrig_engine::config::ConnArgs,
        replacing: bool,
        sink: &dyn pgrig_engine::sink::Sink,
        stop: &pgrig_engine::StopHandle,
    ) -> Result<pgrig_init::generic::LoadReport, pgrig_engine::EngineError> {
        let cleanup: &[String] = if replacing { &self.cleanup } else { &[] };
        pgrig_init::generic::load_replacing(conn, cleanup, &self.load, 0, sink, stop)
    }
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
    /// The family's figures as JSON (the run document's `workload_figures`), if it has any.
    figures: Option<fn(&RunDocument, &Options) -> Option<serde_json::Value>>,
    /// The family's consistency checks after a run (TPC-C's conditions), if it has any.
    consistency: Option<ConsistencyCheck>,
}

/// A family's consistency checks on a database.
type ConsistencyCheck = fn(&pgrig_wire::Config) -> Result<Vec<Check>, String>;

/// One consistency check after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// what it checks (`3.3.2.1`)
    pub name: String,
    pub passed: bool,
    /// the report line (with the offending keys when it failed)
    pub line: String,
}

/// Every family, in the order `names` lists them.
const FAMILIES: &[Family] = &[
    Family {
        names: sysbench::names,
        build: sysbench::build,
        // sysbench's report layout is the `pgrig sysbench` command line's
        report: |_, _| Vec::new(),
        figures: None,
        consistency: None,
    },
    Family {
        names: ycsb::names,
        build: ycsb::build,
        report: |doc, _| ycsb::summary_lines(doc),
        figures: None,
        consistency: None,
    },
    Family {
        names: tpcc::names,
        build: tpcc::build,
        report: |doc, options| tpcc::report::lines_for(doc, options).unwrap_or_default(),
        figures: Some(tpcc::report::json_for),
        consistency: Some(tpcc_consistency),
    },
];

/// TPC-C's conditions 1–10 and 12 (11 holds only right after the load).
fn tpcc_consistency(config: &pgrig_wire::Config) -> Result<Vec<Check>, String> {
    let outcomes = tpcc::check::run(config, false).map_err(|e| e.to_string())?;
    Ok(outcomes
        .iter()
        .map(|o| Check {
            name: format!("3.3.2.{}", o.condition.number),
            passed: o.passed(),
            line: o.line(),
        })
        .collect())
}

/// Runs workload `name`'s consistency checks on the database `conninfo` names; `None` when
/// its family has none.
pub fn consistency(name: &str, conninfo: &str) -> Option<Result<Vec<Check>, String>> {
    let family = FAMILIES.iter().find(|f| (f.names)().contains(&name))?;
    let check = family.consistency?;
    let args = pgrig_wire::ConnArgs {
        dbname: Some(conninfo.to_string()),
        ..Default::default()
    };
    Some(
        pgrig_wire::Config::from_args(&args, "pgrig")
            .map_err(|e| e.to_string())
            .and_then(|c| check(&c)),
    )
}

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

/// Workload `name`'s own figures of a finished run as JSON (TPC-C's NOPM, TPM, efficiency,
/// limits), for the run document's `workload_figures`.
pub fn figures_json(name: &str, doc: &RunDocument, options: &Options) -> Option<serde_json::Value> {
    let family = FAMILIES.iter().find(|f| (f.names)().contains(&name))?;
    (family.figures?)(doc, options)
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
