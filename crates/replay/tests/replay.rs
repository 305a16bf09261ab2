//! The replay crate against real servers: logs recorded from a real PostgreSQL running
//! pgbench parse as pgreplay parses them, replay leaves the recorded table contents (as
//! pgreplay's replay does), the schedule is kept, and recorded cancels interrupt.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use pgrig_replay::entry::Format;
use pgrig_replay::parser::ParseOptions;
use pgrig_replay::time::Timestamp;
use pgrig_replay::{Item, ItemKind};

#[test]
fn real_server_logs_parse_into_pgreplays_replay_file_statistics_and_warnings() {
    let rec = recording();
    for (path, format) in [(&rec.stderr, Format::Stderr), (&rec.csv, Format::Csv)] {
        let dir = tempfile::tempdir().unwrap();
        let rf = dir.path().join("oracle.rf");
        let mut cmd = Command::new(pgreplay());
        cmd.arg("-f");
        if format == Format::Csv {
            cmd.arg("-c");
        }
        cmd.arg("-o").arg(&rf).arg(path);
        let out = pgrig_testkit::run(cmd);
        assert!(out.success(), "pgreplay -f failed: {}", out.stderr);
        let (items, notes, stats) = parse(path, format, ParseOptions::default());
        // 3 protocols x 3 clients x 30 transactions x 7 statements, at least
        assert!(items.len() > 1500, "{format:?}: only {} items", items.len());
        let oracle = std::fs::read(&rf).unwrap();
        let ours = encode(&items);
        if ours != oracle {
            let at = ours.iter().zip(&oracle).position(|(a, b)| a != b);
            panic!(
                "{format:?}: replay file differs from pgreplay's at byte {at:?} (sizes {} and {})",
                ours.len(),
                oracle.len()
            );
        }
        assert_eq!(stats, out.stdout, "{format:?}: parse statistics");
        let warnings: String = notes.iter().map(|n| format!("{n}\n")).collect();
        assert_eq!(warnings, out.stderr, "{format:?}: warnings");
    }
}

#[test]
fn jsonlog_parses_into_the_same_items_as_the_stderr_log() {
    let rec = recording();
    let Some(json) = &rec.json else {
        pgrig_testkit::skip("the server is older than PostgreSQL 15 and writes no jsonlog");
        return;
    };
    let (from_stderr, _, _) = parse(&rec.stderr, Format::Stderr, ParseOptions::default());
    let (from_json, _, _) = parse(json, Format::Json, ParseOptions::default());
    assert!(from_json.len() > 1500, "only {} items", from_json.len());
    // the collector writes each backend's lines to each file on its own, so the files
    // interleave sessions differently: compare each session's items in order
    let by_session = |mut v: Vec<Item>| {
        v.sort_by_key(|i| i.session);
        v
    };
    let (a, b) = (by_session(from_stderr), by_session(from_json));
    assert_eq!(a.len(), b.len());
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!(
            "item {i} differs:\n{}\n{}",
            String::from_utf8_lossy(&a[i].debug_text()),
            String::from_utf8_lossy(&b[i].debug_text())
        );
    }
}

fn stat_line<'a>(report: &'a str, label: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in:\n{report}"))
}

#[test]
fn replay_leaves_the_recorded_contents_as_pgreplay_does() {
    let rec = recording();
    let target = pgrig_testkit::cluster();
    let recorded = contents(rec.server, &rec.db);
    seed(target, &rec.db);
    assert_ne!(
        contents(target, &rec.db),
        recorded,
        "the workload changed nothing"
    );
    let (items, _, _) = parse(&rec.stderr, Format::Stderr, ParseOptions::default());
    let (outcome, _) = replay_on(target, items, 1.0, true);
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(contents(target, &rec.db), recorded, "pgrig's replay");
    let ours = outcome.stats.report();

    seed(target, &rec.db);
    let mut cmd = Command::new(pgreplay());
    cmd.args(["-j", "-h"])
        .arg(target.socket_dir())
        .args(["-p", &target.port().to_string()])
        .arg(&rec.stderr);
    let out = pgrig_testkit::run(cmd);
    assert!(out.success(), "pgreplay failed: {}", out.stderr);
    assert_eq!(contents(target, &rec.db), recorded, "pgreplay's replay");
    for label in [
        "Calls to the server:",
        "Total number of connections:",
        "Maximum number of concurrent connections:",
        "SQL statements executed:",
        "(",
    ] {
        let theirs = out.stdout.split("Replay statistics").nth(1).unwrap_or("");
        let ours_line = stat_line(&ours, label);
        let theirs_line = stat_line(theirs, label);
        if label == "(" {
            // "(N or P% of these completed with error)": the counts, not the calls per second
            let n = |l: &str| l.split(" or ").next().unwrap_or("").to_string();
            let (a, b) = (
                ours.lines()
                    .find(|l| l.contains("completed with error"))
                    .unwrap(),
                theirs
                    .lines()
                    .find(|l| l.contains("completed with error"))
                    .unwrap(),
            );
            assert_eq!(n(a), n(b));
        } else if label != "Maximum number of concurrent connections:" {
            assert_eq!(ours_line, theirs_line);
        }
    }
}

fn at(base: Timestamp, ms: i64) -> Timestamp {
    let us = base.micros() + ms * 1000;
    Timestamp {
        sec: us.div_euclid(1_000_000),
        usec: us.rem_euclid(1_000_000) as u32,
    }
}

fn session(user: &str, db: &str, steps: &[(i64, ItemKind)]) -> Vec<Item> {
    let base = Timestamp {
        sec: 800_000_000,
        usec: 0,
    };
    let mut items = vec![Item {
        time: base,
        session: 0x1234_0000_0001,
        kind: ItemKind::Connect {
            user: user.as_bytes().to_vec(),
            database: db.as_bytes().to_vec(),
        },
    }];
    for (ms, kind) in steps {
        items.push(Item {
            time: at(base, *ms),
            session: 0x1234_0000_0001,
            kind: kind.clone(),
        });
    }
    items
}

fn exec(sql: &str) -> ItemKind {
    ItemKind::Execute {
        statement: sql.as_bytes().to_vec(),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Gaps (ms) between the marks the server's clock took.
fn gaps(db: &pgrig_testkit::TestDb) -> Vec<f64> {
    db.psql("SELECT extract(epoch FROM t - lag(t) OVER (ORDER BY n)) * 1000 FROM marks WHERE n > 0 ORDER BY n OFFSET 1")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn statements_keep_their_recorded_gaps_halved_by_speed_2_and_skipped_by_jump() {
    let db = pgrig_testkit::fresh_db("replay_timing");
    db.psql("CREATE TABLE marks (n int, t timestamptz)");
    let user = db.server().user().to_string();
    let mark = |n: i32| {
        exec(&format!(
            "INSERT INTO marks VALUES ({n}, clock_timestamp())"
        ))
    };
    let items = session(
        &user,
        &db.name,
        &[
            // mark 0 warms the new backend's caches up; the gaps are between marks 1..5
            (500, mark(0)),
            (1000, mark(1)),
            (1300, mark(2)),
            (1600, mark(3)),
            (1900, mark(4)),
            (2200, mark(5)),
            (2300, ItemKind::Disconnect),
        ],
    );
    let run = |speed: f64, jump: bool| {
        db.psql("TRUNCATE marks");
        let (o, _) = replay_on(db.server(), items.clone(), speed, jump);
        assert!(o.failure.is_none(), "{:?}", o.failure);
        gaps(&db)
    };
    for _round in 0..2 {
        let normal = run(1.0, false);
        let fast = run(2.0, false);
        let jumped = run(1.0, true);
        println!("gaps (ms) -s 1: {normal:?}  -s 2: {fast:?}  -j: {jumped:?}");
        // medians: a loaded test machine delays a statement now and then
        let (n, f) = (median(&normal), median(&fast));
        assert!(
            (n - 300.0).abs() < 25.0,
            "-s 1: median gap {n} ms, recorded 300 ms"
        );
        assert!(
            (n / f - 2.0).abs() < 0.2,
            "-s 2: median gap {f} ms against {n} ms at -s 1"
        );
        for g in &jumped {
            assert!(*g < 50.0, "-j: gap {g} ms, the idle time was not skipped");
        }
    }
}

#[test]
fn a_recorded_cancel_interrupts_the_statement_running_in_its_session() {
    let db = pgrig_testkit::fresh_db("replay_cancel");
    let user = db.server().user().to_string();
    let items = session(
        &user,
        &db.name,
        &[
            (0, exec("SELECT pg_sleep(30)")),
            (300, ItemKind::Cancel),
            (400, exec("SELECT 1")),
            (500, ItemKind::Disconnect),
        ],
    );
    let t = Instant::now();
    let (o, _) = replay_on(db.server(), items, 1.0, false);
    assert!(o.failure.is_none(), "{:?}", o.failure);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "the cancel did not interrupt pg_sleep(30)"
    );
    assert_eq!((o.stats.results, o.stats.errors), (2, 1));
    assert_eq!(o.stats.actions, 5);
}

#[test]
fn lag_behind_a_slow_statement_is_attributed_to_the_server() {
    let db = pgrig_testkit::fresh_db("replay_lag");
    db.psql("CREATE TABLE marks (n int, t timestamptz)");
    let user = db.server().user().to_string();
    let mark = |n: i32| {
        exec(&format!(
            "INSERT INTO marks VALUES ({n}, clock_timestamp())"
        ))
    };
    let items = session(
        &user,
        &db.name,
        &[
            (500, mark(0)),
            (600, exec("SELECT pg_sleep(1)")),
            (700, mark(1)),
            (800, ItemKind::Disconnect),
        ],
    );
    let (o, _) = replay_on(db.server(), items, 1.0, false);
    assert!(o.failure.is_none(), "{:?}", o.failure);
    // on the server's clock: mark 1 ran this long after its recorded 200 ms gap
    let gap: f64 = db
        .psql("SELECT extract(epoch FROM max(t) - min(t)) * 1000 FROM marks")
        .trim()
        .parse()
        .unwrap();
    let server_lag = gap - 200.0;
    let worst = o
        .stats
        .lag_by_second
        .values()
        .map(|l| l.max)
        .max()
        .unwrap()
        .as_secs_f64()
        * 1000.0;
    println!("lag: server clock {server_lag:.1} ms, reported {worst:.1} ms");
    assert!(
        server_lag > 800.0,
        "pg_sleep(1) did not delay mark 1: {server_lag} ms"
    );
    // (mark 0 itself may run a little late on a loaded machine, which shortens the gap)
    assert!(
        (worst - server_lag).abs() < 60.0,
        "reported {worst} ms, server clock {server_lag} ms"
    );
    let server: f64 = o
        .stats
        .lag_by_second
        .values()
        .map(|l| l.server.as_secs_f64())
        .sum();
    let replayer: f64 = o
        .stats
        .lag_by_second
        .values()
        .map(|l| l.replayer.as_secs_f64())
        .sum();
    assert!(server * 1000.0 > 0.9 * worst, "server share {server} s");
    assert!(
        replayer < 0.05,
        "replayer busy {replayer} s on an idle client"
    );
    let report = o.stats.lag_report(10);
    println!("{report}");
    assert!(report.contains("Lag waiting for the server:"), "{report}");
}

#[test]
fn a_contended_tpcb_log_replays_to_the_recorded_contents_without_stalling() {
    // pgreplay sends items strictly in log order and can wait for ever on a session blocked
    // by a lock whose holder's next item lies behind it; sessions here wait only for themselves
    let rec = contended_recording();
    let target = pgrig_testkit::cluster();
    seed(target, &rec.db);
    let (items, _, _) = parse(&rec.stderr, Format::Stderr, ParseOptions::default());
    let t = Instant::now();
    let (outcome, _) = replay_on(target, items, 1.0, true);
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert!(
        t.elapsed() < Duration::from_secs(120),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(contents(target, &rec.db), contents(rec.server, &rec.db));
    assert_eq!(outcome.stats.errors, 0);
}

#[test]
fn a_log_min_duration_statement_log_replays_to_the_recorded_contents() {
    let rec = duration_recording();
    let target = pgrig_testkit::cluster();
    seed(target, &rec.db);
    let (items, _, stats) = parse(&rec.stderr, Format::Stderr, ParseOptions::default());
    // extended protocol: 3 clients x 30 transactions x 5 statements
    assert!(
        stats.contains("Parametrized SQL statements processed: 450"),
        "{stats}"
    );
    let (outcome, _) = replay_on(target, items, 1.0, true);
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(contents(target, &rec.db), contents(rec.server, &rec.db));
}
