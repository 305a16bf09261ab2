//! `pgrig bench` option parsing: differential tests against the installed pgbench (which fails
//! before connecting on every bad command line, and on a good one fails to connect to
//! `PGHOST=/nonexistent`), checks of the newest (PG17+/master) wording where PG15 differs, and
//! the configs produced by valid command lines.

use std::process::{Command, Stdio};

use pgrig_cli::args::{parse_pgbench_args, Action, Parsed};
use pgrig_engine::config::{
    BenchConfig, Duration, InitConfig, PartitionMethod, ScriptSource, SeedOption,
};
use pgrig_script::QueryMode;

const PGBENCH: &str = "/usr/bin/pgbench";
/// Our stand-in for `argv[0]`; getopt lines are normalised on both sides.
const ARGV0: &str = "/opt/pg/bin/pgbench";

fn argv(args: &[&str]) -> Vec<String> {
    std::iter::once(ARGV0)
        .chain(args.iter().copied())
        .map(String::from)
        .collect()
}

fn parse_env(args: &[&str], env: &[(&str, &str)]) -> Result<Parsed, (Vec<String>, i32)> {
    let lookup = |k: &str| {
        env.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    };
    parse_pgbench_args("pgbench", &argv(args), &lookup).map_err(|e| (e.lines, e.exit_code))
}

fn parse(args: &[&str]) -> Result<Parsed, (Vec<String>, i32)> {
    parse_env(args, &[])
}

fn bench(args: &[&str]) -> BenchConfig {
    match parse(args) {
        Ok(Parsed {
            action: Action::Bench(cfg),
            ..
        }) => cfg,
        other => panic!("expected a benchmark config for {args:?}, got {other:?}"),
    }
}

fn init(args: &[&str]) -> InitConfig {
    match parse(args) {
        Ok(Parsed {
            action: Action::Init(cfg),
            ..
        }) => cfg,
        other => panic!("expected an init config for {args:?}, got {other:?}"),
    }
}

fn error_lines(args: &[&str]) -> Vec<String> {
    match parse(args) {
        Err((lines, 1)) => lines,
        other => panic!("expected exit-1 error for {args:?}, got {other:?}"),
    }
}

/// `/any/path/pgbench: msg` (getopt's argv[0]) -> `PROG: msg`.
fn normalise(line: &str) -> String {
    match line.find("pgbench: ") {
        Some(at) if line.starts_with('/') => format!("PROG: {}", &line[at + 9..]),
        _ => line.to_string(),
    }
}

/// What the real pgbench did: its stderr lines and exit code.
fn run_pgbench(args: &[&str], env: &[(&str, &str)]) -> (Vec<String>, i32) {
    let mut cmd = Command::new(PGBENCH);
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
    if !std::path::Path::new(PGBENCH).exists() {
        eprintln!("skipped: {PGBENCH} not installed");
        return;
    }
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
        // option_parse_int
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
    let env_cases: Vec<(Vec<&str>, Vec<(&str, &str)>)> = vec![
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

// ---- newest wording where PG15 differs (pgbench.md §0, §2) ----

#[test]
fn client_errors_name_the_long_option_client_as_in_master() {
    assert_eq!(
        error_lines(&["-c", "abc"]),
        ["pgbench: error: invalid value \"abc\" for option -c/--client"]
    );
    assert_eq!(
        error_lines(&["-c", "0"]),
        ["pgbench: error: -c/--client must be in range 1..2147483647"]
    );
}

#[test]
fn ambiguous_prefixes_list_master_options_in_table_order() {
    let hint = "pgbench: hint: Try \"pgbench --help\" for more information.";
    assert_eq!(
        error_lines(&["--d"]),
        [
            "/opt/pg/bin/pgbench: option '--d' is ambiguous; possibilities: '--dbname' '--define' '--debug'",
            hint
        ]
    );
    assert_eq!(
        error_lines(&["--c"])[0],
        "/opt/pg/bin/pgbench: option '--c' is ambiguous; possibilities: '--client' '--connect' '--continue-on-error'"
    );
    let all = &error_lines(&["--=x"])[0];
    assert!(
        all.ends_with("'--verbose-errors' '--exit-on-abort' '--debug' '--continue-on-error'"),
        "{all}"
    );
    assert!(
        !all.contains("--json") && !all.contains("--percentiles"),
        "{all}"
    );
}

#[test]
fn pg17_options_dbname_exit_on_abort_continue_on_error_are_known() {
    let cfg = bench(&["-d", "foo", "--e", "--continue-on-error", "--debug"]);
    assert_eq!(cfg.conn.dbname.as_deref(), Some("foo"));
    assert!(cfg.exit_on_abort && cfg.continue_on_error && cfg.debug);
    assert_eq!(bench(&["--dbname=bar"]).conn.dbname.as_deref(), Some("bar"));
}

#[test]
fn dbname_option_makes_any_positional_surplus() {
    assert_eq!(
        error_lines(&["-d", "a", "b"])[0],
        "pgbench: error: too many command-line arguments (first is \"b\")"
    );
}

#[test]
fn benchmark_only_pg17_options_are_rejected_in_init_mode() {
    assert_eq!(
        error_lines(&["-i", "--exit-on-abort"]),
        ["pgbench: error: some of the specified options cannot be used in initialization (-i) mode"]
    );
}

// ---- help, version, lists ----

#[test]
fn help_and_version_only_as_first_argument() {
    let help = match parse(&["--help", "-x"]) {
        Ok(Parsed {
            action: Action::Help(text),
            ..
        }) => text,
        other => panic!("{other:?}"),
    };
    assert!(help.starts_with("pgbench is a benchmarking tool for PostgreSQL.\n\nUsage:\n  pgbench [OPTION]... [DBNAME]\n"));
    assert!(help.contains("  -d, --dbname=DBNAME      database name to connect to\n"));
    assert!(help.contains("  --exit-on-abort          exit when any client is aborted\n"));
    assert!(help.contains("\npgrig extras:\n  --json=FILE"));
    assert!(matches!(
        parse(&["-?"]),
        Ok(Parsed {
            action: Action::Help(_),
            ..
        })
    ));
    assert!(matches!(
        parse(&["-V", "--bogus"]),
        Ok(Parsed {
            action: Action::Version,
            ..
        })
    ));
    assert!(matches!(
        parse(&["--version"]),
        Ok(Parsed {
            action: Action::Version,
            ..
        })
    ));
    assert_eq!(
        error_lines(&["-n", "--help"])[0],
        "/opt/pg/bin/pgbench: unrecognized option '--help'"
    );
}

#[test]
fn builtin_list_and_show_script_stop_parsing() {
    match parse(&["-b", "list", "--bogus"]) {
        Ok(Parsed {
            action: Action::BuiltinList(lines),
            ..
        }) => {
            assert_eq!(lines[0], "Available builtin scripts:");
            assert_eq!(lines[1], "      tpcb-like: <builtin: TPC-B (sort of)>");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse(&["--show-script=se", "-j", "x"]).map(|p| p.action),
        Ok(Action::ShowScript("select-only".into()))
    );
}

// ---- program name ----

#[test]
fn pgrig_invocation_prefixes_pgrig_and_hints_the_subcommand() {
    let lookup = |_: &str| None;
    let args: Vec<String> = ["pgrig bench", "-j", "0", "x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let e = parse_pgbench_args("pgrig bench", &args, &lookup).unwrap_err();
    assert_eq!(
        e.lines,
        ["pgrig: error: -j/--jobs must be in range 1..2147483647"]
    );
    let args: Vec<String> = ["pgrig bench", "-x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let e = parse_pgbench_args("pgrig bench", &args, &lookup).unwrap_err();
    assert_eq!(
        e.lines[1],
        "pgrig: hint: Try \"pgrig bench --help\" for more information."
    );
}

// ---- pgrig extras ----

#[test]
fn pgrig_extras_parse_and_never_shadow_pgbench_abbreviations() {
    let cfg = bench(&["--json", "out.json", "--percentiles"]);
    assert_eq!(cfg.json.as_deref(), Some("out.json"));
    assert!(cfg.percentiles);
    assert!(bench(&["--pe"]).percentiles);
    assert_eq!(bench(&["--js=-"]).json.as_deref(), Some("-"));
    assert!(!error_lines(&["--p"])[0].contains("percentiles"));
    assert_eq!(
        error_lines(&["-i", "--json=x"])[0],
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode"
    );
}

// ---- valid command lines -> configs ----

#[test]
fn no_options_run_tpcb_like_ten_transactions_on_one_client() {
    let cfg = bench(&[]);
    assert_eq!(
        cfg.scripts,
        [ScriptSource::Builtin {
            name: "tpcb-like".into(),
            weight: 1
        }]
    );
    assert_eq!((cfg.clients, cfg.threads), (1, 1));
    assert_eq!(cfg.duration, Duration::Transactions(10));
    assert_eq!(cfg.mode, QueryMode::Simple);
    assert_eq!(cfg.conn.dbname, None);
    assert_eq!(cfg.max_tries, 1);
    assert_eq!(
        (cfg.scale, cfg.random_seed, cfg.latency_limit_us),
        (None, None, None)
    );
}

#[test]
fn jobs_are_clamped_to_clients_and_duration_set_by_time() {
    let cfg = bench(&[
        "-c", "4", "-j", "8", "-T", "60", "-M", "prepared", "-C", "-v", "-r",
    ]);
    assert_eq!((cfg.clients, cfg.threads), (4, 4));
    assert_eq!(cfg.duration, Duration::Seconds(60));
    assert_eq!(cfg.mode, QueryMode::Prepared);
    assert!(cfg.connect_per_tx && cfg.vacuum_all && cfg.report_per_command);
    assert_eq!(bench(&["-t", "7"]).duration, Duration::Transactions(7));
}

#[test]
fn options_and_dbname_interleave_and_glue() {
    let cfg = bench(&[
        "-c4",
        "mydb",
        "-nS",
        "--trans=5",
        "-hhost",
        "-p",
        "5433",
        "-Ubob",
    ]);
    assert_eq!(cfg.conn.dbname.as_deref(), Some("mydb"));
    assert_eq!(cfg.conn.host.as_deref(), Some("host"));
    assert_eq!(cfg.conn.port.as_deref(), Some("5433"));
    assert_eq!(cfg.conn.user.as_deref(), Some("bob"));
    assert_eq!(cfg.clients, 4);
    assert!(cfg.no_vacuum);
    assert_eq!(cfg.duration, Duration::Transactions(5));
    assert_eq!(
        cfg.scripts,
        [ScriptSource::Builtin {
            name: "select-only".into(),
            weight: 1
        }]
    );
}

#[test]
fn scripts_keep_command_line_order_weights_and_file_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a@b.sql");
    std::fs::write(&path, "select 1;\n").unwrap();
    let file_arg = format!("{}@3", path.display());
    let cfg = bench(&["-b", "simple@2", "-f", &file_arg, "-N", "--builtin=tpc"]);
    assert_eq!(
        cfg.scripts,
        [
            ScriptSource::Builtin {
                name: "simple-update".into(),
                weight: 2
            },
            ScriptSource::File {
                path: path.display().to_string(),
                text: "select 1;\n".into(),
                weight: 3
            },
            ScriptSource::Builtin {
                name: "simple-update".into(),
                weight: 1
            },
            ScriptSource::Builtin {
                name: "tpcb-like".into(),
                weight: 1
            },
        ]
    );
}

#[test]
fn more_than_128_scripts_are_rejected() {
    let many: Vec<&str> = std::iter::repeat_n("-S", 129).collect();
    assert_eq!(
        error_lines(&many),
        ["pgbench: error: at most 128 SQL scripts are allowed"]
    );
}

#[test]
fn defines_rates_and_logging_options_land_in_the_config() {
    let cfg = bench(&[
        "-D",
        "a=1",
        "-Db=x=y",
        "-R",
        "100.5",
        "-L",
        "2.5",
        "-P",
        "5",
        "--progress-timestamp",
        "-l",
        "--log-prefix=pfx",
        "--sampling-rate=0.25",
        "--max-tries=3",
        "--failures-detailed",
        "--verbose-errors",
        "-s",
        "7",
    ]);
    assert_eq!(
        cfg.defines,
        [
            ("a".to_string(), "1".to_string()),
            ("b".into(), "x=y".into())
        ]
    );
    assert_eq!(cfg.rate, Some(100.5));
    assert_eq!(cfg.latency_limit_us, Some(2500));
    assert_eq!(cfg.progress, Some(5));
    assert!(cfg.progress_timestamp && cfg.log && cfg.failures_detailed && cfg.verbose_errors);
    assert_eq!(cfg.log_prefix.as_deref(), Some("pfx"));
    assert_eq!(cfg.sampling_rate, Some(0.25));
    assert_eq!(cfg.max_tries, 3);
    assert_eq!(cfg.scale, Some(7));
    let agg = bench(&["-l", "--aggregate-interval=5", "-T", "20", "--max-tries=0"]);
    assert_eq!((agg.aggregate_interval, agg.max_tries), (Some(5), 0));
}

#[test]
fn random_seed_is_announced_and_resolved() {
    let p = parse(&["--random-seed=42"]).unwrap();
    assert_eq!(p.notices, ["pgbench: setting random seed to 42"]);
    match p.action {
        Action::Bench(cfg) => assert_eq!(cfg.random_seed, Some(SeedOption::Value(42))),
        other => panic!("{other:?}"),
    }
    let p = parse_env(&["--random-seed=rand"], &[("PGBENCH_RANDOM_SEED", "5")]).unwrap();
    assert_eq!(p.notices.len(), 2);
    assert_eq!(p.notices[0], "pgbench: setting random seed to 5");
    let p = parse(&["--random-seed=time"]).unwrap();
    assert!(p.notices[0].starts_with("pgbench: setting random seed to "));
}

#[test]
fn init_mode_defaults_and_step_adjustments() {
    let cfg = init(&["-i"]);
    assert_eq!(cfg.steps, "dtgvp");
    assert_eq!((cfg.scale, cfg.fillfactor, cfg.partitions), (1, 100, 0));
    assert_eq!(init(&["-i", "-n", "--foreign-keys"]).steps, "dtgpf");
    assert_eq!(init(&["-i", "-I", "dtv Gv", "-n"]).steps, "dtG");
    assert_eq!(
        init(&["-i", "-I", "dtgvpf", "--foreign-keys"]).steps,
        "dtgvpf"
    );
    assert_eq!(init(&["-i", "-I", " "]).steps, "");
}

#[test]
fn init_mode_options_land_in_the_config() {
    let cfg = init(&[
        "-i",
        "-s",
        "10",
        "-F",
        "90",
        "-q",
        "--tablespace=ts",
        "--index-tablespace=its",
        "--unlogged-tables",
        "--partitions=4",
        "dbx",
    ]);
    assert_eq!((cfg.scale, cfg.fillfactor, cfg.partitions), (10, 90, 4));
    assert!(cfg.quiet && cfg.unlogged);
    assert_eq!(cfg.tablespace.as_deref(), Some("ts"));
    assert_eq!(cfg.index_tablespace.as_deref(), Some("its"));
    assert_eq!(cfg.partition_method, Some(PartitionMethod::Range));
    assert_eq!(cfg.conn.dbname.as_deref(), Some("dbx"));
    let hash = init(&["--partition-method=HASH", "--partitions=2", "--initialize"]);
    assert_eq!(hash.partition_method, Some(PartitionMethod::Hash));
}

#[test]
fn posixly_correct_stops_options_at_the_first_positional() {
    let e = parse_env(&["db", "-c", "abc"], &[("POSIXLY_CORRECT", "")]).unwrap_err();
    assert_eq!(
        e.0[0],
        "pgbench: error: too many command-line arguments (first is \"-c\")"
    );
}

#[test]
fn no_argument_vector_panics() {
    // A deterministic mix of option fragments; `-f -` is avoided (it would read stdin).
    let tokens = [
        "-c",
        "-j",
        "4",
        "0",
        "-x",
        "--p",
        "--time",
        "--time=",
        "=",
        "@",
        "-b",
        "se@2",
        "list",
        "-D",
        "a=b",
        "-I",
        "dz",
        "-i",
        "-nS",
        "--",
        "db",
        "--random-seed",
        "rand",
        "-R",
        "nan",
        "-L",
        "1e999",
        "--sampling-rate",
        "-l",
        "--aggregate-interval",
        "-T",
        "-t",
        "-M",
        "é",
        "-é",
        "--é=1",
        "-cé",
        "--show-script",
        "--json",
        "--max-tries",
        "-99999999999999999999",
        "--partition-method",
        "hash",
        "-F",
        "",
        " ",
        "-f",
        "/nonexistent@1",
        "-?",
        "-V",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let mut args = Vec::new();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        for _ in 0..(seed >> 60) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            args.push(tokens[(seed >> 33) as usize % tokens.len()]);
        }
        let _ = parse(&args);
    }
}
