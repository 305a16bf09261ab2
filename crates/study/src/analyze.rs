//! Settings the planner reads from the statistics, not from the session: after
//! `default_statistics_target` changes, the statistics must be gathered again for the change to
//! matter, so the runner runs `ANALYZE` on the target's database (the dataset's tables) once the
//! point's settings and data are in place, and the run's provenance says so (`analyze`).

use serde_json::{json, Value};

use crate::error::StudyError;
use crate::managed::Managed;

/// Settings whose change needs an ANALYZE before the planner sees it.
pub const NEEDS_ANALYZE: &[&str] = &["default_statistics_target"];

/// The point's settings among [`NEEDS_ANALYZE`], as `name = value`.
pub fn statistics_settings(settings: &[(String, String)]) -> Vec<String> {
    settings
        .iter()
        .filter(|(k, _)| NEEDS_ANALYZE.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect()
}

/// Runs `ANALYZE` when the point sets a statistics setting and the statistics were not
/// gathered under exactly these values since the data was (re-)created; `analyzed` remembers
/// the values of the last ANALYZE (cleared by the caller when the data is re-created). Returns
/// the provenance note of the ANALYZE in force, if any.
pub fn after_settings(
    m: &Managed,
    settings: &[(String, String)],
    analyzed: &mut Option<Vec<String>>,
) -> Result<Option<Value>, StudyError> {
    let wanted = statistics_settings(settings);
    if wanted.is_empty() {
        return Ok(None);
    }
    if analyzed.as_ref() != Some(&wanted) {
        let mut db = m.admin()?;
        db.query("ANALYZE")?;
        *analyzed = Some(wanted.clone());
    }
    Ok(Some(json!({
        "statement": "ANALYZE",
        "after": wanted,
        "why": "the planner sees a statistics setting only after the statistics are gathered again",
    })))
}
