//! The results layer's one error type: a store that cannot be opened, read or written, naming
//! the store (passwords masked) and what went wrong.

/// A results store failed.
#[derive(Debug, thiserror::Error)]
#[error("results store \"{path}\": {message}")]
pub struct StoreError {
    /// the store as shown to people (`postgresql://` URLs with their password masked)
    pub path: String,
    pub message: String,
}

impl StoreError {
    /// Both parts are shown with their passwords masked.
    pub fn new(path: impl Into<String>, e: impl std::fmt::Display) -> StoreError {
        StoreError {
            path: pgrig_wire::mask_passwords(&path.into()),
            message: pgrig_wire::mask_passwords(&e.to_string()),
        }
    }
}
