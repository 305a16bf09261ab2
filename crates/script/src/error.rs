//! Parse-time errors with pgbench's exact wording and layout (owned by the parser).

/// A script error; `Display` renders the text that follows `pgbench: error: ` (may span lines:
/// the offending command line and a caret line).
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptError {
    pub text: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for ScriptError {}
