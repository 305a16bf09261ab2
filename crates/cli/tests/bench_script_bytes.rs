//! What reaches the server is what the user wrote, byte for byte, as with pgbench 15: a Latin-1
//! script under `PGCLIENTENCODING=LATIN1` stores the same data, an invalid UTF-8 sequence fails
//! on the server, a script ends at its first NUL byte, and `-D` values, `\gset` results and
//! `\shell` arguments keep their bytes. Also: a `-l` log file that cannot be opened ends the run
//! before it starts.

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use pgrig_testkit::{fresh_db, run, CmdOutput, TestDb};

/// The pgbench-compatible programs: pgrig through a `pgbench` link, and the installed pgbench 15.
fn both(db: &TestDb, link: &tempfile::TempDir) -> [(&'static str, Command); 2] {
    let ours = link.path().join("pgbench");
    if !ours.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &ours).unwrap();
    }
    let oracle = db.pgbench();
    [("pgrig", db.command(ours)), ("pgbench 15", oracle)]
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

/// Runs `cmd` with `args` after emptying table `t`; returns the output and `t`'s rows as
/// UTF-8 bytes in hex (what the server stored).
fn run_and_read(db: &TestDb, mut cmd: Command, args: &[&OsStr]) -> (CmdOutput, String) {
    db.psql("TRUNCATE t");
    cmd.args(args);
    let out = run(cmd);
    let stored =
        db.psql("SELECT string_agg(encode(convert_to(x, 'UTF8'), 'hex'), ',' ORDER BY x) FROM t");
    (out, stored)
}

#[test]
fn latin1_script_stores_the_same_bytes_as_pgbench_in_every_mode() {
    let db = fresh_db("latin1_script");
    db.psql("CREATE TABLE t (x text)");
    let (dir, link) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let f = write(
        &dir,
        "latin1.sql",
        b"INSERT INTO t VALUES ('caf\xe9 \xff \xa4');\n",
    );
    for mode in ["simple", "extended", "prepared"] {
        let mut results = Vec::new();
        for (who, mut cmd) in both(&db, &link) {
            cmd.env("PGCLIENTENCODING", "LATIN1");
            let args = ["-n", "-t", "1", "-M", mode, "-f", &f].map(OsStr::new);
            let (out, stored) = run_and_read(&db, cmd, &args);
            assert_eq!(out.code, Some(0), "{who} -M {mode}: {}", out.stderr);
            results.push(stored);
        }
        // é, ÿ and ¤ in Latin-1, converted by the server to UTF-8
        assert_eq!(results[0], "636166c3a920c3bf20c2a4", "-M {mode}");
        assert_eq!(
            results[0], results[1],
            "-M {mode}: pgrig and pgbench stored different bytes"
        );
    }
}

#[test]
fn invalid_utf8_in_a_script_fails_on_the_server_like_pgbench() {
    let db = fresh_db("invalid_utf8_script");
    db.psql("CREATE TABLE t (x text)");
    let (dir, link) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let f = write(&dir, "bad.sql", b"INSERT INTO t VALUES ('caf\xe9');\n");
    for (who, cmd) in both(&db, &link) {
        let (out, stored) = run_and_read(&db, cmd, &["-n", "-t", "1", "-f", &f].map(OsStr::new));
        assert_eq!(out.code, Some(2), "{who}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("ERROR:  invalid byte sequence for encoding \"UTF8\": 0xe9 0x27 0x29"),
            "{who}: {}",
            out.stderr
        );
        assert_eq!(stored, "", "{who} stored a row");
    }
}

#[test]
fn a_script_ends_at_its_first_nul_byte_like_pgbench() {
    let db = fresh_db("nul_script");
    db.psql("CREATE TABLE t (x text)");
    let (dir, link) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let cut = write(
        &dir,
        "cut.sql",
        b"INSERT INTO t VALUES ('a');\0INSERT INTO t VALUES ('b');\n",
    );
    let empty = write(&dir, "empty.sql", b"\0SELECT 1;\n");
    for (who, cmd) in both(&db, &link) {
        let (out, stored) = run_and_read(&db, cmd, &["-n", "-t", "1", "-f", &cut].map(OsStr::new));
        assert_eq!(out.code, Some(0), "{who}: {}", out.stderr);
        assert!(
            out.stdout.contains("processed: 1/1"),
            "{who}: {}",
            out.stdout
        );
        assert_eq!(
            stored, "61",
            "{who}: only the statement before the NUL runs"
        );
    }
    for (who, mut cmd) in both(&db, &link) {
        cmd.args(["-n", "-t", "1", "-f", &empty]);
        let out = run(cmd);
        assert_eq!(out.code, Some(1), "{who}: {}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("empty command list for script \"{empty}\"")),
            "{who}: {}",
            out.stderr
        );
    }
}

#[test]
fn define_values_gset_results_and_shell_arguments_keep_their_bytes() {
    let db = fresh_db("variable_bytes");
    db.psql("CREATE TABLE t (x text)");
    let (dir, link) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let define = write(&dir, "define.sql", b"INSERT INTO t VALUES (:x);\n");
    let gset = write(
        &dir,
        "gset.sql",
        b"SELECT 'caf\xe9' AS v \\gset\nINSERT INTO t VALUES (:v);\n",
    );
    let shell_out = dir.path().join("shell.out");
    let shell = write(
        &dir,
        "shell.sql",
        format!("\\shell printf '%s' :y > {}\n", shell_out.display()).as_bytes(),
    );
    let x = OsStr::from_bytes(b"x='caf\xe9'");
    let y = OsStr::from_bytes(b"y=caf\xe9");
    let mut results = Vec::new();
    for (who, mut cmd) in both(&db, &link) {
        cmd.env("PGCLIENTENCODING", "LATIN1");
        let args = [
            OsStr::new("-n"),
            "-t".as_ref(),
            "1".as_ref(),
            "-D".as_ref(),
            x,
            "-f".as_ref(),
            define.as_ref(),
        ];
        let (out, from_define) = run_and_read(&db, cmd, &args);
        assert_eq!(out.code, Some(0), "{who} -D: {}", out.stderr);
        results.push(from_define);
    }
    for (who, mut cmd) in both(&db, &link) {
        cmd.env("PGCLIENTENCODING", "LATIN1");
        let args = ["-n", "-t", "1", "-M", "prepared", "-f", &gset].map(OsStr::new);
        let (out, from_gset) = run_and_read(&db, cmd, &args);
        assert_eq!(out.code, Some(0), "{who} \\gset: {}", out.stderr);
        results.push(from_gset);
    }
    for (who, mut cmd) in both(&db, &link) {
        let _ = std::fs::remove_file(&shell_out);
        cmd.args([
            OsStr::new("-n"),
            "-t".as_ref(),
            "1".as_ref(),
            "-D".as_ref(),
            y,
            "-f".as_ref(),
            shell.as_ref(),
        ]);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{who} \\shell: {}", out.stderr);
        assert_eq!(
            std::fs::read(&shell_out).unwrap(),
            b"caf\xe9",
            "{who} \\shell"
        );
    }
    assert_eq!(
        results, ["636166c3a9"; 4],
        "[pgrig -D, pgbench -D, pgrig \\gset, pgbench \\gset]"
    );
}

#[test]
fn a_log_file_that_cannot_be_opened_ends_the_run_before_it_starts() {
    let db = fresh_db("log_unopenable");
    common::pgbench_init(&db, 1);
    let link = tempfile::tempdir().unwrap();
    for (who, mut cmd) in both(&db, &link) {
        cmd.args(["-n", "-S", "-t", "5", "-l", "--log-prefix=/nonexistent/x"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(1), "{who}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr
                .contains("error: could not open logfile \"/nonexistent/x.")
                && out.stderr.contains("\": No such file or directory"),
            "{who}: {}",
            out.stderr
        );
        assert!(
            !out.stdout.contains("processed"),
            "{who} reported a run:\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_script_error_quotes_the_scripts_bytes_like_pgbench() {
    let db = fresh_db("error_bytes");
    let (dir, link) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let f = write(&dir, "bad.sql", b"\\set x caf\xe9 +\n");
    let stderr: Vec<Vec<u8>> = both(&db, &link)
        .into_iter()
        .map(|(who, mut cmd)| {
            let out = cmd.args(["-n", "-t", "1", "-f", &f]).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{who}");
            out.stderr
        })
        .collect();
    let expected = [
        format!("pgbench: error: {f}:1: unexpected function name (caf").as_bytes(),
        b"\xe9) in command \"set\"\n\\set x caf\xe9 +\n          ^ error found here\n",
    ]
    .concat();
    assert_eq!(stderr[1], expected, "pgbench 15's message changed?");
    assert_eq!(stderr[0], stderr[1], "pgrig's bytes differ from pgbench's");
}

#[test]
fn a_log_prefix_that_is_not_utf8_names_the_log_file_with_its_bytes() {
    let db = fresh_db("log_prefix_bytes");
    common::pgbench_init(&db, 1);
    let link = tempfile::tempdir().unwrap();
    for (who, mut cmd) in both(&db, &link) {
        let dir = tempfile::tempdir().unwrap();
        let mut prefix = b"--log-prefix=".to_vec();
        prefix.extend_from_slice(dir.path().as_os_str().as_bytes());
        prefix.extend_from_slice(b"/caf\xe9");
        cmd.args(["-n", "-S", "-t", "2", "-l"])
            .arg(OsStr::from_bytes(&prefix));
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{who}: {}", out.stderr);
        let names: Vec<Vec<u8>> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().as_bytes().to_vec())
            .collect();
        assert_eq!(names.len(), 1, "{who}: {names:?}");
        assert!(names[0].starts_with(b"caf\xe9."), "{who}: {names:?}");
    }
}

#[test]
fn a_pgdatabase_that_is_not_utf8_is_used_not_ignored() {
    let db = fresh_db("pgdatabase_bytes");
    common::pgbench_init(&db, 1);
    let link = tempfile::tempdir().unwrap();
    for (who, mut cmd) in both(&db, &link) {
        // a UTF-8 cluster has no database by that name: the run must fail, not use another one
        cmd.env("PGDATABASE", OsStr::from_bytes(b"caf\xe9"));
        cmd.args(["-n", "-S", "-t", "1"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(1), "{who}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("FATAL:  database \"caf")
                && out.stderr.contains("\" does not exist"),
            "{who}: {}",
            out.stderr
        );
    }
}
