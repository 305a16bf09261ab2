//! Where PG15 and the newest pgbench differ, the newest wording (pgbench.md §0, §2); plus help,
//! version, builtin lists, the program name and pgrig's extra options.

use super::{bench, error_lines, parse, parse_pgbench_args, Action, Parsed};

// ---- newest wording where PG15 differs (pgbench.md §0, §2) ----

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
    let output = |args: &[&str]| match parse(args) {
        Ok(p) => p.output,
        Err(e) => panic!("{args:?}: {e:?}"),
    };
    let o = output(&["--json", "out.json", "--percentiles"]);
    assert_eq!(o.json.as_deref(), Some("out.json"));
    assert!(o.percentiles);
    assert!(output(&["--pe"]).percentiles);
    assert_eq!(output(&["--js=-"]).json.as_deref(), Some("-"));
    assert!(!error_lines(&["--p"])[0].contains("percentiles"));
    assert_eq!(
        error_lines(&["-i", "--json=x"])[0],
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode"
    );
}
