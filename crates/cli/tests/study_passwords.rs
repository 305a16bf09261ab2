//! A password is never echoed or stored: malformed URLs given to `--store`, a study target or
//! `run --target` are shown with `user:****@` / `password=****`, and a password anywhere in a study
//! file's text (a comment included) is masked in the stored study text.

use std::path::Path;

use pgrig_testkit::{run, CmdOutput, TestDb};

const SECRET: &str = "hunter2";

fn pgrig(db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    run(c)
}

fn assert_masked(out: &CmdOutput, what: &str) {
    assert!(
        !out.stdout.contains(SECRET) && !out.stderr.contains(SECRET),
        "{what} echoed the password:\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

const MALFORMED: &[&str] = &[
    "postgresql://bob:hunter2@[::1/db",
    "postgresql://bob:hunter2@h/db?password=hunter2=x",
    "postgresql://bob:hunter2%zz@h/db",
    "postgresql://bob:hunter2@h:99999/db",
    "host=h password=hunter2 port=x",
];

#[test]
fn malformed_urls_are_reported_with_the_password_masked() {
    let db = pgrig_testkit::fresh_db("pw_malformed");
    let dir = tempfile::tempdir().unwrap();
    for url in MALFORMED {
        let store = pgrig(&db, dir.path(), &["results", "list", "--store", url]);
        assert_eq!(store.code, Some(1), "{url}: {}", store.stderr);
        assert_masked(&store, &format!("results --store {url}"));

        let r = pgrig(&db, dir.path(), &["run", "--target", url, "-T", "1"]);
        assert_ne!(r.code, Some(0), "{url}: {}", r.stderr);
        assert_masked(&r, &format!("run --target {url}"));

        let toml =
            format!("name = \"pw\"\n[target]\nurl = '{url}'\n[workload]\ntransactions = 1\n");
        std::fs::write(dir.path().join("s.toml"), toml).unwrap();
        for extra in [&["--dry-run"][..], &[][..]] {
            let mut args = vec!["study", "s.toml"];
            args.extend_from_slice(extra);
            let s = pgrig(&db, dir.path(), &args);
            assert_eq!(s.code, Some(1), "{url} {extra:?}: {}", s.stderr);
            assert_masked(&s, &format!("study target {url} {extra:?}"));
            assert!(s.stderr.contains("s.toml:3:"), "{}", s.stderr);
        }
    }
    let good_sqlite = pgrig(&db, dir.path(), &["results", "list", "--store", "x.db"]);
    assert!(
        good_sqlite.stderr.contains("x.db"),
        "{}",
        good_sqlite.stderr
    );
}

#[test]
fn a_password_in_a_study_comment_is_masked_in_the_stored_text() {
    let db = pgrig_testkit::fresh_db("pw_comment");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.sql"), "SELECT 1;\n").unwrap();
    let study = format!(
        "name = \"pw\"\n\
         # formerly: postgresql://bob:{SECRET}@old-host/db and host=old password={SECRET}\n\
         [target]\nurl = \"{}\"\n\
         [dataset]\nbuiltin = \"none\"\n\
         [workload]\nscripts = [\"q.sql\"]\ntransactions = 3\n",
        db.url()
    );
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let out = pgrig(&db, dir.path(), &["study", "s.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    assert_masked(&out, "study");
    let shown = pgrig(&db, dir.path(), &["results", "show", "1"]);
    assert!(shown.success(), "{}", shown.stderr);
    assert_masked(&shown, "results show");
    assert!(
        shown
            .stdout
            .contains("postgresql://bob:****@old-host/db and host=old password=****"),
        "{}",
        shown.stdout
    );
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let p = f.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        if !p.ends_with("s.toml") {
            assert!(!text.contains(SECRET), "{} holds the password", p.display());
        }
    }
}
