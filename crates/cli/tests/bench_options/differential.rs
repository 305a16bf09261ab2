//! Differential tests: the same command line through the installed pgbench 15 (testkit's oracle;
//! the tests fail without it) and our parser,
//! stderr lines (getopt's `argv[0]` normalised) and exit status compared. Cases where PG15 and
//! the newest wording differ (`-d`, PG17+ long options) live in `newest.rs`.

use std::process::{Command, Stdio};

use super::{parse_env, Action};

/// Extra environment for one case.
type Env<'a> = Vec<(&'a str, &'a str)>;

/// `/any/path/pgbench: msg` (getopt's argv[0]) -> `PROG: msg`.
fn normalise(line: &str) -> String {
    match line.find("pgbench: ") {
        Some(at) if line.starts_with('/') => format!("PROG: {}", &line[at + 9..]),
        _ => line.to_string(),
    }
}

/// What the real pgbench did: its stderr lines and exit code.
fn run_pgbench(args: &[&str], env: &[(&str, &str)]) -> (Vec<String>, i32) {
    let mut cmd = Command::new(pgrig_testkit::pgbench_oracle());
    cmd.args(args).stdin(Stdio::null());
    for var in [
        "PGBENCH_RANDOM_SEED",
        "POSIXLY_CORRECT",
        "PGDATABASE",
        "PGPORT",
        "PGSERVICE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PGHOST", "/nonexistent")
        .env("LC_ALL", "C")
        .env("PGCONNECT_TIMEOUT", "2");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run pgbench");
    let text = String::from_utf8_lossy(&out.stderr);
    let lines = text.lines().map(normalise).collect();
    (lines, out.status.code().unwrap_or(-1))
}

/// Compares one command line; returns a description of the mismatch, if any.
fn differential(args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let (theirs, their_code) = run_pgbench(args, env);
    let passed_parsing = theirs
        .iter()
        .any(|l| l.contains("could not create connection"));
    let mine = parse_env(args, env);
    let (my_lines, my_code, my_ok) = match &mine {
        Ok(p) => {
            let mut lines: Vec<String> = p.notices.clone();
            if let Action::BuiltinList(list) = &p.action {
                lines.extend(list.iter().cloned());
            }
            (
                lines,
                0,
                matches!(p.action, Action::Init(_) | Action::Bench(_)),
            )
        }
        Err((lines, code)) => (lines.iter().map(|l| normalise(l)).collect(), *code, false),
    };
    if passed_parsing {
        // pgbench accepted it: we must too, with the same notices before the connection error.
        let before: Vec<String> = theirs
            .iter()
            .take_while(|l| !l.contains("connection to server"))
            .cloned()
            .collect();
        if my_ok && before == my_lines {
            return None;
        }
        return Some(format!(
            "{args:?}: pgbench accepted ({before:?}), we gave {mine:?}"
        ));
    }
    if theirs == my_lines && their_code == my_code {
        return None;
    }
    Some(format!(
        "{args:?}:\n  pgbench ({their_code}): {theirs:?}\n  pgrig   ({my_code}): {my_lines:?}"
    ))
}

#[test]
fn option_errors_match_pgbench_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ok_sql = dir.path().join("ok.sql");
    std::fs::write(&ok_sql, "select 1;\n").unwrap();
    let ok0 = format!("{}@0", ok_sql.display());
    let dir_path = dir.path().display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        // getopt's own complaints
        vec!["-x"],
        vec!["-c"],
        vec!["--time"],
        vec!["--ti"],
        vec!["--foo"],
        vec!["--foo=bar"],
        vec!["--no-vacuum=3"],
        vec!["--no-vac=3"],
        vec!["--p"],
        vec!["--p=1"],
        vec!["--partition"],
        vec!["--r"],
        vec!["--s"],
        vec!["--l"],
        vec!["--in"],
        vec!["--f"],
        vec!["--log=1"],
        vec!["--clients=3"],
        vec!["-nx"],
        vec!["-:"],
        vec!["-W"],
        vec!["---x"],
        vec!["-n", "-t"],
        vec!["-c", "1", "--help"],
        vec!["-c", "1", "-V"],
        vec!["-c", "1", "--version"],
        vec!["-c", "1", "-?"],
        vec!["-x", "-j", "abc"],
        vec!["-h"],
        vec!["--host"],
        vec!["-ij3"],
        vec!["-Idtz", "-i"],
        vec!["--init-steps=dtz", "-i"],
        vec!["--log-p=x"],
        vec!["--builtin=list@1"],
        vec!["-b", "@"],
        vec!["--file="],
        vec!["-f", "a@b.sql"],
        // option_parse_int (pgbench 15..19 name the option -c/--clients)
        vec!["-c", "abc"],
        vec!["-c", "0"],
        vec!["-j", "0"],
        vec!["-j", "x"],
        vec!["-j", " 5x"],
        vec!["-t", "0"],
        vec!["-t", "1.5"],
        vec!["-T", "-1"],
        vec!["-T", "99999999999"],
        vec!["--trans=abc"],
        vec!["-P", "0"],
        vec!["-s", "0"],
        vec!["-s", ""],
        vec!["-s", "  "],
        vec!["-F", "5"],
        vec!["-F", "101"],
        vec!["-i", "--partitions=-1"],
        vec!["--aggregate-interval=0"],
        vec!["-j", "0", "-t", "0"],
        vec!["-t", "0", "-j", "0"],
        // atof options
        vec!["-R", "0"],
        vec!["-R", "abc"],
        vec!["-R", "-5"],
        vec!["-L", "0"],
        vec!["-L", "-1.5"],
        vec!["-l", "--sampling-rate=0"],
        vec!["-l", "--sampling-rate=1.5"],
        vec!["-l", "--sampling-rate=abc"],
        // -M, -D
        vec!["-M", "foo"],
        vec!["-M", "Simple"],
        vec!["--proto=prep"],
        vec!["-Dfoo"],
        vec!["-D", "=bar"],
        vec!["-D", "foo="],
        vec!["-D1x=3"],
        vec!["-D", "a-b=1"],
        // --random-seed
        vec!["--random-seed=abc"],
        vec!["--random-seed="],
        vec!["--random-seed= 5 "],
        vec!["--random-seed=0x10"],
        vec!["--random-seed=5", "-t", "0"],
        vec!["--random-seed=-1", "-t", "0"],
        vec!["--random-seed=99999999999999999999999", "-t", "0"],
        // init steps, partitions
        vec!["-i", "-I", "xyz"],
        vec!["-i", "-I", ""],
        vec!["-I", "dtx"],
        vec!["-i", "--partition-method=foo"],
        vec!["-i", "--partition-method=HASH"],
        vec!["--partitions=3"],
        // builtins and weights
        vec!["-b", "foo"],
        vec!["-b", "s"],
        vec!["-b", ""],
        vec!["-b", "tpcb@x"],
        vec!["-b", "tpcb@"],
        vec!["-b", "tpcb@-1"],
        vec!["-b", "tpcb@99999999999"],
        vec!["-b", "tpcb@99999999999999999999"],
        vec!["-b", "tpcb@0"],
        vec!["-b", "tpcb@0", "-b", "se@0"],
        vec!["--show-script=foo"],
        vec!["--show-script=s"],
        vec!["-b", "list", "-j", "abc"],
        vec!["-j", "abc", "-b", "list"],
        // files
        vec!["-f", "/nonexistent/x"],
        vec!["-f", &dir_path],
        vec!["-f", "/nonexistent@x"],
        vec!["-f", "/nonexistent@3"],
        vec!["-f", &ok0],
        // init/benchmark option families
        vec!["-i", "-j", "3"],
        vec!["-i", "-S"],
        vec!["-i", "--log-prefix=x"],
        vec!["-F", "50"],
        vec!["-q"],
        vec!["--foreign-keys"],
        vec!["--unlogged-tables", "-j", "2"],
        vec!["-i", "-n", "--random-seed=1"],
        // cross-option checks
        vec!["-t", "5", "-T", "5"],
        vec!["--sampling-rate=0.5"],
        vec!["-l", "--sampling-rate=0.5", "--aggregate-interval=1"],
        vec!["--aggregate-interval=5"],
        vec!["--log-prefix=x"],
        vec!["-l", "-T", "5", "--aggregate-interval=10"],
        vec!["-l", "-T", "10", "--aggregate-interval=3"],
        vec!["--progress-timestamp"],
        vec!["--max-tries=0"],
        vec!["--max-tries=-1"],
        vec!["--max-tries=abc"],
        vec!["--max-tries=0", "-L", "0.0001"],
        // positional arguments
        vec!["a", "b"],
        vec!["-i", "a", "b"],
        vec!["--", "-j", "abc"],
        vec!["x", "--", "-j"],
        vec!["a", "-j", "2", "b"],
        // open-files limit for -c (message has no option name)
        vec!["-c", "2000000000"],
        vec!["-c", "2147483647"],
        // valid command lines (pgbench gets as far as connecting)
        vec!["-c", "4", "-j", "8", "-T", "10", "-M", "prepared"],
        vec!["-nS", "-c4"],
        vec!["--trans=5", "--proto=extended"],
        vec!["-i", "-s", "2", "-n", "--foreign-keys"],
        vec!["-c", " 5"],
        vec!["-c", "5 "],
        vec!["-l", "--sampling-rate=nan"],
        vec!["-i", "--partitions="],
        vec!["-R", "inf"],
        vec!["-"],
        vec!["--random-seed=7", "-n", "mydb"],
        vec![
            "-b",
            "simple@3",
            "-f",
            &ok_sql.to_str().unwrap(),
            "-N",
            "-S",
        ],
    ];
    let env_cases: Vec<(Vec<&str>, Env)> = vec![
        (vec!["db", "-j", "abc"], vec![("POSIXLY_CORRECT", "1")]),
        (vec!["-c", "3"], vec![("PGBENCH_RANDOM_SEED", "abc")]),
        (vec!["-n", "-t", "0"], vec![("PGBENCH_RANDOM_SEED", " 7")]),
        (vec!["-t", "0"], vec![("PGBENCH_RANDOM_SEED", "")]),
        (
            vec!["--random-seed=3", "-t", "0"],
            vec![("PGBENCH_RANDOM_SEED", "9")],
        ),
    ];
    let mut failures = Vec::new();
    let mut total = 0;
    for case in &cases {
        total += 1;
        failures.extend(differential(case, &[]));
    }
    for (case, env) in &env_cases {
        total += 1;
        failures.extend(differential(case, env));
    }
    eprintln!(
        "differential cases: {total}, mismatches: {}",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn help_is_pg15_help_plus_the_documented_later_changes() {
    let out = Command::new(pgrig_testkit::pgbench_oracle())
        .arg("--help")
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let pg15 = String::from_utf8_lossy(&out.stdout).to_string();
    let steps = "                           run selected initialization steps\n";
    let steps_master = "                           run selected initialization steps, in the specified order\n\
                        \x20                          d: drop any existing pgbench tables\n\
                        \x20                          t: create the tables used by the standard pgbench scenario\n\
                        \x20                          g: generate data, client-side\n\
                        \x20                          G: generate data, server-side\n\
                        \x20                          v: invoke VACUUM on the standard tables\n\
                        \x20                          p: create primary key indexes on the standard tables\n\
                        \x20                          f: create foreign keys between the standard tables\n";
    let agg = "  --aggregate-interval=NUM aggregate data over NUM seconds\n";
    let debug = "  -d, --debug              print debugging output\n";
    let footer_at = pg15.find("Report bugs to").expect("footer");
    let expected = pg15[..footer_at]
        .replace(steps, steps_master)
        .replace(
            agg,
            &format!(
                "{agg}  --continue-on-error      continue running after an SQL error\n  \
                 --exit-on-abort          exit when any client is aborted\n"
            ),
        )
        .replace(
            debug,
            "  --debug                  print debugging output\n  \
             -d, --dbname=DBNAME      database name to connect to\n",
        )
        + "pgrig extras:\n  --json=FILE              also write the results as JSON to FILE (\"-\" for stdout)\n  \
           --percentiles            report latency percentiles\n  \
           --profile=DIR            perf profile of the server: DIR/server.folded, .svg\n  \
           --profile-pid=PID        with --profile: the server's postmaster (default: socket)\n  \
           --profile-client         with --profile: also profile pgrig (DIR/client.*)\n  \
           --metrics-addr=HOST:PORT serve live OpenMetrics at http://HOST:PORT/metrics\n  \
           --metrics-linger=SEC     after the run, serve the final figures until scraped once\n                           \
           (at most SEC; default 60, one default Prometheus scrape interval)\n  \
           --segments=N             coordinate N `pgrig worker` segments (with --coordinator)\n  \
           --coordinator=URL        the database holding the coordination schema pgrig_fleet\n  \
           --segments-wait=SEC      with --segments: wait at most SEC for every segment (default 300)\n  \
           --store=PATH|URL         with --segments: also store the merged run in this results store\n\n\
           Report bugs to the pgrig project (they are not PostgreSQL's bugs).\n";
    assert_eq!(pgrig_cli::args::help_text("pgbench"), expected);
}
