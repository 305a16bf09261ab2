//! Run-time behaviours where `pgbench` (pgrig through a link of that name) must do exactly what
//! pgbench 15 does: same exit status, same report lines, same stderr. Each test runs the
//! installed pgbench 15 as the oracle on the same database.

use crate::common;

use common::*;
use pgrig_testkit::fresh_db;

fn scripts(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn script_ending_inside_a_transaction_block_counts_the_transaction_then_aborts() {
    let db = fresh_db("open_tx_end");
    let dir = scripts(&[("open.sql", "BEGIN;\nSELECT 1;\n")]);
    let (ours, _) = assert_same_run(&db, dir.path(), &["-n", "-t", "10", "-f", "open.sql"]);
    assert_eq!(ours.code, Some(2));
    assert_eq!(
        line_value(&ours.stdout, "number of transactions actually processed: "),
        Some("1/10")
    );
}

#[test]
fn gset_and_aset_inside_a_pipeline_abort_the_client() {
    let db = fresh_db("gset_pipeline");
    let dir = scripts(&[
        (
            "g.sql",
            "\\startpipeline\nSELECT 1 AS a \\gset\n\\endpipeline\n",
        ),
        (
            "a.sql",
            "\\startpipeline\nSELECT 1 AS a \\aset\n\\endpipeline\n",
        ),
    ]);
    for f in ["g.sql", "a.sql"] {
        let (ours, _) = assert_same_run(
            &db,
            dir.path(),
            &["-n", "-t", "2", "-M", "extended", "-f", f],
        );
        assert_eq!(ours.code, Some(2));
        assert!(
            ours.stderr.contains("is not allowed in pipeline mode"),
            "{}",
            ours.stderr
        );
    }
}

#[test]
fn assigning_an_invalid_variable_name_aborts_the_client() {
    let db = fresh_db("invalid_var_name");
    let cases = [
        "\\set . 1\n",
        "\\set 1a 1\n",
        "\\setshell . echo 1\n",
        "SELECT 1 AS a \\gset .\n",
        "SELECT 1 AS \"x y\" \\gset\n",
        "SELECT 1 AS a \\aset 1\n",
        "SELECT 1 AS a \\; SELECT 2 AS \"b c\" \\aset\n",
    ];
    for text in cases {
        let dir = scripts(&[("v.sql", text)]);
        let (ours, _) = assert_same_run(&db, dir.path(), &["-n", "-t", "2", "-f", "v.sql"]);
        assert_eq!(ours.code, Some(2), "{text}");
        assert!(
            ours.stderr.contains("invalid variable name"),
            "{text}: {}",
            ours.stderr
        );
    }
}

#[test]
fn run_without_a_successful_transaction_reports_failures_as_nan() {
    let db = fresh_db("nan_report");
    let dir = scripts(&[("zero.sql", "SELECT 1/0;\n")]);
    for extra in [&[][..], &["--failures-detailed", "--max-tries", "2"][..]] {
        let mut args = vec!["-n", "-t", "3", "-f", "zero.sql"];
        args.extend_from_slice(extra);
        let (ours, theirs) = assert_same_run(&db, dir.path(), &args);
        assert!(
            ours.stdout
                .contains("number of failed transactions: 0 (NaN%)"),
            "{}",
            ours.stdout
        );
        // the report stops there, as pgbench's does
        assert_eq!(ours.stdout.lines().last(), theirs.stdout.lines().last());
    }
}

#[test]
fn server_notices_and_warnings_reach_stderr_as_libpq_prints_them() {
    let db = fresh_db("notices");
    let dir = scripts(&[
        (
            "notice.sql",
            "DO $$ BEGIN RAISE NOTICE 'hello %', 1; \
             RAISE WARNING 'careful' USING DETAIL = 'some detail', HINT = 'some hint'; END $$;\n",
        ),
        (
            "pipeline.sql",
            "\\startpipeline\nSET LOCAL work_mem = '1MB';\nSELECT 1;\n\\endpipeline\n",
        ),
    ]);
    for mode in ["simple", "extended", "prepared"] {
        let (ours, _) = assert_same_run(
            &db,
            dir.path(),
            &["-n", "-t", "2", "-M", mode, "-f", "notice.sql"],
        );
        assert!(
            ours.stderr.starts_with(
                "NOTICE:  hello 1\nWARNING:  careful\nDETAIL:  some detail\nHINT:  some hint\n"
            ),
            "{}",
            ours.stderr
        );
    }
    let (ours, _) = assert_same_run(
        &db,
        dir.path(),
        &["-n", "-t", "1", "-M", "extended", "-f", "pipeline.sql"],
    );
    assert_eq!(
        ours.stderr,
        "WARNING:  SET LOCAL can only be used in transaction blocks\n"
    );
}

/// The backend running the statement gets SIGQUIT: it sends libpq a WARNING, then the
/// connection drops (the cluster restarts, so it is a private one).
#[test]
fn warning_sent_as_the_server_drops_the_connection_is_printed() {
    let server: &'static pgrig_testkit::Server = Box::leak(Box::new(
        pgrig_testkit::custom_cluster(pgrig_testkit::ServerOptions::default()),
    ));
    let db = pgrig_testkit::fresh_db_on(server, "quit_warning");
    let dir = scripts(&[("sleep.sql", "SELECT pg_sleep(30);\n")]);
    let run_and_quit = |mut cmd: std::process::Command| {
        cmd.args(["-n", "-t", "1", "-f", "sleep.sql"])
            .current_dir(dir.path());
        let child = std::thread::spawn(move || pgrig_testkit::run(cmd));
        let pid = wait_for_backend(&db);
        let killed = std::process::Command::new("kill")
            .args(["-QUIT", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.join().unwrap();
        wait_for_restart(&db);
        out
    };
    let ours = run_and_quit(pgbench_link(&db, dir.path()));
    let theirs = run_and_quit(db.pgbench());
    assert_eq!(ours.code, theirs.code);
    assert_eq!(ours.stderr, theirs.stderr);
    assert!(
        ours.stderr
            .starts_with("WARNING:  terminating connection because of unexpected SIGQUIT signal\n"),
        "{}",
        ours.stderr
    );
}

fn wait_for_backend(db: &pgrig_testkit::TestDb) -> String {
    for _ in 0..200 {
        if let Ok(pid) = db.try_psql(
            "select pid from pg_stat_activity where query like 'SELECT pg_sleep(30)%' \
             and pid <> pg_backend_pid()",
        ) {
            if !pid.trim().is_empty() {
                return pid.trim().to_owned();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the benchmark's statement never started");
}

fn wait_for_restart(db: &pgrig_testkit::TestDb) {
    for _ in 0..200 {
        if db.try_psql("select 1").is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the cluster did not come back after the crash restart");
}

#[test]
fn sql_errors_show_libpq_line_and_cursor_in_every_query_mode() {
    let db = fresh_db("error_cursor");
    let long = format!(
        "SELECT {} FROM nowhere_at_all WHERE zzz = 1;\n",
        (0..40)
            .map(|i| format!("x{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let wide_long = format!(
        "SELECT '{}', 'é', x FROM WHERE y = '{}';\n",
        "日本語".repeat(12),
        "漢字".repeat(20)
    );
    let dir = scripts(&[
        ("short.sql", "SELECT 1 FROM;\n"),
        ("second_line.sql", "\\set x 12345\nSELECT :x,\n\t2 FROM WHERE;\n"),
        ("long.sql", &long),
        ("compound.sql", "SELECT 1 \\; SELECT 2 FROM x WHERE;\n"),
        ("wide.sql", "SELECT '日本語', 'é' FROM;\n"),
        ("wide_long.sql", &wide_long),
        (
            "pipeline.sql",
            "\\startpipeline\nSELECT 1;\nSELECT 2 FROM WHERE;\nSELECT 3 FROM WHERE;\n\\endpipeline\n",
        ),
    ]);
    for f in [
        "short.sql",
        "second_line.sql",
        "long.sql",
        "compound.sql",
        "pipeline.sql",
    ] {
        for mode in ["simple", "extended", "prepared"] {
            if f == "pipeline.sql" && mode == "simple" {
                continue;
            }
            let (ours, _) =
                assert_same_run(&db, dir.path(), &["-n", "-t", "2", "-M", mode, "-f", f]);
            assert!(
                ours.stderr.contains("\nLINE "),
                "{f} {mode}: {}",
                ours.stderr
            );
            assert!(!ours.stderr.contains("at character"), "{}", ours.stderr);
        }
    }
}

#[test]
fn failed_prepare_is_reported_then_the_statement_is_executed_anyway() {
    let db = fresh_db("failed_prepare");
    let dir = scripts(&[("bad.sql", "SELECT 1 FROM;\n")]);
    let (ours, _) = assert_same_run(
        &db,
        dir.path(),
        &["-n", "-t", "2", "-M", "prepared", "-f", "bad.sql"],
    );
    let lines: Vec<&str> = ours.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "pgbench: error: ERROR:  syntax error at or near \";\""
    );
    assert_eq!(lines[1], "LINE 1: SELECT 1 FROM;");
    assert!(
        lines[3].ends_with("ERROR:  prepared statement \"P_0\" does not exist"),
        "{}",
        ours.stderr
    );
}

/// The distinct stderr lines, random values in SQL text replaced (`aid = N`).
fn debug_line_set(stderr: &str) -> std::collections::BTreeSet<String> {
    stderr
        .lines()
        .map(|l| match l.find("aid = ") {
            Some(at) => format!("{}aid = N", &l[..at]),
            None => l.to_owned(),
        })
        .collect()
}

#[test]
fn debug_prints_pgbench_connection_and_per_client_lines() {
    let db = fresh_db("debug_lines");
    pgbench_init(&db, 1);
    let dir = scripts(&[
        (
            "meta.sql",
            "\\set x 1 + 2\n\\if :x > 1\n\\set y 3\n\\elif :x < 0\n\\set y 4\n\\else\n\\set y 5\n\\endif\n\
             \\if false\n\\set y 6\n\\else\n\\set y 7\n\\endif\n\\sleep 1 ms\n\\setshell z echo 7\n\\shell true\n\
             SELECT :x AS a \\gset p_\nBEGIN;\nSELECT :y;\nEND;\n",
        ),
        (
            "pipeline.sql",
            "\\startpipeline\nSELECT 1;\nSELECT 2;\n\\endpipeline\nSELECT 3;\n",
        ),
        (
            "words.sql",
            "\\SET x 1 + \\\n 2\n\\sleep 10ms\n\\sleep :x us\n\\Shell  true   1\n",
        ),
    ]);
    let cases: [&[&str]; 6] = [
        &["--debug", "-n", "-t", "1", "-f", "words.sql"],
        &["--debug", "-S", "-c", "3", "-t", "2"],
        &["--debug", "-c", "2", "-t", "1", "-M", "prepared"],
        &["--debug", "-n", "-t", "2", "-f", "meta.sql"],
        &[
            "--debug",
            "-n",
            "-t",
            "2",
            "-M",
            "extended",
            "-f",
            "pipeline.sql",
        ],
        &[
            "--debug",
            "-n",
            "-t",
            "2",
            "-M",
            "prepared",
            "-f",
            "pipeline.sql",
        ],
    ];
    for args in cases {
        let (ours, theirs) = both(&db, dir.path(), args);
        assert_eq!(ours.code, Some(0), "{args:?}: {}", ours.stderr);
        assert_eq!(theirs.code, Some(0), "{args:?}: {}", theirs.stderr);
        let first = |s: &str| s.lines().next().unwrap_or("").to_owned();
        assert!(
            first(&ours.stderr).starts_with("pgbench: pghost: "),
            "{}",
            ours.stderr
        );
        assert_eq!(first(&ours.stderr), first(&theirs.stderr), "{args:?}");
        assert_eq!(
            debug_line_set(&ours.stderr),
            debug_line_set(&theirs.stderr),
            "{args:?}\n--- pgrig:\n{}--- pgbench:\n{}",
            ours.stderr,
            theirs.stderr
        );
    }
}

#[test]
fn without_debug_a_run_prints_nothing_on_stderr() {
    let db = fresh_db("debug_off");
    pgbench_init(&db, 1);
    let dir = scripts(&[]);
    let (ours, _) = assert_same_run(
        &db,
        dir.path(),
        &["-n", "-S", "-c", "2", "-t", "5", "-M", "prepared"],
    );
    assert_eq!(ours.stderr, "");
}
