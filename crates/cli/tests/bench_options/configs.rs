//! Valid command lines and the configs they produce; odd argv never panics.

use pgrig_engine::config::{Duration, PartitionMethod, ScriptSource, SeedOption};
use pgrig_script::QueryMode;

use super::{bench, error_lines, init, parse, parse_env, Action};

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
