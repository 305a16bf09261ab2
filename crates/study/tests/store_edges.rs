//! Store edge cases (issue 21, item 11): the study lock holds through any name of the store
//! file, non-regular files are refused without waiting, an existing empty file is refused for
//! writing as documented, `--dry-run`'s check parses scripts, and OS errors read like C's.

use std::path::Path;
use std::time::{Duration, Instant};

use pgrig_study::Store;

fn err<T, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

fn held(first: &str, second: &str) {
    let mut a = Store::open(first).unwrap();
    a.study_id("s", "s.toml", "name = \"s\"").unwrap();
    let mut b = Store::open(second).unwrap();
    let e = err(b.study_id("s", "s.toml", "name = \"s\""));
    assert!(e.contains("is being run into this store by"), "{e}");
    // another study of the same store is not held
    b.study_id("t", "t.toml", "name = \"t\"").unwrap();
    // and a store asking again for the study it holds keeps it
    a.study_id("s", "s.toml", "name = \"s\"").unwrap();
    let e = err(b.study_id("s", "s.toml", "name = \"s\""));
    assert!(e.contains("is being run into this store by"), "{e}");
}

#[test]
fn the_study_lock_holds_through_a_hard_link_and_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("r.db");
    let s = store.to_str().unwrap();
    drop(Store::open(s).unwrap());
    let hard = dir.path().join("hard.db");
    std::fs::hard_link(&store, &hard).unwrap();
    held(s, hard.to_str().unwrap());
    let sym = dir.path().join("sym.db");
    std::os::unix::fs::symlink(&store, &sym).unwrap();
    held(sym.to_str().unwrap(), s);
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn a_fifo_as_store_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let got = [
            err(Store::open(&f)),
            err(Store::open_existing(&f)),
            err(Store::check(&f)),
        ];
        let _ = tx.send(got);
    });
    let got = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("opening a FIFO as the store hung");
    assert!(start.elapsed() < Duration::from_secs(20));
    for e in got {
        assert!(
            e.ends_with("a FIFO, not a regular file: a SQLite store is a regular file"),
            "{e}"
        );
    }
}

#[test]
fn an_existing_empty_file_is_refused_for_writing_and_left_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let p = empty.to_str().unwrap();
    for e in [err(Store::open(p)), err(Store::check(p))] {
        assert!(
            e.contains("not a pgrig results store (an empty database"),
            "{e}"
        );
    }
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // a new file is still created and used
    let new = dir.path().join("new.db");
    Store::open(new.to_str().unwrap()).unwrap();
    Store::open(new.to_str().unwrap()).unwrap();
}

#[test]
fn os_errors_read_like_strerror() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/r.db");
    let e = err(Store::open(missing.to_str().unwrap()));
    assert!(!e.contains("os error"), "{e}");
    assert!(e.ends_with("No such file or directory"), "{e}");
    let e = err(pgrig_study::spec::load(&dir.path().join("missing.toml")));
    assert!(!e.contains("os error"), "{e}");
    assert!(e.ends_with(": No such file or directory"), "{e}");
}

#[test]
fn the_dry_run_check_parses_scripts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.sql"), "select 1;\n\\set x (\n").unwrap();
    let text = "name = \"x\"\n[workload]\nscripts = [\"bad.sql\"]\n";
    let study = pgrig_study::spec::parse("s.toml", text).unwrap();
    let e = err(pgrig_study::check(study, dir.path()));
    assert!(e.starts_with("s.toml:3:"), "{e}");
    assert!(e.contains("bad.sql:2: syntax error"), "{e}");
}
