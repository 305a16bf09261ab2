//! What both results stores share (`sqlite_store`, `pg_store`, behind [`crate::store::Store`]):
//! the schema version and the refusal of another one, the run record they write and the row
//! they list, the hash that identifies a study's text, and private file creation.

use serde_json::Value;

use crate::error::StoreError;

/// The version of the store's tables this pgrig reads and writes (`meta.schema_version`).
pub const SCHEMA_VERSION: u32 = 1;

/// One finished run, ready to store.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub run_index: usize,
    pub point: Value,
    pub repetition: u32,
    pub round: u32,
    pub target: String,
    pub started_unix: f64,
    pub finished_unix: f64,
    pub tps: f64,
    /// The export document (the keys and more).
    pub result: Value,
    pub provenance: Value,
    pub series: Value,
    pub histogram: Value,
}

/// A stored run as `results list` shows it.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub id: i64,
    pub study: String,
    pub point: String,
    pub repetition: u32,
    pub round: u32,
    pub target: String,
    pub finished_at: String,
    pub tps: f64,
}

/// A store of another schema version is refused with what to do about it.
pub(crate) fn check_version(path: &str, version: i64) -> Result<(), StoreError> {
    let current = SCHEMA_VERSION as i64;
    if version == current {
        return Ok(());
    }
    let who = if version < current {
        "an older"
    } else {
        "a newer"
    };
    Err(StoreError::new(
        path,
        format!(
            "written by {who} pgrig (store schema version {version}; this pgrig reads version \
             {current}); use the pgrig that wrote it, or start a new store with --store"
        ),
    ))
}

/// Creates `path` empty and private (0600 whatever the umask) if it does not exist; returns
/// whether it did. An existing file is left as it is. Results stores, their lock files and
/// exports are created this way.
pub fn create_private(path: &std::path::Path) -> std::io::Result<bool> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(f) => f
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across builds and platforms.
pub fn text_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}
