//! Property harnesses for the parsers that take what users type and the parsers' own crates do
//! not cover: the study file (TOML, `--set` overrides, plan expansion), `pgrig compare`'s
//! selections and sysbench's command line (with its 0.5 hint). Inputs are built from fragments
//! of valid syntax mixed with arbitrary text, so they reach deep into each parser; the property
//! is that every input is either accepted or refused with a message, never a panic. (The
//! script, conninfo/URI, pgbench `-l` log and run document harnesses live beside their parsers.)
//! `--set` values also go through a real server's configuration (a server per case: 3 cases, more
//! with `PGRIG_SERVER_CASES`). The parsers are bounded in `cargo test` (2,000 cases each, well
//! under a second); longer by hand with
//! `PROPTEST_CASES=100000` (30,000 each ran clean in 5 s). A failing case is saved under `proptest-regressions/` and committed
//! with its fix.

use proptest::prelude::*;

/// Fragments of a study file: sections, keys and values, valid and not.
fn study_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("name = \"x\"\n".to_string()),
        Just("[matrix]\n".to_string()),
        Just("[workload]\n".to_string()),
        Just("[dataset]\n".to_string()),
        Just("[collect]\n".to_string()),
        Just("[target]\n".to_string()),
        Just("[[targets]]\n".to_string()),
        Just("order = \"interleaved\"\n".to_string()),
        Just("clients = [1, 2, 4]\n".to_string()),
        Just("repetitions = 3\n".to_string()),
        Just("rounds = 2\n".to_string()),
        Just("reinit = \"per-point\"\n".to_string()),
        Just("\"settings.work_mem\" = [\"4MB\", \"64MB\"]\n".to_string()),
        Just("isolation = [\"read committed\", \"serializable\"]\n".to_string()),
        Just("builtin = \"select-only\"\n".to_string()),
        Just("transactions = 10\n".to_string()),
        Just("duration = \"1s\"\n".to_string()),
        Just("scripts = [[\"a.sql\"], \"b.sql@2\"]\n".to_string()),
        (0i64..100_000).prop_map(|n| format!("clients = {n}\n")),
        (any::<i64>()).prop_map(|n| format!("repetitions = {n}\n")),
        "[a-z_.\"]{1,12} = [^\n]{0,20}\n",
        "[^\u{0}]{0,30}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn study_files_are_parsed_expanded_or_refused_without_a_panic(
        parts in prop::collection::vec(study_fragment(), 0..16),
        set in "[a-z_.\"]{1,20}=[^\n]{0,16}",
    ) {
        let text: String = parts.concat();
        if let Ok(study) = pgrig_study::spec::parse("s.toml", &text) {
            let _ = pgrig_study::plan::expand(&study);
        }
        if let Ok(o) = pgrig_study::overrides::parse(&set) {
            let _ = pgrig_study::overrides::apply("s.toml", &text, &[o]);
        }
    }

    #[test]
    fn compare_selections_are_parsed_or_refused_without_a_panic(
        text in prop_oneof![
            "[a-z0-9_,\\[\\]=.\" -]{0,40}",
            "[^\u{0}]{0,40}",
            "[a-z]{1,8}\\[[a-z_.]{1,10}=[a-z0-9 \"]{0,10}(,[a-z_.]{1,10}=[^,\\]]{0,8}){0,3}\\]",
        ],
    ) {
        let _ = pgrig_compare::selector::parse("A", &text);
    }

    #[test]
    fn sysbench_command_lines_are_parsed_or_refused_without_a_panic(
        args in prop::collection::vec(prop_oneof![
            Just("oltp_read_write".to_string()),
            Just("/usr/share/sysbench/oltp_point_select.lua".to_string()),
            Just("run".to_string()),
            Just("prepare".to_string()),
            Just("--test=oltp.lua".to_string()),
            Just("--oltp-tables-count=250".to_string()),
            Just("--db-driver=pgsql".to_string()),
            "--(threads|time|events|rate|num-threads|max-time|tables|table-size|report-interval|verbosity|percentile|pgsql-port)=[-0-9a-z.]{0,12}",
            "--[a-z_-]{1,16}(=[^\n]{0,12})?",
            "[^\u{0}]{0,16}",
        ], 0..8),
    ) {
        use pgrig_cli::sysbench::{cmdline::CmdLine, general};
        let _ = general::deprecations(&CmdLine::default());
        if let Ok(c) = CmdLine::parse(&args) {
            let _ = general::deprecations(&c);
            let _ = general::General::read(&c);
            let _ = general::Pg::read(&c);
            for a in &args {
                let _ = pgrig_cli::sysbench::legacy::hint(&c, a);
            }
        }
    }
}

/// A server setting's value built from what matters to PostgreSQL's configuration reader (quotes,
/// backslashes, escapes, `#`, `=`, an attempted second setting) mixed with arbitrary text. A
/// value wholly inside quotes is the documented pre-quoted form (read as the server reads it),
/// so it gets a leading `x` here: every other value must come back exactly.
fn conf_value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("'".to_string()),
            Just("\\".to_string()),
            Just("''".to_string()),
            Just("\\'".to_string()),
            Just("\\\\".to_string()),
            Just("' include='/nonexistent/x".to_string()),
            Just("\\' evil_injected = '1".to_string()),
            Just("\\n\\t\\101\\0".to_string()),
            Just(" # = ".to_string()),
            "[^\n\r\u{0}]{0,6}",
        ],
        0..8,
    )
    .prop_map(|parts| {
        let v = parts.concat();
        if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
            format!("x{v}")
        } else {
            v
        }
    })
}

proptest! {
    // each case starts a server: a few by default, more with PGRIG_SERVER_CASES
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PGRIG_SERVER_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3)
    ))]

    /// `--set` values (the probe's `application_name=a'b\' include='/x'` broke the file) go
    /// into a real server's configuration: it starts, reads no setting in error, and each value
    /// comes back byte for byte.
    #[test]
    fn set_values_round_trip_through_a_real_servers_configuration(
        values in prop::collection::vec(conf_value(), 1..48),
    ) {
        use pgrig_lab::{Server, ServerOptions};
        let mut opts = ServerOptions::default();
        for (i, v) in values.iter().enumerate() {
            opts = opts.setting(format!("pgrig_fuzz.v{i}"), v.clone());
        }
        let server = Server::start(opts)
            .map_err(|e| TestCaseError::fail(format!("the server did not start: {e}")))?;
        let got = server
            .psql(
                "postgres",
                &format!(
                    "SELECT (SELECT count(*) FROM pg_file_settings WHERE error IS NOT NULL) \
                     || ',' || string_agg(encode(convert_to(current_setting('pgrig_fuzz.v' || i), \
                     getdatabaseencoding()), 'hex'), ',' ORDER BY i) \
                     FROM generate_series(0, {}) i",
                    values.len() - 1
                ),
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
        let want = std::iter::once("0".to_string())
            .chain(values.iter().map(|v| hex(v)))
            .collect::<Vec<_>>()
            .join(",");
        prop_assert_eq!(got.trim(), want, "values {:?}", values);
    }
}
