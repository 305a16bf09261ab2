//! The statements of each test, driven by hand (sans-IO), against what the real sysbench
//! 1.0.20 sends for the same test and options (read from the server's statement log): the same
//! texts in the same order with the same number per event; the parameters as sysbench draws
//! them (ranges, delete + insert of one id, digit groups, per-client slices); bulk_insert's
//! batches as large as sysbench's.

mod sysbench_common;

use std::sync::OnceLock;

use pgrig_engine::workload::{inline_params, ClientSeed, Params, Reply, Rows, Step};
use pgrig_testkit::{custom_cluster, fresh_db_on, Server, ServerOptions, TestDb};
use pgrig_workloads::sysbench::{self, bulk::bulk_batch};
use pgrig_workloads::{Native, Options};
use sysbench_common::{logged_statements, pgrig_load, run_sysbench, shape};

/// A cluster that logs every statement with its database's name.
fn logging_cluster() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        custom_cluster(
            ServerOptions::default()
                .setting("log_statement", "all")
                .setting("log_line_prefix", "'%d|%p|'"),
        )
    })
}

fn opts(args: &[&str]) -> Options {
    let mut o = Options::new();
    for a in args {
        let (k, v) = a.split_once('=').unwrap();
        o.set(k, v);
    }
    o
}

/// One event's statements as sent, and the parameters of each.
struct Event {
    sql: Vec<String>,
    params: Vec<Vec<String>>,
}

/// Runs `events` events of client `id` of `clients` by hand; `simple` = the simple query mode
/// (values inlined; simple statements are inlined in every mode).
fn drive(native: &Native, id: u32, clients: u32, events: usize, simple: bool) -> Vec<Event> {
    let cat = native.workload.catalogue();
    let mut p = native.workload.client(ClientSeed {
        id,
        clients,
        seed: 11,
    });
    let rows = Rows::default();
    let reply = Reply {
        count: 1,
        rows: &rows,
    };
    let mut params = Params::new();
    let mut out = Vec::new();
    for _ in 0..events {
        let tx = p.choose().unwrap_or(0);
        p.begin(tx, false);
        let mut ev = Event {
            sql: Vec::new(),
            params: Vec::new(),
        };
        loop {
            params.clear();
            let last = if ev.sql.is_empty() {
                None
            } else {
                Some(&reply)
            };
            match p.step(last, &mut params) {
                Step::Run(s) => {
                    let st = &cat.statements[usize::from(s)];
                    assert_eq!(params.len(), usize::from(st.param_count()), "{}", st.sql);
                    assert!(cat.transactions[tx].statements.contains(&s));
                    let text = if st.simple || simple {
                        let mut b = Vec::new();
                        inline_params(&st.sql, &params, &mut b);
                        String::from_utf8(b).unwrap()
                    } else {
                        st.sql.clone()
                    };
                    ev.sql.push(text);
                    let vals = params
                        .values()
                        .map(|v| String::from_utf8_lossy(v.unwrap()).into_owned());
                    ev.params.push(vals.collect());
                }
                Step::Done => break,
                other => panic!("unexpected step {other:?}"),
            }
            assert!(ev.sql.len() < 10_000, "the event never ends");
        }
        out.push(ev);
    }
    out
}

/// Prepares `test` with pgrig on a new database, runs the real sysbench for `events` events
/// with `args` (one thread) and returns what the server received from it.
fn sysbench_log(test: &str, args: &[&str], events: usize) -> (TestDb, Vec<String>) {
    let db = fresh_db_on(logging_cluster(), &format!("sb_{test}"));
    let o = opts(
        &args
            .iter()
            .map(|a| a.trim_start_matches('-'))
            .collect::<Vec<_>>(),
    );
    pgrig_load(&db, &sysbench::build(test, &o).unwrap().load, 2).unwrap();
    let mut full: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    full.extend([
        format!("--events={events}"),
        "--threads=1".into(),
        test.into(),
        "run".into(),
    ]);
    let before = std::fs::metadata(db.server().log_path()).unwrap().len() as usize;
    run_sysbench(&db, &full.iter().map(String::as_str).collect::<Vec<_>>());
    let log = std::fs::read(db.server().log_path()).unwrap();
    let stmts = logged_statements(&String::from_utf8_lossy(&log[before..]), &db.name);
    (db, stmts)
}

/// Our statements and sysbench's for the same test and options compare equal by shape (and
/// exactly when `exact`: one table, prepared statements), event for event.
fn same_statements(test: &str, args: &[&str], events: usize, per_event: usize) {
    let simple = args.contains(&"--db-ps-mode=disable");
    let o = opts(
        &args
            .iter()
            .map(|a| a.trim_start_matches('-'))
            .collect::<Vec<_>>(),
    );
    let native = sysbench::build(test, &o).unwrap();
    let ours = drive(&native, 0, 1, events, simple);
    for ev in &ours {
        assert_eq!(
            ev.sql.len(),
            per_event,
            "{test} {args:?}: statements per event"
        );
    }
    let ours: Vec<String> = ours.into_iter().flat_map(|e| e.sql).collect();
    let (_db, theirs) = sysbench_log(test, args, events);
    assert_eq!(
        theirs.len(),
        events * per_event,
        "sysbench's statements: {theirs:#?}"
    );
    let shapes = |v: &[String]| v.iter().map(|s| shape(s)).collect::<Vec<_>>();
    assert_eq!(shapes(&ours), shapes(&theirs), "{test} {args:?}");
    let one_table = !args
        .iter()
        .any(|a| a.starts_with("--tables=") && *a != "--tables=1");
    if one_table && !simple {
        let literal = |s: &String| s.contains('\'') || s.contains("VALUES (N");
        for (a, b) in ours.iter().zip(&theirs) {
            if !literal(&shape(a)) {
                assert_eq!(a, b, "{test}: exact text");
            }
        }
    }
}

#[test]
fn oltp_read_write_sends_sysbenchs_twenty_statements() {
    same_statements("oltp_read_write", &["--table-size=100"], 3, 20);
}

#[test]
fn oltp_read_write_options_change_the_counts_as_in_sysbench() {
    let args = [
        "--tables=3",
        "--table-size=100",
        "--point_selects=3",
        "--index_updates=2",
        "--delete_inserts=2",
        "--order_ranges=0",
    ];
    same_statements("oltp_read_write", &args, 4, 2 + 3 + 3 + 2 + 1 + 4);
}

#[test]
fn skip_trx_and_range_selects_off_drop_begin_commit_and_ranges() {
    let args = ["--table-size=100", "--skip_trx=on", "--range_selects=off"];
    same_statements("oltp_read_write", &args, 3, 10 + 1 + 1 + 2);
}

#[test]
fn db_ps_mode_disable_inlines_values_as_sysbench_does() {
    same_statements(
        "oltp_read_write",
        &["--table-size=100", "--db-ps-mode=disable"],
        2,
        20,
    );
}

#[test]
fn read_only_and_write_only_send_sysbenchs_statements() {
    same_statements("oltp_read_only", &["--tables=2", "--table-size=100"], 3, 16);
    same_statements("oltp_write_only", &["--tables=2", "--table-size=100"], 3, 6);
}

#[test]
fn single_statement_tests_send_sysbenchs_statement() {
    same_statements(
        "oltp_point_select",
        &["--table-size=100", "--point_selects=5"],
        4,
        1,
    );
    same_statements(
        "oltp_update_index",
        &["--table-size=100", "--index_updates=2"],
        3,
        2,
    );
    same_statements("oltp_update_non_index", &["--table-size=100"], 3, 1);
    same_statements("oltp_delete", &["--tables=2", "--table-size=100"], 3, 1);
}

#[test]
fn oltp_insert_sends_plain_inserts_as_sysbench() {
    same_statements("oltp_insert", &["--tables=2", "--table-size=100"], 3, 1);
    same_statements("oltp_insert", &["--table-size=100", "--auto_inc=off"], 3, 1);
}

#[test]
fn select_random_points_and_ranges_send_sysbenchs_multi_line_statements() {
    same_statements("select_random_points", &["--table-size=100"], 2, 1);
    same_statements(
        "select_random_points",
        &["--table-size=100", "--random_points=3"],
        2,
        1,
    );
    same_statements(
        "select_random_ranges",
        &["--table-size=100", "--number_of_ranges=2", "--delta=7"],
        2,
        1,
    );
    same_statements(
        "select_random_ranges",
        &["--table-size=100", "--db-ps-mode=disable"],
        2,
        1,
    );
}

#[test]
fn bulk_insert_batches_hold_as_many_rows_as_sysbenchs() {
    let (_db, theirs) = sysbench_log("bulk_insert", &[], 100_000);
    let rows: Vec<usize> = theirs.iter().map(|s| s.matches('(').count()).collect();
    assert!(rows.len() >= 2, "sysbench sent {} statements", rows.len());
    let mut first = 1u64;
    for (i, n) in rows[..rows.len() - 1].iter().enumerate() {
        let (a, b) = bulk_batch(1, first);
        assert_eq!((b - a + 1) as usize, *n, "batch {i}");
        first = b + 1;
    }
    assert!(theirs[0].starts_with("INSERT INTO sbtest1 VALUES(1,1),(2,2),"));
    // pgrig: an event per row; the event of row 39034 sends rows 1..39033, as sysbench's does
    let native = sysbench::build("bulk_insert", &opts(&["threads=2"])).unwrap();
    let ev = drive(&native, 1, 2, 39034, false);
    let sent: Vec<(usize, &Event)> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.sql.is_empty())
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, 39033, "the event of row 39034");
    assert_eq!(sent[0].1.sql[0], theirs[0].replace("sbtest1", "sbtest2"));
}

#[test]
fn parameters_are_drawn_as_sysbench_draws_them() {
    let o = opts(&[
        "tables=4",
        "table_size=1000",
        "range_size=7",
        "rand-type=uniform",
    ]);
    let native = sysbench::build("oltp_read_write", &o).unwrap();
    let c_re = |s: &str| {
        s.len() == 119
            && s.split('-')
                .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit()))
    };
    for ev in drive(&native, 2, 4, 50, false) {
        let tables: Vec<&str> = ev
            .sql
            .iter()
            .map(|s| s.split("sbtest").nth(1).map_or("", |t| &t[..1]))
            .collect();
        // point selects share one table; the delete and its insert share one table and id
        assert!(tables[1..11].iter().all(|t| *t == tables[1]));
        assert_eq!(tables[17], tables[18]);
        assert_eq!((tables[0], tables[19]), ("", ""));
        assert_eq!(ev.params[17][0], ev.params[18][0]);
        for p in &ev.params[11..15] {
            let (a, b): (i64, i64) = (p[0].parse().unwrap(), p[1].parse().unwrap());
            assert_eq!(b - a, 6, "ranges span range_size");
            assert!((1..=1000).contains(&a));
        }
        assert!(c_re(&ev.params[16][0]));
        assert!(c_re(&ev.params[18][2]));
        assert_eq!(ev.params[18][3].len(), 59);
    }
    // select_random_points: client 2 of 4 draws k from its slice [500, 750]
    let native = sysbench::build(
        "select_random_points",
        &opts(&["table_size=1000", "rand-type=uniform"]),
    )
    .unwrap();
    let ks: Vec<i64> = drive(&native, 2, 4, 100, false)
        .iter()
        .flat_map(|e| e.params[0].iter().map(|v| v.parse::<i64>().unwrap()))
        .collect();
    assert!(ks.iter().all(|k| (500..=750).contains(k)), "{ks:?}");
    assert!(ks.iter().any(|k| *k < 520) && ks.iter().any(|k| *k > 730));
}

#[test]
fn retryable_errors_are_sysbenchs_ignored_errors() {
    let native = sysbench::build("oltp_read_write", &Options::new()).unwrap();
    for code in ["40001", "40P01", "23505"] {
        assert!(native.workload.retryable(code), "{code}");
    }
    assert!(!native.workload.retryable("23503"));
    assert!(!native.workload.retryable("42P01"));
}

#[test]
fn options_are_checked_as_sysbench_checks_them() {
    let e = sysbench::build("oltp_read_write", &opts(&["tabels=2"])).unwrap_err();
    assert!(
        e.message.contains("did you mean \"tables\""),
        "{}",
        e.message
    );
    // select_random_*: sysbench refuses --tables > 1 in cleanup only
    let s = sysbench::settings("select_random_points", &opts(&["tables=2"])).unwrap();
    assert_eq!(
        s.cleanup_refusal(),
        Some("this benchmark does not support --tables > 1")
    );
    let s = sysbench::settings("oltp_read_write", &opts(&["tables=2"])).unwrap();
    assert_eq!(s.cleanup_refusal(), None);
    let s = sysbench::settings("oltp_point_select", &opts(&["table_size=-1"])).unwrap();
    assert_eq!(s.rows_per_table(), 0);
    let e = sysbench::build("oltp_read_write", &opts(&["rand-type=normal"])).unwrap_err();
    assert!(e.message.contains("\"rand-type\""), "{}", e.message);
    assert!(sysbench::build("oltp_read_write", &opts(&["random_points=3"])).is_err());
    assert!(sysbench::build("oltp_frobnicate", &Options::new()).is_err());
    // bulk_insert declares no options: sysbench accepts any
    assert!(sysbench::build("bulk_insert", &opts(&["foo=1", "threads=2"])).is_ok());
    let s = sysbench::settings(
        "oltp_point_select",
        &opts(&["point_selects=9", "db-ps-mode=disable"]),
    )
    .unwrap();
    assert_eq!(s.point_selects, 1);
    assert!(s.ps_disabled);
    let names: Vec<&str> = sysbench::options_for(sysbench::Test::OltpReadWrite)
        .iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(names.len(), 18 + 14);
    assert!(names.starts_with(&["auto_inc", "create_secondary", "delete_inserts"]));
}
