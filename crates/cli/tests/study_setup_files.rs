//! Setup files run as `psql -f` runs them: statement by statement in autocommit (so `VACUUM`,
//! `CREATE INDEX CONCURRENTLY` and `CREATE DATABASE` work), with quotes, dollar quotes, comments
//! and `COPY … FROM stdin` data understood; a failing statement is reported with the file and
//! the line it starts on, and the server's message in libpq's layout.

use std::path::Path;

use pgrig_testkit::{run, CmdOutput, TestDb};

fn study(db: &TestDb, dir: &Path, setup: &str) -> CmdOutput {
    std::fs::write(dir.join("setup.sql"), setup).unwrap();
    std::fs::write(dir.join("q.sql"), "SELECT count(*) FROM items;\n").unwrap();
    std::fs::write(
        dir.join("s.toml"),
        format!(
            "name = \"setup\"\n[target]\nurl = \"{}\"\n[dataset]\nbuiltin = \"none\"\nsetup = [\"setup.sql\"]\n\
             [workload]\nscripts = [\"q.sql\"]\ntransactions = 2\n",
            db.url()
        ),
    )
    .unwrap();
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["study", "s.toml"]).current_dir(dir);
    run(c)
}

#[test]
fn setup_files_with_vacuum_concurrently_and_copy_run_statement_by_statement() {
    let db = pgrig_testkit::fresh_db("setup_psql");
    let dir = tempfile::tempdir().unwrap();
    let scratch = format!("{}_scratch", db.psql("SELECT current_database()"));
    let setup = format!(
        "-- a psql-style file\n\
         DROP TABLE IF EXISTS items;\n\
         CREATE TABLE items (id int PRIMARY KEY, note text);\n\
         COPY items (id, note) FROM stdin;\n\
         1\ta;b\n\
         2\t'quoted'\n\
         \\.\n\
         INSERT INTO items SELECT g, 'x;y' FROM generate_series(3, 100) g; /* ; */\n\
         CREATE INDEX CONCURRENTLY items_note ON items (note);\n\
         CREATE OR REPLACE FUNCTION bump(i int) RETURNS int LANGUAGE plpgsql AS $body$\n\
         BEGIN\n  RETURN i + 1;\nEND;\n$body$;\n\
         CREATE DATABASE {scratch};\n\
         DROP DATABASE {scratch};\n\
         VACUUM (ANALYZE) items"
    );
    let out = study(&db, dir.path(), &setup);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(db.psql("SELECT count(*) FROM items"), "100");
    assert_eq!(db.psql("SELECT note FROM items WHERE id = 1"), "a;b");
    assert_eq!(
        db.psql("SELECT indisvalid FROM pg_index WHERE indexrelid = 'items_note'::regclass"),
        "t"
    );
    assert_eq!(db.psql("SELECT bump(1)"), "2");
    assert_eq!(
        db.psql("SELECT vacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 'items'"),
        "t",
        "VACUUM ran"
    );
}

#[test]
fn a_failing_setup_statement_names_file_and_line() {
    let db = pgrig_testkit::fresh_db("setup_error");
    let dir = tempfile::tempdir().unwrap();
    let out = study(
        &db,
        dir.path(),
        "CREATE TABLE items (id int);\n\n-- next: a typo\nSELECT *\n  FROM no_such_table;\nSELECT 1;\n",
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "setup file ./setup.sql:4: ERROR:  relation \"no_such_table\" does not exist\nLINE 2:   FROM no_such_table;"
        ),
        "{}",
        out.stderr
    );
    // the statements before it ran, the one after did not matter
    assert_eq!(db.psql("SELECT count(*) FROM items"), "0");
}
