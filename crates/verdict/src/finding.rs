//! What a check found: [`Finding`] (a named check, a [`Severity`], a one-line summary, the
//! [`Evidence`] with each figure's source, and what to do), serialised as the run document's
//! `findings` entries.

use serde::{Deserialize, Serialize};

/// How much a finding weighs on the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// worth knowing; the figures stand
    Info,
    /// the figures stand with a qualification the reader must see
    Warning,
    /// the figures do not measure what they claim to
    Invalid,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Invalid => "invalid",
        }
    }
}

/// One figure behind a finding, and where it was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// what the figure is (`server commits`, `steady window start`)
    pub what: String,
    pub value: f64,
    /// `tx`, `s`, `%`, `tx/s` ... (empty for a plain count)
    pub unit: String,
    /// where it comes from (`pg_stat_database.xact_commit`, `the client`, `per-second series`)
    pub source: String,
}

impl Evidence {
    pub fn new(what: &str, value: f64, unit: &str, source: &str) -> Evidence {
        Evidence {
            what: what.to_string(),
            value,
            unit: unit.to_string(),
            source: source.to_string(),
        }
    }
}

/// A named check's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// the check's stable name (`happened`, `warm_up`, `trend`, `too_short`, `errors`,
    /// `no_checkpoint`, `schedule_lag`, `config.max_connections` ...), as in docs/figures.md
    pub check: String,
    pub severity: Severity,
    /// one line a reader takes in at a glance
    pub summary: String,
    pub evidence: Vec<Evidence>,
    /// what to do about it
    pub advice: String,
}

impl Finding {
    pub fn new(check: &str, severity: Severity, summary: String, advice: &str) -> Finding {
        Finding {
            check: check.to_string(),
            severity,
            summary,
            evidence: Vec::new(),
            advice: advice.to_string(),
        }
    }

    /// Adds one figure of evidence.
    pub fn with(mut self, what: &str, value: f64, unit: &str, source: &str) -> Finding {
        self.evidence.push(Evidence::new(what, value, unit, source));
        self
    }

    /// The line printed after a report: `pgrig: warning [trend]: summary (advice)`.
    pub fn line(&self) -> String {
        format!(
            "pgrig: {} [{}]: {} ({})",
            self.severity.as_str(),
            self.check,
            self.summary,
            self.advice
        )
    }
}

/// The worst severity among `findings` (`None`: nothing found, a clean run).
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
