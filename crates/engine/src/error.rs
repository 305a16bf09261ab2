//! The engine's one error type: a run that could not start. It carries pgbench's diagnostic lines
//! (levels and texts) and the exit status pgbench would use.

use crate::sink::{Level, Sink};

#[derive(Debug, Clone, PartialEq)]
pub struct EngineError {
    pub lines: Vec<(Level, String)>,
    pub exit_code: i32,
}

impl EngineError {
    pub fn fatal(msg: impl Into<String>) -> Self {
        EngineError {
            lines: vec![(Level::Error, msg.into())],
            exit_code: 1,
        }
    }

    pub fn with(mut self, level: Level, msg: impl Into<String>) -> Self {
        self.lines.push((level, msg.into()));
        self
    }

    /// Prints the lines to `sink`; returns the exit status.
    pub fn report(&self, sink: &dyn Sink) -> i32 {
        for (level, l) in &self.lines {
            sink.message(*level, l);
        }
        self.exit_code
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (_, l)) in self.lines.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(l)?;
        }
        Ok(())
    }
}

impl std::error::Error for EngineError {}
