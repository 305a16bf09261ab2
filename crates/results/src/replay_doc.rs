//! The replay document: what one `pgrig replay` measured — pgreplay's parse and replay
//! statistics, pgrig's lag summary and, with `--compare`, per normalised statement the recorded
//! and the replayed latency with the change and its verdict. Written by `pgrig replay --json`,
//! kept in the results store (`--store`) as a run whose `replay` part this is, and read back
//! through [`crate::RunView::replay`]. Every field reads leniently: a missing key or one of
//! another type leaves that field empty.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Version of the replay document's shape.
pub const REPLAY_SCHEMA_VERSION: u32 = 1;

fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

/// A whole replay document (the `--json` file): the figures every run has, and the replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayDocument {
    pub schema_version: u32,
    pub pgrig_version: String,
    /// `"replay"`: what made the run
    pub workload: String,
    /// statements (and prepares) answered per second of the replay
    pub tps: f64,
    pub duration_s: f64,
    /// statements answered without error (`ok`) and with one (`failed`)
    pub transactions: ReplayOutcomes,
    pub interrupted: bool,
    pub replay: ReplayDoc,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayOutcomes {
    pub ok: u64,
    pub failed: u64,
}

/// The replay's own part.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayDoc {
    /// the log (or replay) files, as named on the command line
    #[serde(deserialize_with = "lenient")]
    pub inputs: Vec<String>,
    /// pgreplay's parse statistics by name (`lines`, `simple`, `param`, `exec_named`, ...)
    #[serde(deserialize_with = "lenient")]
    pub parse: BTreeMap<String, u64>,
    #[serde(deserialize_with = "lenient")]
    pub figures: ReplayFigures,
    #[serde(deserialize_with = "lenient")]
    pub lag: LagSummary,
    /// `--compare`: the significance level and the smallest change of the median flagged
    #[serde(deserialize_with = "lenient")]
    pub alpha: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub min_change_pct: Option<f64>,
    /// `--compare`: per normalised statement, the slowest-getting first
    #[serde(deserialize_with = "lenient")]
    pub statements: Vec<StatementChange>,
}

/// pgreplay's replay statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayFigures {
    pub speed: f64,
    pub run_time_s: f64,
    /// items consumed ("calls to the server")
    pub calls: u64,
    pub connections: u64,
    pub max_connections: u64,
    /// SQL statements executed (results less prepares)
    pub statements: u64,
    pub errors: u64,
    /// largest lag behind schedule, whole seconds as pgreplay counts it
    pub max_lag_s: i64,
}

/// pgrig's lag report in sum.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LagSummary {
    pub items: u64,
    /// items consumed 1 ms or more after they were due
    pub late: u64,
    pub waiting_for_server_s: f64,
    pub replayer_busy_s: f64,
}

/// One side of a statement: executions timed, errors, median and p95 (ms).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SideFigures {
    pub count: u64,
    pub errors: u64,
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
}

/// An error of a statement, and how often each side had it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorChange {
    /// SQLSTATE (empty when only the log had it: logs do not say)
    pub sqlstate: String,
    pub message: String,
    pub recorded: u64,
    pub replayed: u64,
}

/// One normalised statement, recorded against replayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatementChange {
    #[serde(deserialize_with = "lenient")]
    pub statement: String,
    #[serde(deserialize_with = "lenient")]
    pub recorded: SideFigures,
    #[serde(deserialize_with = "lenient")]
    pub replayed: SideFigures,
    /// (replayed median − recorded median) / recorded median, %
    #[serde(deserialize_with = "lenient")]
    pub change_pct: Option<f64>,
    /// Mann–Whitney two-sided p-value of recorded against replayed latency
    #[serde(deserialize_with = "lenient")]
    pub p_value: Option<f64>,
    /// `+` slower, `-` faster, `~` no change shown, `?` too few executions to tell
    #[serde(deserialize_with = "lenient")]
    pub verdict: String,
    /// errors that occur on one side only (or more often on one side)
    #[serde(deserialize_with = "lenient")]
    pub errors: Vec<ErrorChange>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_another_type_stay_empty_and_the_rest_is_read() {
        let v = json!({"inputs": "a.log", "figures": {"calls": 3}, "statements": [
            {"statement": "select ?", "verdict": "+", "change_pct": 50.0,
             "recorded": {"count": 4, "median_ms": 1.0}, "errors": 7}]});
        let d: ReplayDoc = serde_json::from_value(v).unwrap();
        assert!(d.inputs.is_empty());
        assert_eq!(d.figures.calls, 3);
        let s = &d.statements[0];
        assert_eq!((s.verdict.as_str(), s.recorded.count), ("+", 4));
        assert!(s.errors.is_empty());
    }
}
