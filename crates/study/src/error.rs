//! The study layer's one error type. Every message says what failed and, where it can, where
//! (file, line, column, key) and what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// The study file could not be read.
    #[error(
        "could not read study file \"{path}\": {}",
        pgrig_wire::strerror(source)
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The study file is not valid: syntax, unknown key, wrong type, bad value.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A setup file cannot be split into statements, or one of them failed on the server
    /// (`message` then has the server's error in libpq's layout).
    #[error("setup file {file}:{line}: {message}")]
    Setup {
        file: String,
        line: usize,
        message: String,
    },
    /// A data file of the dataset (a CSV file) could not be loaded: `place` is the file, with
    /// `:line` when the failing record is known; `message` the server's or the reader's text.
    #[error("{place}: {message}")]
    Data { place: String, message: String },
    /// The study asks for something that cannot be done on this target or machine.
    #[error("{0}")]
    Refused(String),
    /// Starting, configuring or restarting the throwaway server failed.
    #[error("throwaway server: {0}")]
    Server(String),
    /// A statement on the target failed.
    #[error("{context}: {message}")]
    Sql { context: String, message: String },
    /// The benchmark engine (or init) failed.
    #[error("{0}")]
    Engine(String),
    /// The results store failed.
    #[error("results store \"{path}\": {message}")]
    Store { path: String, message: String },
    /// The study was interrupted (Ctrl-C); finished runs are stored.
    #[error("interrupted; finished runs are stored, run the study again to resume")]
    Interrupted,
    #[error("{0}")]
    Other(String),
}

impl StudyError {
    pub fn sql(context: impl Into<String>, e: impl std::fmt::Display) -> StudyError {
        StudyError::Sql {
            context: context.into(),
            message: e.to_string(),
        }
    }

    /// A store error; the store's URL and the message are shown with passwords masked.
    pub fn store(path: impl Into<String>, e: impl std::fmt::Display) -> StudyError {
        StudyError::Store {
            path: pgrig_wire::mask_passwords(&path.into()),
            message: pgrig_wire::mask_passwords(&e.to_string()),
        }
    }
}

impl From<pgrig_results::StoreError> for StudyError {
    fn from(e: pgrig_results::StoreError) -> StudyError {
        StudyError::Store {
            path: e.path,
            message: e.message,
        }
    }
}

impl From<pgrig_engine::EngineError> for StudyError {
    fn from(e: pgrig_engine::EngineError) -> Self {
        let text: Vec<String> = e.lines.iter().map(|(_, l)| l.clone()).collect();
        StudyError::Engine(text.join("\n"))
    }
}

/// Line and column (both 1-based, column in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = match before.rfind('\n') {
        Some(i) => before[i + 1..].chars().count() + 1,
        None => before.chars().count() + 1,
    };
    (line, col)
}

/// `" (did you mean `duration`?)"` when a candidate is within two edits of `word`, else `""`.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|c| (pgrig_engine::error::edit_distance(word, c), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_suggests_the_nearest_key() {
        assert_eq!(
            did_you_mean("duraton", ["clients", "duration"]),
            " (did you mean `duration`?)"
        );
        assert_eq!(did_you_mean("zzz", ["clients", "duration"]), "");
    }

    #[test]
    fn line_col_counts_from_one() {
        let t = "a = 1\nbb = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 8), (2, 3));
        assert_eq!(line_col(t, 999), (3, 1));
    }
}
