//! `pgrig tpcc load|check` and `pgrig run --workload tpcc` on a real server: the load reports
//! its rows, the check passes every condition on the loaded database and fails (exit 1) naming
//! the condition and the key of a corrupted row, a run through `pgrig run` leaves the conditions
//! holding (its summary carrying NOPM), `-o procedures=on` runs the server-side functions and
//! `-o deferred_delivery=on` reports the deferred Deliveries apart, a database without the
//! tables is an error with a hint, and the example study (warehouses × clients) runs every
//! point, also as a comparison of client-side SQL with server-side functions
//! (`"options.procedures" = ["off", "on"]`).

use std::process::Command;

use pgrig_testkit::{fresh_db, run, TestDb};

fn pgrig(db: &TestDb, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c: Command = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args);
    run(c)
}

#[test]
fn load_then_check_passes_and_a_corrupted_row_fails_its_condition() {
    let db = fresh_db("tpcc_cli");
    let out = pgrig(
        &db,
        &["tpcc", "load", "--warehouses", "1", "--load-jobs", "2"],
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("tpcc: 1 warehouse(s) loaded done in"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("rows/s"), "{}", out.stdout);

    let out = pgrig(&db, &["tpcc", "check", "--warehouses", "1", "--initial"]);
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.matches(" pass ").count(), 13, "{}", out.stdout);
    assert!(out.stdout.contains("all 12 consistency conditions hold"));

    // a run through pgrig run keeps the conditions (11 no longer holds after deliveries)
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "warehouses=1",
            "-c",
            "2",
            "-T",
            "3s",
        ],
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout
            .contains("NOPM (New-Orders/min, no-wait mode; not tpmC): "),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("stock_level"), "{}", out.stdout);
    let out = pgrig(&db, &["tpcc", "check", "--warehouses", "1"]);
    assert!(out.success(), "{out:?}");

    db.psql("update warehouse set w_ytd = w_ytd + 0.01 where w_id = 1");
    let out = pgrig(&db, &["tpcc", "check", "--warehouses", "2"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout
            .contains("warehouses  FAIL  1 warehouse(s), but --warehouses 2 was given"),
        "{}",
        out.stdout
    );
    let fail: Vec<&str> = out.stdout.lines().filter(|l| l.contains("FAIL")).collect();
    assert_eq!(fail.len(), 3, "{}", out.stdout);
    assert!(
        fail[1].starts_with("3.3.2.1  FAIL") && fail[1].contains("w_id=1"),
        "{}",
        fail[1]
    );
    assert!(
        fail[2].starts_with("3.3.2.8  FAIL") && fail[2].contains("w_id=1"),
        "{}",
        fail[2]
    );
    assert!(
        out.stderr.contains("2 of 11 consistency conditions failed"),
        "{}",
        out.stderr
    );
}

#[test]
fn runs_with_procedures_or_deferred_delivery_keep_the_conditions() {
    let db = fresh_db("tpcc_cli_procs");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = pgrig(&db, &["tpcc", "load", "--warehouses", "1"]);
    assert!(out.success(), "{out:?}");
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "procedures=on",
            "-c",
            "2",
            "-T",
            "2s",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("NOPM"), "{}", out.stdout);
    let doc = std::fs::read_to_string(&json).unwrap();
    assert!(
        doc.contains("SELECT * FROM tpcc_new_order("),
        "the per-statement figures are the function calls: {doc}"
    );
    assert!(!doc.contains("UPDATE district SET d_next_o_id"), "{doc}");
    assert_eq!(
        db.psql("select count(*) from pg_proc where proname = 'tpcc_payment'")
            .trim(),
        "1",
        "the preflight created the functions"
    );
    assert!(
        db.psql("select count(*) > 30000 from history").trim() == "t",
        "payments ran"
    );
    let out = pgrig(&db, &["tpcc", "check", "--warehouses", "1"]);
    assert!(out.success(), "{out:?}");
    // deferred Delivery: its own line in the report, the skipped districts counted
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "deferred_delivery=on",
            "-c",
            "2",
            "-T",
            "2s",
        ],
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("\ndelivery_deferred ")
            && out
                .stdout
                .contains("districts skipped by Delivery (no undelivered order): "),
        "{}",
        out.stdout
    );
    let out = pgrig(&db, &["tpcc", "check", "--warehouses", "1"]);
    assert!(out.success(), "{out:?}");
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "procedures=maybe",
            "-T",
            "1s",
        ],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("invalid value \"maybe\" for option \"procedures\""),
        "{}",
        out.stderr
    );
}

#[test]
fn check_without_the_tables_is_an_error_with_a_hint() {
    let db = fresh_db("tpcc_cli_empty");
    let out = pgrig(&db, &["tpcc", "check"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("relation \"warehouse\" does not exist")
            || out.stderr.contains("does not exist"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: load the tables first"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_load_options_are_usage_errors() {
    let db = fresh_db("tpcc_cli_usage");
    let out = pgrig(&db, &["tpcc", "load", "--warehouses", "0"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("\"warehouses\""), "{}", out.stderr);
    let out = pgrig(&db, &["tpcc", "lod"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("unrecognized subcommand"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_tpcc_scaling_example_study_runs_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tpcc.db");
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(&examples)
        .args(["study", "tpcc_scaling.toml", "--store"])
        .arg(&store)
        .args([
            "--set",
            "workload.duration=1s",
            "--set",
            "matrix.\"options.warehouses\"=[1, 2]",
            "--set",
            "matrix.clients=[1, 2]",
        ]);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    let out = run(c);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json", "--store"])
        .arg(&store);
    let out = run(e);
    let runs: serde_json::Value = serde_json::from_str(&out.stdout).expect("json export");
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 4, "{out:?}");
    for r in runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["aborted_clients"].as_u64(), Some(0), "{r}");
        // [collect] consistency: conditions 1-10 and 12 checked after the run, all holding
        let checks = r["consistency"].as_array().expect("consistency checked");
        assert_eq!(checks.len(), 11, "{r}");
        assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    }
}

#[test]
fn a_study_compares_client_side_sql_with_server_side_functions() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tpcc.db");
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(&examples)
        .args(["study", "tpcc_scaling.toml", "--store"])
        .arg(&store)
        .args([
            "--set",
            "workload.duration=1s",
            "--set",
            "matrix.\"options.warehouses\"=[1]",
            "--set",
            "matrix.clients=[2]",
            "--set",
            "matrix.\"options.procedures\"=[\"off\", \"on\"]",
        ]);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    let out = run(c);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json", "--store"])
        .arg(&store);
    let out = run(e);
    let runs: serde_json::Value = serde_json::from_str(&out.stdout).expect("json export");
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{out:?}");
    let text = out.stdout.as_str();
    assert!(
        text.contains("procedures"),
        "the point's option is stored: {text}"
    );
    for r in runs {
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["aborted_clients"].as_u64(), Some(0), "{r}");
        let checks = r["consistency"].as_array().expect("consistency checked");
        assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    }
}

#[test]
fn a_run_json_carries_the_tpcc_figures_and_hammerdb_s_headline() {
    let db = fresh_db("tpcc_cli_json");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = pgrig(
        &db,
        &["tpcc", "load", "--warehouses", "2", "--load-seed", "7"],
    );
    assert!(out.success(), "{out:?}");
    let server_xacts = || -> i64 {
        let v = db.psql("select sum(xact_commit + xact_rollback) from pg_stat_database");
        v.trim().parse().unwrap()
    };
    let before = server_xacts();
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "warehouses=2",
            "-o",
            "rampup=1",
            "-c",
            "4",
            "-T",
            "4s",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.success(), "{out:?}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let after = server_xacts();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["options"]["scale"], 2, "the warehouses, not 1");
    assert_eq!(doc["workload_options"]["warehouses"], "2");
    assert_eq!(doc["workload_options"]["rampup"], "1");
    let f = &doc["workload_figures"];
    assert_eq!(f["warehouses"], 2);
    assert_eq!(f["mode"], "nowait");
    assert_eq!(f["steady"]["from_second"], 2);
    assert_eq!(f["nopm"], f["steady"]["nopm"]);
    assert_eq!(f["types"].as_array().unwrap().len(), 5);
    assert_eq!(f["types"][4]["p90_limit_s"], 20.0);
    assert!(f["efficiency"].is_null(), "no efficiency in no-wait mode");
    // the whole run's committed New-Orders are the orders the districts handed out
    let committed =
        f["nopm_whole_run"].as_f64().unwrap() * doc["duration_s"].as_f64().unwrap() / 60.0;
    let handed_out: i64 = db
        .psql("select sum(d_next_o_id) - 20 * 3001 from district")
        .trim()
        .parse()
        .unwrap();
    assert!(
        (committed - handed_out as f64).abs() < 1e-6,
        "{committed} vs {handed_out}"
    );
    // HammerDB's headline: the steady window's New-Orders, pg_stat_database's transactions
    let headline = f["headline"].as_str().expect("a headline");
    assert!(
        out.stdout.lines().any(|l| l == headline),
        "{headline} in {}",
        out.stdout
    );
    let server = &doc["server_xacts"];
    let n = server["transactions"].as_i64().unwrap();
    let minutes = (server["to_s"].as_f64().unwrap() - server["from_s"].as_f64().unwrap()) / 60.0;
    assert_eq!(
        headline,
        format!(
            "System achieved {:.0} NOPM from {:.0} PostgreSQL TPM",
            f["nopm"].as_f64().unwrap(),
            n as f64 / minutes
        )
    );
    // the window's server transactions: part of the whole run's, at least the client's own
    // database transactions over the steady seconds
    let window = f["steady"]["tpm"].as_f64().unwrap() * 3.0 / 60.0;
    assert!(
        n <= after - before,
        "{n} vs {} over the run",
        after - before
    );
    assert!(n as f64 >= 0.95 * window, "{n} vs {window} in the window");

    // the dataset records --load-seed 7: another seed is refused, naming the option
    let out = pgrig(
        &db,
        &[
            "run",
            "--target",
            &db.conninfo(),
            "-w",
            "tpcc",
            "-o",
            "warehouses=2",
            "-o",
            "load_seed=8",
            "-T",
            "1s",
        ],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(
            "invalid value \"8\" for option \"load_seed\": the dataset was loaded with --load-seed 7"
        ),
        "{}",
        out.stderr
    );
}

/// The run database's `xact_commit + xact_rollback` once it stops moving, and the reads taken.
/// Each read is a psql session: its start (one transaction, reported as it goes idle) is in the
/// value it reads, its query is in the next read's, so a quiet database moves by 2 a read.
fn settled_xacts(db: &TestDb) -> (i64, i64) {
    let read = || -> i64 {
        let sql = "select xact_commit + xact_rollback from pg_stat_database \
                   where datname = current_database()";
        db.psql(sql).trim().parse().unwrap()
    };
    let mut last = read();
    for reads in 2..40 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let next = read();
        if next == last + 2 {
            return (next, reads);
        }
        last = next;
    }
    panic!("pg_stat_database did not settle")
}

#[test]
fn postgresql_tpm_counts_the_workload_only_not_pgrig_s_own_readings() {
    // a cluster without autovacuum: its workers' visits to the database are transactions of
    // the database too (any other session's are), and would make the count differ by a visit
    static QUIET: std::sync::OnceLock<pgrig_testkit::Server> = std::sync::OnceLock::new();
    let server = QUIET.get_or_init(|| {
        pgrig_testkit::custom_cluster(pgrig_testkit::ServerOptions {
            settings: vec![("autovacuum".into(), "off".into())],
            ..Default::default()
        })
    });
    let db = pgrig_testkit::fresh_db_on(server, "tpcc_cli_tpm");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = pgrig(&db, &["tpcc", "load", "--warehouses", "1"]);
    assert!(out.success(), "{out:?}");
    let (before, _) = settled_xacts(&db);
    // (the last read's session reports its query as it exits: before the run)
    std::thread::sleep(std::time::Duration::from_secs(1));
    // no ramp-up: the window opens before the clients connect
    let args = [
        "run",
        "--target",
        &db.conninfo(),
        "-w",
        "tpcc",
        "-o",
        "warehouses=1",
        "-o",
        "rampup=0",
        "-c",
        "4",
        "-T",
        "4s",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = pgrig(&db, &args);
    assert!(out.success(), "{out:?}");
    let (after, reads) = settled_xacts(&db);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let x = &doc["server_xacts"];
    let (workload, counted, readings) = (
        x["transactions"].as_i64().unwrap(),
        x["server_counted"].as_i64().unwrap(),
        x["pgrig_readings"].as_i64().unwrap(),
    );
    // pgrig's per-second readings ran on the database: one a second and at least one after
    assert!(readings >= 5, "{x}");
    assert_eq!(workload, counted - readings, "{x}");
    // the server's count of the workload is the clients' own: every database transaction
    // (completed, retried or failed) and each client's connection (one transaction at start)
    let t = &doc["transactions"];
    let client =
        t["ok"].as_i64().unwrap() + t["retries"].as_i64().unwrap() + t["failed"].as_i64().unwrap();
    assert_eq!(workload, client + 4, "{x} against {t}");
    // the test's own readings around the command: the window is inside, and outside it pgrig
    // made only its few set-up transactions (connections, the dataset's seed, the sampler's
    // first and last readings)
    // (the test's own: the last read's query before, 2 a read after)
    let whole = after - before - 2 * reads;
    assert!(
        (counted..=counted + 12).contains(&whole),
        "{whole} by the test's readings, {x}"
    );
    // the headline and the line say the figure over the window's minutes
    let minutes = (x["to_s"].as_f64().unwrap() - x["from_s"].as_f64().unwrap()) / 60.0;
    let tpm = workload as f64 / minutes;
    let f = &doc["workload_figures"];
    assert_eq!(
        f["headline"].as_str().unwrap(),
        format!(
            "System achieved {:.0} NOPM from {tpm:.0} PostgreSQL TPM",
            f["nopm"].as_f64().unwrap()
        )
    );
    let line = format!(
        "PostgreSQL TPM (the run database's commits + rollbacks in pg_stat_database, less pgrig's own {readings} readings): {tpm:.1}"
    );
    assert!(out.stdout.contains(&line), "{line} in {}", out.stdout);
}
