//! Snapshot tests of output formats: the one way to compare an output with its stored snapshot
//! (`tests/snapshots/NAME` of the crate under test) and, after a deliberate change, rewrite it:
//! `UPDATE_SNAPSHOTS=1 cargo test ...`, then review the diff.

use std::path::Path;

/// Compares `actual` with the snapshot file `dir/name` (rewritten instead under
/// `UPDATE_SNAPSHOTS=1`); a difference fails the test showing both.
pub fn check(dir: &Path, name: &str, actual: &str) {
    let path = dir.join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "snapshot {}: {e} (UPDATE_SNAPSHOTS=1 writes it); output:\n{actual}",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "snapshot {} differs; if intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}
