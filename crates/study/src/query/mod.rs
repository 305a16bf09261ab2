//! Query studies: a workload of one or more queries (`[workload] query`/`queries`) measured
//! execution by execution instead of transaction scripts. `exec` runs one execution on its own
//! session (client time, EXPLAIN JSON, server errors, timeout and cancel), `explain` turns the
//! EXPLAIN JSON into figures, `parallel` makes a point's parallel degree real, `cache` makes an
//! execution start cold, `run` is one stored run, `collectors` the study's collectors around
//! it, `record` its stored form and `summary` the table with speedup and efficiency.

pub mod cache;
pub mod collectors;
pub mod exec;
pub mod explain;
pub mod parallel;
pub mod record;
pub mod run;
pub use pgrig_results::query_summary as summary;

use crate::error::StudyError;
use crate::managed::Managed;
use crate::plan::{Plan, Point};
use crate::spec::Study;
use crate::workload::CacheState;

/// What the plan needs from this machine: dropping the page cache for a cold cache.
pub fn check_machine(study: &Study, plan: &Plan) -> Result<(), StudyError> {
    if plan
        .points
        .iter()
        .any(|p| p.workload.cache_state() == CacheState::Cold)
    {
        cache::permitted()
            .map_err(|m| study.error_at(study.key_at("cache"), format!("workload `cache`: {m}")))?;
    }
    Ok(())
}

/// Prepares the server for a query point (worker processes for its parallel degree; fresh
/// statistics for a point's `default_statistics_target` come from `crate::analyze` once its data
/// is in place).
pub fn prepare_point(m: &mut Managed, point: &Point) -> Result<(), StudyError> {
    if !point.workload.is_query() {
        return Ok(());
    }
    // `default_statistics_target`: the runner's ANALYZE (`crate::analyze`), after the data
    parallel::prepare_server(m, point)
}
