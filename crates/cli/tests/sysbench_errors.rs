//! Bad input through the `sysbench` link against the real sysbench 1.0.20: unknown tests,
//! options and commands, bad option values, `prepare` over existing tables, `run` on missing
//! tables or on more tables than were prepared, a refused connection. Standard output,
//! standard error and exit status must be sysbench's apart from numbers, the banner's "using"
//! and the Lua script locations in its messages; where sysbench crashes (a segfault after its
//! messages, a Lua error), pgrig's deliberate answer is spelled out here.

use crate::sysbench_common;

use pgrig_testkit::{fresh_db, TestDb};
use sysbench_common::{normalise, pgrig, same, sysbench};

#[test]
fn command_line_errors_are_sysbenchs() {
    let db = fresh_db("sb_cmdline");
    for args in [
        &["nosuchtest", "run"][..],
        &["oltp_read_write", "--no-such-opt=1", "run"],
        &["--no-such-opt=1", "oltp_read_write", "run"],
        &["--skip_trx=maybe", "oltp_read_write", "run"],
        &["oltp_read_write", "run", "extra"],
        &["oltp_read_write", "frob"],
        &["oltp_read_write", "prewarm"],
        &["oltp_read_write"],
        &["bulk_insert"],
        &["bulk_insert", "help"],
        &["oltp_read_write", "--warmup-time=1", "run"],
        &["bulk_insert", "--any-option=1", "cleanup"],
    ] {
        same(&db, args);
    }
    // a value given apart from its option: sysbench's error, then a line naming the option
    let args = ["oltp_read_write", "--tables", "2", "run"];
    let (ours, theirs) = (pgrig(&db, &args), sysbench(&db, &args));
    assert_eq!((ours.code, &ours.stdout), (theirs.code, &theirs.stdout));
    assert_eq!(
        ours.stderr,
        format!(
            "{}pgrig: --tables takes its value after '=' (--tables=2); '2' was read as the command\n",
            theirs.stderr
        )
    );
}

#[test]
fn bad_general_option_values_are_sysbenchs() {
    let db = fresh_db("sb_values");
    for args in [
        &["--threads=abc", "oltp_read_write", "run"][..],
        &["--threads=0", "oltp_read_write", "run"],
        &["--time=x", "oltp_read_write", "run"],
        &["--percentile=101", "oltp_read_write", "run"],
        &["--histogram", "--percentile=0", "oltp_read_write", "run"],
        &["--rand-type=foo", "oltp_read_write", "run"],
        &["--pgsql-port=abc", "oltp_read_write", "run"],
        &["--db-ps-mode=xx", "oltp_read_write", "prepare"],
        &["--db-ps-mode=xx", "oltp_read_write", "run"],
    ] {
        same(&db, args);
    }
}

#[test]
fn a_bad_test_option_value_is_an_invalid_option() {
    // sysbench takes `--tables=abc` and fails later in Lua ("attempt to index a nil value");
    // pgrig refuses it as sysbench refuses a bad boolean.
    let db = fresh_db("sb_badint");
    let ours = pgrig(&db, &["oltp_read_write", "--tables=abc", "run"]);
    assert_eq!(ours.stderr, "invalid option: --tables=abc\n");
    assert_eq!(ours.code, Some(1));
    assert_eq!(normalise(&ours.stdout), "sysbench #.#.# (using ...)\n\n");
}

#[test]
fn prepare_over_existing_tables_fails_as_sysbench() {
    let db = fresh_db("sb_exists");
    let args = [
        "oltp_read_write",
        "--tables=2",
        "--table-size=100",
        "prepare",
    ];
    assert!(sysbench(&db, &args).success());
    let ours = same(&db, &args);
    assert!(ours
        .stdout
        .contains("FATAL: PQexec() failed: 7 relation \"sbtest1\" already exists\n"));
}

#[test]
fn a_refused_connection_is_reported_as_sysbench_does() {
    let db = fresh_db("sb_conn");
    for cmd in ["prepare", "cleanup"] {
        let args = ["--pgsql-user=no_such_role", "oltp_read_write", cmd];
        let ours = same(&db, &args);
        assert!(ours.stdout.contains("role \"no_such_role\" does not exist"));
    }
    // Threaded commands: each thread reports its failure, sysbench's threads interleave their
    // lines and its logger folds a repeated line into "(last message repeated N times)", so
    // the distinct lines are compared.
    let sorted = |s: &str| {
        let mut v: Vec<String> = normalise(s)
            .lines()
            .filter(|l| !l.starts_with("(last message repeated"))
            .map(String::from)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let args = [
        "--pgsql-user=no_such_role",
        "--threads=2",
        "oltp_read_write",
        "run",
    ];
    let (ours, theirs) = (pgrig(&db, &args), sysbench(&db, &args));
    assert_eq!(
        sorted(&ours.stdout),
        sorted(&theirs.stdout),
        "{}",
        ours.stdout
    );
    assert_eq!(ours.code, theirs.code);
    // A threaded prepare prints the failure once per thread as sysbench does, but sysbench then
    // exits 0 as if it had prepared; pgrig exits 1.
    let args = [
        "--pgsql-user=no_such_role",
        "--threads=2",
        "oltp_read_write",
        "prepare",
    ];
    let (ours, theirs) = (pgrig(&db, &args), sysbench(&db, &args));
    assert_eq!(sorted(&ours.stdout), sorted(&theirs.stdout));
    assert_eq!((ours.code, theirs.code), (Some(1), Some(0)));
}

/// sysbench prints a `PQprepare() failed` block per statement and table, then "Threads
/// started!", then crashes (a segfault, status 139); pgrig prints the same blocks (in its
/// catalogue's order) and exits 1.
fn missing_tables(db: &TestDb, args: &[&str]) {
    let theirs = sysbench(db, args);
    let ours = pgrig(db, args);
    let blocks = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .split("FATAL: ")
            .skip(1)
            .map(|b| {
                b.trim_end()
                    .trim_end_matches("Threads started!")
                    .trim_end()
                    .to_string()
            })
            .collect();
        v.sort();
        v
    };
    assert!(!blocks(&ours.stdout).is_empty());
    assert_eq!(
        blocks(&ours.stdout),
        blocks(&theirs.stdout),
        "{}",
        ours.stdout
    );
    let head = |s: &str| normalise(s.split("FATAL: ").next().unwrap_or_default());
    assert_eq!(head(&ours.stdout), head(&theirs.stdout));
    assert_ne!(theirs.code, Some(0));
    assert_eq!(ours.code, Some(1));
}

#[test]
fn run_on_missing_tables_reports_every_statement() {
    let db = fresh_db("sb_missing");
    missing_tables(&db, &["oltp_read_write", "--tables=2", "--time=1", "run"]);
}

#[test]
fn run_on_more_tables_than_prepared_reports_the_missing_ones() {
    let db = fresh_db("sb_more");
    let prepared = sysbench(
        &db,
        &[
            "oltp_read_write",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
    );
    assert!(prepared.success(), "{}", prepared.stdout);
    missing_tables(&db, &["oltp_read_write", "--tables=3", "--time=1", "run"]);
}

#[test]
fn the_password_is_never_printed() {
    let db = fresh_db("sb_password");
    let secret = "s3cr3t-never-shown";
    let arg = format!("--pgsql-password={secret}");
    for cmd in ["prepare", "run", "cleanup", "help"] {
        let out = pgrig(
            &db,
            &[&arg, "--pgsql-user=no_such_role", "oltp_read_write", cmd],
        );
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{cmd}"
        );
    }
}

/// A server where `scramuser` needs its password.
fn password_server() -> &'static pgrig_testkit::Server {
    static SERVER: std::sync::OnceLock<pgrig_testkit::Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(pgrig_testkit::ServerOptions {
            hba: Some(vec![
                "local all scramuser scram-sha-256".into(),
                "local all all trust".into(),
            ]),
            bootstrap_sql: vec![format!(
                "CREATE ROLE scramuser SUPERUSER LOGIN PASSWORD '{SCRAM_SECRET}'"
            )],
            ..Default::default()
        })
    })
}

const SCRAM_SECRET: &str = "sb-secret-9813";

#[test]
fn pgsql_password_authenticates_and_a_wrong_one_is_refused_as_sysbench() {
    let db = pgrig_testkit::fresh_db_on(password_server(), "sb_scram");
    let run = |program: &std::path::Path, password: &str, cmd: &str| {
        let mut c = sysbench_common::command(
            program,
            &db,
            &[
                "--pgsql-user=scramuser",
                &format!("--pgsql-password={password}"),
                "oltp_point_select",
                "--table-size=100",
                "--events=10",
                "--time=0",
                cmd,
            ],
        );
        c.env_remove("PGPASSWORD")
            .env("PGPASSFILE", "/nonexistent/pgpass");
        pgrig_testkit::run(c)
    };
    let link = sysbench_common::link();
    for cmd in ["prepare", "run", "cleanup"] {
        let ours = run(link, SCRAM_SECRET, cmd);
        assert_eq!(ours.code, Some(0), "{cmd}: {}{}", ours.stdout, ours.stderr);
        assert!(!ours.stdout.contains(SCRAM_SECRET));
    }
    let (ours, theirs) = (
        run(link, "wrong-one", "run"),
        run(&sysbench_common::oracle(), "wrong-one", "run"),
    );
    assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
    assert_eq!(ours.code, theirs.code);
    assert!(ours.stdout.contains("password authentication failed"));
}
