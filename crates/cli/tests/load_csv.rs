//! `pgrig load --csv DIR --schema FILE`: the files load into their tables as written (row counts
//! and a value with an embedded delimiter, quote and newline read back with psql), with the
//! COPY options given on the command line, and ANALYZE ran; a bad value exits 1 naming the
//! file and line.

use pgrig_testkit::{fresh_db, run, TestDb};

fn load(db: &TestDb, dir: &std::path::Path, extra: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.arg("load")
        .arg("--csv")
        .arg(dir.join("data"))
        .arg("--schema")
        .arg(dir.join("schema.sql"))
        .args(extra);
    run(c)
}

fn write(dir: &std::path::Path, files: &[(&str, &str)]) {
    std::fs::write(
        dir.join("schema.sql"),
        "create table a (id int, v text);\ncreate table b (id int, w text);\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("data")).unwrap();
    for (n, t) in files {
        std::fs::write(dir.join("data").join(format!("{n}.csv")), t).unwrap();
    }
}

#[test]
fn load_command_loads_a_csv_directory_with_the_given_options() {
    let db = fresh_db("load_csv");
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("a", "id|v\n1|'x|y ''q''\nz'\n2|-\n"),
            ("b", "id|w\n7|seven\n"),
        ],
    );
    let out = load(
        &db,
        dir.path(),
        &[
            "--header",
            "--delimiter",
            "|",
            "--quote",
            "'",
            "--null",
            "-",
        ],
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("loaded 2 file(s)"), "{}", out.stdout);
    assert_eq!(
        db.psql("select count(*), count(v) from a").trim(),
        "2|1",
        "the null string"
    );
    assert_eq!(
        db.psql("select v = E'x|y \\'q\\'\\nz' from a where id = 1")
            .trim(),
        "t"
    );
    assert_eq!(db.psql("select w from b").trim(), "seven");
    assert_eq!(
        db.psql("select count(*) from pg_stats where tablename in ('a', 'b')")
            .trim(),
        "4"
    );
}

#[test]
fn load_command_names_the_file_and_line_of_a_bad_value() {
    let db = fresh_db("load_csv_bad");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("a", "1,ok\n2,\"two\nlines\"\nthree,x\n")]);
    let out = load(&db, dir.path(), &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a.csv:4: invalid input syntax for type integer"),
        "{}",
        out.stderr
    );
}
