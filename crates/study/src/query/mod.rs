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
use crate::plan::{Plan, Point, TargetPlan};
use crate::spec::Study;
use crate::workload::{CacheState, WorkloadSpec};

/// Where a workload key of the study was written (its matrix values, else its `[workload]`
/// value).
fn key_at(study: &Study, key: &str) -> usize {
    match study.spec.matrix.get(key) {
        Some((_, v)) => v.span().start,
        None => study.spec.workload_value_offset(key),
    }
}

/// Plan-time checks of a query point on its target: a cold cache needs a throwaway server.
pub fn check_point(study: &Study, t: &TargetPlan, w: &WorkloadSpec) -> Result<(), StudyError> {
    if t.url.is_some() && w.cache_state() == CacheState::Cold {
        return Err(study.error_at(
            key_at(study, "cache"),
            format!(
                "workload `cache`: \"cold\" restarts the server and drops the OS page cache, which pgrig does only \
                 on a throwaway local server; target \"{}\" is external",
                t.name
            ),
        ));
    }
    Ok(())
}

/// What the plan needs from this machine: dropping the page cache for a cold cache.
pub fn check_machine(study: &Study, plan: &Plan) -> Result<(), StudyError> {
    if plan
        .points
        .iter()
        .any(|p| p.workload.cache_state() == CacheState::Cold)
    {
        cache::permitted().map_err(|m| {
            study.error_at(key_at(study, "cache"), format!("workload `cache`: {m}"))
        })?;
    }
    Ok(())
}

/// Prepares the server for a query point (worker processes for its parallel degree).
pub fn prepare_point(m: &mut Managed, point: &Point) -> Result<(), StudyError> {
    match point.workload.is_query() {
        true => parallel::prepare_server(m, point),
        false => Ok(()),
    }
}
