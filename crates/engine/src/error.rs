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

/// Levenshtein distance in characters: how far a mistyped key or option is from a known one
/// (the one measure behind every "did you mean").
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
