//! The report layer's one error type: every message names what could not be read or written
//! (file and line where there is one) and what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input file is not what it should be: `FILE:LINE: message`.
    #[error("{file}:{line}: {message}")]
    Input {
        file: String,
        line: usize,
        message: String,
    },
    /// An input file could not be read at all.
    #[error("could not read \"{file}\": {message}")]
    Read { file: String, message: String },
    /// The results store failed (missing file, older schema, unreachable server).
    #[error(transparent)]
    Store(#[from] pgrig_results::StoreError),
    /// A selection names nothing that exists (unknown study or run id, empty store).
    #[error("{0}")]
    Selection(String),
    /// The report could not be written.
    #[error("could not write \"{}\": {}", path.display(), pgrig_text::strerror(source))]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Nothing in the input can be drawn.
    #[error("{0}")]
    Empty(String),
    /// The page would exceed `bound::MAX_PAGE_BYTES`.
    #[error("{0}")]
    TooLarge(String),
    /// A bad option value (`--metric`).
    #[error("{0}")]
    Usage(String),
}
