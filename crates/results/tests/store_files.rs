//! The SQLite results store as a file: created 0600 whatever the umask (its journal, WAL and
//! lock files too); read-only opening writes nothing; files that are not a pgrig store, or a
//! store of another schema version, are refused with a clear message. One test: it sets the
//! process umask.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pgrig_results::Store;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn err(r: Result<Store, pgrig_results::StoreError>) -> String {
    match r {
        Ok(_) => panic!("opened"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn store_files_are_private_checked_and_never_written_by_readers() {
    nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let p = path.to_str().unwrap();

    // created 0600 with umask 000, and so are the lock file and the journal
    let mut store = Store::open(p).unwrap();
    assert_eq!(mode(&path), 0o600);
    store.study_id("s", "s.toml", "name = \"s\"").unwrap();
    assert_eq!(mode(&dir.path().join("r.db.lock")), 0o600);
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("BEGIN IMMEDIATE; INSERT INTO meta VALUES ('x', 'y');")
        .unwrap();
    assert_eq!(mode(&dir.path().join("r.db-journal")), 0o600);
    raw.execute_batch(
        "ROLLBACK; PRAGMA journal_mode = WAL; BEGIN IMMEDIATE; INSERT INTO meta VALUES ('x', 'y');",
    )
    .unwrap();
    assert_eq!(mode(&dir.path().join("r.db-wal")), 0o600);
    assert_eq!(mode(&dir.path().join("r.db-shm")), 0o600);
    raw.execute_batch("ROLLBACK; PRAGMA journal_mode = DELETE;")
        .unwrap();
    drop(raw);

    // (a second process running the same study is refused: crates/cli/tests/study_stores.rs)
    drop(store);

    // readers: nothing changes on disk
    let before = std::fs::read(&path).unwrap();
    let mut r = Store::open_existing(p).unwrap();
    assert_eq!(r.list(None).unwrap().len(), 0);
    assert!(r.export(None).unwrap().is_empty());
    drop(r);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // an empty file is not a store, and stays empty
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let e = err(Store::open_existing(empty.to_str().unwrap()));
    assert!(
        e.contains("not a pgrig results store (an empty database"),
        "{e}"
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);

    // not SQLite at all, or someone else's database
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "just some text, long enough to be read as a header...........\n".repeat(20),
    )
    .unwrap();
    for open in [Store::open, Store::open_existing] {
        let e = err(open(text.to_str().unwrap()));
        assert!(
            e.contains("not a pgrig results store (not an SQLite database)"),
            "{e}"
        );
    }
    let foreign = dir.path().join("app.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE users (id int);")
        .unwrap();
    for open in [Store::open, Store::open_existing] {
        let e = err(open(foreign.to_str().unwrap()));
        assert!(e.contains("it holds other tables: users"), "{e}");
    }

    // another schema version: older and newer
    for (v, who) in [("0", "an older"), ("2", "a newer")] {
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                [v],
            )
            .unwrap();
        for open in [Store::open, Store::open_existing] {
            let e = err(open(p));
            assert!(
                e.contains(&format!(
                    "written by {who} pgrig (store schema version {v}; this pgrig reads version 1)"
                )),
                "{e}"
            );
        }
    }
}
