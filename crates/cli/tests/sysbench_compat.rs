//! The command lines sysbench 1.0.20 takes beyond a bundled test's name, through the
//! `sysbench` link against the real sysbench on the same server: a script path naming a bundled
//! test, custom Lua scripts (run by pgrig's Lua runtime), the deprecated aliases'
//! warnings, sysbench 0.5 command lines (sysbench's error, then a hint), SQL errors on the
//! non-prepared path (sysbench's driver lines, no report), select_random_* with `--tables=3`
//! (refused in cleanup only) and a negative `--table-size` (an empty table).

use crate::sysbench_common;

use std::path::Path;

use pgrig_testkit::{fresh_db, run, CmdOutput, TestDb};
use sysbench_common::{command, line_set, link, normalise, oracle, pgrig, same, sysbench};

/// `program ARGS` run in directory `dir`.
fn run_in(program: &Path, db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = command(program, db, args);
    c.current_dir(dir);
    run(c)
}

#[test]
fn a_path_to_a_bundled_script_runs_that_test() {
    let db = fresh_db("sb_path");
    let theirs_db = fresh_db("sb_path_sysbench");
    let path = "/usr/share/sysbench/oltp_point_select.lua";
    assert!(Path::new(path).exists(), "sysbench's scripts are installed");
    for cmd in ["prepare", "cleanup"] {
        let args = [path, "--table-size=100", cmd];
        let (ours, theirs) = (pgrig(&db, &args), sysbench(&theirs_db, &args));
        assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
        assert_eq!(
            (ours.code, theirs.code),
            (Some(0), Some(0)),
            "{}",
            ours.stdout
        );
    }
    // ./oltp_read_only.lua: a copy of the bundled script in the current directory
    let dir = std::env::temp_dir().join(format!("pgrig-sb-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        "/usr/share/sysbench/oltp_read_only.lua",
        dir.join("oltp_read_only.lua"),
    )
    .unwrap();
    let prepare = ["./oltp_read_only.lua", "--table-size=100", "prepare"];
    let ours = run_in(link(), &db, &dir, &prepare);
    assert_eq!(ours.code, Some(0), "{}{}", ours.stdout, ours.stderr);
    let args = [
        "./oltp_read_only.lua",
        "--table-size=100",
        "--events=20",
        "--time=0",
        "run",
    ];
    let (ours, theirs) = (
        run_in(link(), &db, &dir, &args),
        run_in(&oracle(), &db, &dir, &args),
    );
    assert_eq!(
        (ours.code, theirs.code),
        (Some(0), Some(0)),
        "{}",
        ours.stdout
    );
    let line = |o: &CmdOutput, label: &str| {
        o.stdout
            .lines()
            .find(|l| l.contains(label))
            .map(String::from)
    };
    for label in ["total number of events:", "read:", "other:"] {
        assert_eq!(line(&ours, label), line(&theirs, label), "{label}");
    }
    assert!(ours.stdout.contains("read:                            280"));
    // a path to a script that does not exist: sysbench's error
    same(&db, &["/nowhere/oltp_read_only.lua", "run"]);
    same(&db, &["oltp_point_select.lua", "run"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_custom_lua_script_runs_as_sysbench_runs_it() {
    let db = fresh_db("sb_custom");
    let dir = std::env::temp_dir().join(format!("pgrig-sb-custom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("my.lua"),
        "function prepare() print('prepared by my.lua') end\nfunction event() end\n",
    )
    .unwrap();
    let theirs = run_in(&oracle(), &db, &dir, &["./my.lua", "prepare"]);
    assert!(
        theirs.stdout.contains("prepared by my.lua"),
        "{}",
        theirs.stdout
    );
    // by path, and by name (my.lua in the current directory)
    for arg in ["./my.lua", "my"] {
        let ours = run_in(link(), &db, &dir, &[arg, "prepare"]);
        assert_eq!(ours.code, Some(0), "{}{}", ours.stdout, ours.stderr);
        assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deprecated_aliases_warn_as_sysbench() {
    let db = fresh_db("sb_deprecated");
    for args in [
        &[
            "--num-threads=2",
            "--max-time=1",
            "--max-requests=5",
            "--tx-rate=3",
            "oltp_point_select",
            "cleanup",
        ][..],
        // at their defaults they are not in use: no warning
        &[
            "--num-threads=1",
            "--max-requests=0",
            "oltp_point_select",
            "cleanup",
        ],
        &["--test=oltp_point_select", "--max-time=2", "cleanup"],
    ] {
        let out = same(&db, args);
        assert_eq!(out.code, Some(0));
    }
    let out = pgrig(
        &db,
        &[
            "--max-time=1",
            "--tx-rate=3",
            "oltp_point_select",
            "cleanup",
        ],
    );
    assert!(out.stdout.starts_with(
        "WARNING: --max-time is deprecated, use --time instead\nWARNING: --tx-rate is deprecated, use --rate instead\nsysbench 1.0.20"
    ));
}

#[test]
fn a_sysbench_0_5_command_line_gets_sysbenchs_error_then_a_hint() {
    let db = fresh_db("sb_legacy");
    let args = [
        "--test=/usr/share/doc/sysbench/tests/db/oltp.lua",
        "--oltp-tables-count=250",
        "--oltp-table-size=25000",
        "--num-threads=8",
        "--max-time=60",
        "--max-requests=0",
        "run",
    ];
    let (ours, theirs) = (pgrig(&db, &args), sysbench(&db, &args));
    assert_eq!(ours.stderr, theirs.stderr);
    assert_eq!(ours.code, theirs.code);
    assert_eq!(ours.code, Some(1));
    let hint = "HINT: this is a sysbench 0.5 command line; in sysbench 1.0 (and pgrig) it is: sysbench oltp_read_write --tables=250 --table-size=25000 --threads=8 --time=60 run\n";
    // sysbench's lines, then where pgrig looked and where 0.5's scripts come from, then the hint
    let ours_out = normalise(&ours.stdout);
    assert!(
        ours_out.starts_with(&normalise(&theirs.stdout)),
        "{ours_out}"
    );
    assert!(
        ours_out.contains("NOTE: no file answered at: /usr/share/doc/sysbench/tests/db/oltp.lua\n"),
        "{ours_out}"
    );
    assert!(ours_out.contains("tests/include/oltp_legacy"), "{ours_out}");
    assert!(ours.stdout.ends_with(hint), "{}", ours.stdout);
    // the docs' 0.5 example: the places searched and where the scripts are
    let out = pgrig(
        &db,
        &[
            "--test=oltp_legacy/oltp.lua",
            "--oltp-tables-count=8",
            "run",
        ],
    );
    assert_eq!(out.code, Some(1));
    assert!(
        out.stdout
            .contains("NOTE: no file answered at: oltp_legacy/oltp.lua\n"),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("akopytov/sysbench/tree/1.0.20/tests/include/oltp_legacy"));
    // write-only runs: oltp_write_only
    let out = pgrig(
        &db,
        &[
            "--test=tests/db/oltp.lua",
            "--oltp-write-only=on",
            "--oltp-table-size=10",
            "prepare",
        ],
    );
    assert!(
        out.stdout
            .ends_with("it is: sysbench oltp_write_only --table-size=10 prepare\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn sql_errors_without_prepared_statements_are_sysbenchs_lines_and_no_report() {
    let db = fresh_db("sb_sqlerr");
    for args in [
        &[
            "--db-ps-mode=disable",
            "--threads=2",
            "oltp_read_write",
            "--time=2",
            "run",
        ][..],
        &["--threads=2", "oltp_insert", "--time=2", "run"],
        &[
            "--db-ps-mode=disable",
            "oltp_point_select",
            "--time=2",
            "run",
        ],
    ] {
        let (ours, theirs) = (pgrig(&db, args), sysbench(&db, args));
        assert_eq!(
            line_set(&ours.stdout),
            line_set(&theirs.stdout),
            "{args:?}\n--- pgrig:\n{}--- sysbench:\n{}",
            ours.stdout,
            theirs.stdout
        );
        assert!(ours.stdout.contains("state = '42P01'"));
        assert!(!ours.stdout.contains("SQL statistics"));
        assert_eq!((ours.code, &ours.stderr), (theirs.code, &theirs.stderr));
        assert_eq!(ours.code, Some(1));
    }
}

#[test]
fn select_random_tests_with_three_tables_fail_in_cleanup_only() {
    for test in ["select_random_points", "select_random_ranges"] {
        let ours_db = fresh_db(&format!("sb_{test}_3_pgrig"));
        let theirs_db = fresh_db(&format!("sb_{test}_3_sysbench"));
        let both = |args: &[&str]| (pgrig(&ours_db, args), sysbench(&theirs_db, args));
        let (ours, theirs) = both(&[test, "--tables=3", "--table-size=100", "prepare"]);
        assert_eq!(
            (ours.code, theirs.code),
            (Some(0), Some(0)),
            "{}",
            ours.stdout
        );
        // the same lines (pgrig loads the tables in parallel: another order)
        let sorted = |s: &str| {
            let mut v: Vec<String> = normalise(s).lines().map(String::from).collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&ours.stdout), sorted(&theirs.stdout));
        let tables = "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sbtest%'";
        assert_eq!(ours_db.psql(tables), "3");
        assert_eq!(theirs_db.psql(tables), "3");
        let (ours, theirs) = both(&[
            test,
            "--tables=3",
            "--table-size=100",
            "--events=10",
            "--time=0",
            "run",
        ]);
        assert_eq!(
            (ours.code, theirs.code),
            (Some(0), Some(0)),
            "{}",
            ours.stdout
        );
        let cleanup = [test, "--tables=3", "cleanup"];
        let (ours, theirs) = both(&cleanup);
        assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
        assert_eq!((ours.code, theirs.code), (Some(1), Some(1)));
        assert_eq!(ours_db.psql(tables), "3", "cleanup dropped nothing");
    }
}

#[test]
fn a_negative_table_size_prepares_an_empty_table() {
    let db = fresh_db("sb_negative");
    let ours_db = fresh_db("sb_negative_pgrig");
    let args = ["oltp_point_select", "--table-size=-1", "prepare"];
    let theirs = sysbench(&db, &args);
    let ours = pgrig(&ours_db, &args);
    assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
    assert_eq!((ours.code, theirs.code), (Some(0), Some(0)));
    let rows = "SELECT count(*) FROM sbtest1";
    assert_eq!(ours_db.psql(rows), "0");
    assert_eq!(db.psql(rows), "0");
}

#[test]
fn verbosity_below_three_hides_sysbenchs_notices() {
    // sysbench's own bulk_insert test prepares and cleans up with --verbosity=1
    let db = fresh_db("sb_verbosity");
    let prepared = pgrig(&db, &["oltp_point_select", "--table-size=10", "prepare"]);
    assert!(prepared.success(), "{}", prepared.stdout);
    for args in [
        &[
            "--verbosity=2",
            "--events=5",
            "--time=0",
            "oltp_point_select",
            "--table-size=10",
            "run",
        ][..],
        &["--verbosity=1", "--max-time=1", "nosuchtest", "run"],
        &["--verbosity=1", "oltp_point_select", "cleanup"],
    ] {
        same(&db, args);
    }
}
