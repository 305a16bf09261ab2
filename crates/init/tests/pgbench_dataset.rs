//! The init library on a real server (`pgrig-testkit`), without the binary: `run_init` loads
//! pgbench's dataset at a small scale with the row counts, keys and balances pgbench's
//! definition gives (checked with SQL on the server); client-side generation (`g`, on one
//! connection or several) and server-side generation (`G`) make the same rows; `--partitions`
//! spreads the accounts over range partitions of pgbench's width; a database that does not
//! exist is a clear error naming it.

use std::sync::Mutex;

use pgrig_engine::config::{ConnArgs, InitConfig};
use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_init::{run_init, run_init_with, InitOptions};
use pgrig_testkit::{fresh_db, TestDb};

/// Every message the loader sends (pgbench's stderr lines).
#[derive(Default)]
struct Messages(Mutex<Vec<String>>);

impl Sink for Messages {
    fn message(&self, _: Level, text: &str) {
        self.0.lock().unwrap().push(text.to_string());
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

impl Messages {
    fn text(&self) -> String {
        self.0.lock().unwrap().concat()
    }
}

fn config(conninfo: String, steps: &str, scale: i32) -> InitConfig {
    InitConfig {
        conn: ConnArgs {
            dbname: Some(conninfo),
            ..ConnArgs::default()
        },
        steps: steps.into(),
        scale,
        quiet: true,
        ..InitConfig::default()
    }
}

/// Loads `db` with `cfg` and `jobs` load connections (0: the default); returns the messages.
fn init(cfg: &InitConfig, jobs: u32) -> String {
    let sink = Messages::default();
    let opts = InitOptions {
        load_parallelism: jobs,
        ..InitOptions::default()
    };
    if let Err(e) = run_init_with(cfg, &sink, &opts) {
        panic!("init failed: {:?}\n{}", e.lines, sink.text());
    }
    sink.text()
}

fn value(db: &TestDb, sql: &str) -> i64 {
    let v = db.psql(sql);
    v.parse()
        .unwrap_or_else(|_| panic!("{sql}: not a number: {v}"))
}

/// A digest of every account row in key order (the whole table's content).
fn accounts_digest(db: &TestDb) -> String {
    db.psql(
        "SELECT md5(string_agg(aid || ',' || bid || ',' || abalance || ',' || filler, ';' ORDER BY aid)) \
         FROM pgbench_accounts",
    )
}

#[test]
fn scale_2_loads_pgbench_row_counts_keys_and_zero_balances() {
    let db = fresh_db("init_scale2");
    let said = init(&config(db.conninfo(), "dtgvp", 2), 0);
    assert!(said.contains("done in "), "{said}");
    for (table, rows) in [
        ("pgbench_branches", 2),
        ("pgbench_tellers", 20),
        ("pgbench_accounts", 200_000),
        ("pgbench_history", 0),
    ] {
        assert_eq!(
            value(&db, &format!("SELECT count(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    // keys 1..N without a gap, each row in the branch pgbench's definition puts it in
    assert_eq!(
        db.psql("SELECT min(aid) || ' ' || max(aid) || ' ' || count(DISTINCT aid) FROM pgbench_accounts"),
        "1 200000 200000"
    );
    assert_eq!(
        value(
            &db,
            "SELECT count(*) FROM pgbench_accounts WHERE bid <> (aid - 1) / 100000 + 1"
        ),
        0
    );
    assert_eq!(
        value(
            &db,
            "SELECT count(*) FROM pgbench_tellers WHERE bid <> (tid - 1) / 10 + 1"
        ),
        0
    );
    assert_eq!(
        db.psql(
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' || \
             (SELECT sum(bbalance) FROM pgbench_branches) || ' ' || (SELECT sum(tbalance) FROM pgbench_tellers)"
        ),
        "0 0 0"
    );
    // step p: the three primary keys, on the key columns
    assert_eq!(
        db.psql(
            "SELECT string_agg(conrelid::regclass || '(' || a.attname || ')', ' ' ORDER BY conrelid::regclass::text) \
             FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
             WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench_%'"
        ),
        "pgbench_accounts(aid) pgbench_branches(bid) pgbench_tellers(tid)"
    );
    // step v: the tables were vacuumed (and analyzed)
    assert_eq!(
        value(
            &db,
            "SELECT count(*) FROM pg_stat_user_tables WHERE relname LIKE 'pgbench_%' \
             AND (last_vacuum IS NULL OR last_analyze IS NULL)"
        ),
        0
    );
}

#[test]
fn one_connection_several_and_server_side_generation_make_the_same_rows() {
    let serial = fresh_db("init_serial");
    init(&config(serial.conninfo(), "dtgvp", 2), 1);
    let parallel = fresh_db("init_parallel");
    init(&config(parallel.conninfo(), "dtgvp", 2), 4);
    let server_side = fresh_db("init_server_side");
    init(&config(server_side.conninfo(), "dtGvp", 2), 0);
    let expected = accounts_digest(&serial);
    assert_eq!(expected.len(), 32, "{expected}");
    assert_eq!(accounts_digest(&parallel), expected, "--load-jobs 4");
    assert_eq!(
        accounts_digest(&server_side),
        expected,
        "server-side generation"
    );
}

#[test]
fn partitions_hold_the_accounts_in_ranges_of_pgbenchs_width() {
    let db = fresh_db("init_partitions");
    let cfg = InitConfig {
        partitions: 3,
        ..config(db.conninfo(), "dtgvp", 2)
    };
    init(&cfg, 0);
    // ceil(200000 / 3) = 66667 accounts per partition, the last one the rest
    assert_eq!(
        db.psql(
            "SELECT string_agg(tableoid::regclass || ':' || n || ':' || lo || '-' || hi, ' ' ORDER BY lo) FROM \
             (SELECT tableoid, count(*) n, min(aid) lo, max(aid) hi FROM pgbench_accounts GROUP BY tableoid) p"
        ),
        "pgbench_accounts_1:66667:1-66667 pgbench_accounts_2:66667:66668-133334 \
         pgbench_accounts_3:66666:133335-200000"
    );
    assert_eq!(
        db.psql("SELECT relkind FROM pg_class WHERE relname = 'pgbench_accounts'"),
        "p"
    );
}

#[test]
fn a_database_that_does_not_exist_is_a_clear_error_naming_it() {
    let db = fresh_db("init_missing");
    let conninfo = db.conninfo().replace(&db.name, "no_such_database_here");
    let sink = Messages::default();
    let err = run_init(&config(conninfo, "dtgvp", 1), &sink).expect_err("no such database");
    let lines: Vec<&str> = err.lines.iter().map(|(_, l)| l.as_str()).collect();
    let text = lines.join("\n");
    assert_eq!(err.exit_code, 1, "{text}");
    assert!(
        text.contains("\"no_such_database_here\" does not exist"),
        "{text}"
    );
    assert!(
        text.contains("could not create connection for initialization"),
        "{text}"
    );
}
