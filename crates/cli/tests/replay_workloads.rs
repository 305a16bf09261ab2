//! `pgrig replay` on logs of other workloads than pgbench's, recorded from a real server (the
//! one the suite runs on: PostgreSQL 15, and 18 in `./test`'s PostgreSQL 18 tier) in stderr,
//! csvlog and (15+) jsonlog at once: sysbench 1.0.20's `oltp_read_write` (prepared statements
//! with bind parameters, as sysbench's pgsql driver sends them) and pgrig's TPC-C. Each log
//! parses into pgreplay 1.2.0's replay file byte for byte with its parse statistics, and a replay
//! onto an identical copy of the starting database (a `CREATE DATABASE … TEMPLATE` taken before
//! the run) leaves the recorded server's contents — by pgrig from every format, and by pgreplay
//! from the formats it reads. One client each, so the contents are determined by the order.
//! Then concurrent logs with hot rows (sysbench `oltp_read_write` with 2 threads, pgbench
//! TPC-B-like with 8 clients on one branch, TPC-C with 4 terminals on one warehouse): pgrig's replays at the recorded pace, from every
//! format, leave the recorded contents with the recorded count of failed statements, and never
//! hang (docs/replay.md, "The order of statements").

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pgrig_lab::{Server, ServerOptions};
use pgrig_testkit::{fresh_db_on, run, CmdOutput, TestDb};

/// A server logging every database's statements once told to, in every format it can write.
fn logging_server() -> &'static Server {
    static SERVER: OnceLock<&'static Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let major = pgrig_lab::PgBinaries::discover()
            .map(|b| b.major())
            .unwrap_or(0);
        let dest = if major >= 15 {
            "stderr,csvlog,jsonlog"
        } else {
            "stderr,csvlog"
        };
        let o = ServerOptions::default()
            .setting("logging_collector", "on")
            .setting("log_directory", "log")
            .setting("log_filename", "rec.log")
            .setting("log_connections", "on")
            .setting("log_disconnections", "on")
            .setting("log_line_prefix", "%m|%u|%d|%c|")
            .setting("lc_messages", "C")
            .setting("log_min_messages", "warning")
            .setting("log_destination", dest);
        Box::leak(Box::new(pgrig_testkit::custom_cluster(o)))
    })
}

fn pgreplay() -> PathBuf {
    let p = PathBuf::from("/usr/bin/pgreplay");
    assert!(
        p.exists(),
        "pgreplay 1.2.0 (the oracle) is not installed: apt-get install -y pgreplay"
    );
    p
}

fn pgrig(db: &TestDb, args: &[&str]) -> CmdOutput {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args);
    run(c)
}

/// The recorded log, in its formats, cut to this test's database (the server logs every test's
/// statements into the same files).
struct Log {
    stderr: PathBuf,
    csv: PathBuf,
    json: Option<PathBuf>,
}

/// Waits until the collector has written `needle` to `path`.
fn wait_for(path: &Path, needle: &str) {
    for _ in 0..200 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} never showed {needle:?}", path.display());
}

/// The log lines of database `db` only (continuation lines kept with their entry), copied to
/// `dir`. stderr: entries start with the prefix `%m|%u|%d|%c|`; csv: whole records (a record
/// may span lines inside quotes); json: one object per line.
fn extract(server: &Server, db: &str, dir: &Path) -> Log {
    let logdir = server.data_dir().join("log");
    let marker = format!("SELECT 'recorded {db}'");
    let (s, c, j) = (
        logdir.join("rec.log"),
        logdir.join("rec.csv"),
        logdir.join("rec.json"),
    );
    wait_for(&s, &marker);
    wait_for(&c, &marker);
    let json = j.exists().then(|| {
        wait_for(&j, &format!("recorded {db}"));
        j
    });
    let keep_stderr = |text: &str| {
        let mut out = String::new();
        let mut keep = false;
        for line in text.split_inclusive('\n') {
            if line.starts_with('\t') {
                if keep {
                    out.push_str(line);
                }
                continue;
            }
            keep = line.split('|').nth(2) == Some(db);
            if keep {
                out.push_str(line);
            }
        }
        out
    };
    let keep_csv = |text: &str| {
        let mut out = String::new();
        let mut record = String::new();
        let mut quotes = 0usize;
        for line in text.split_inclusive('\n') {
            record.push_str(line);
            quotes += line.matches('"').count();
            if quotes.is_multiple_of(2) {
                if record.split(',').nth(2) == Some(&format!("\"{db}\"")) {
                    out.push_str(&record);
                }
                record.clear();
                quotes = 0;
            }
        }
        out
    };
    let keep_json = |text: &str| {
        let needle = format!("\"dbname\":\"{db}\"");
        text.split_inclusive('\n')
            .filter(|l| l.contains(&needle))
            .collect::<String>()
    };
    let put = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    Log {
        stderr: put(
            "rec.log",
            keep_stderr(&std::fs::read_to_string(&s).unwrap()),
        ),
        csv: put("rec.csv", keep_csv(&std::fs::read_to_string(&c).unwrap())),
        json: json.map(|j| put("rec.json", keep_json(&std::fs::read_to_string(j).unwrap()))),
    }
}

/// Records `workload` on database `db` (already loaded): takes a template copy of the starting
/// database, logs every statement of `db`, runs the workload, and returns the log and the copy.
fn record(db: &TestDb, workload: impl FnOnce(&TestDb), dir: &Path) -> (Log, String) {
    let start = format!("{}_start", db.name);
    let server = db.server();
    server
        .psql(
            "postgres",
            &format!("CREATE DATABASE {start} TEMPLATE {}", db.name),
        )
        .unwrap();
    db.psql(&format!(
        "ALTER DATABASE {} SET log_statement = 'all'",
        db.name
    ));
    workload(db);
    db.psql(&format!("SELECT 'recorded {}'", db.name));
    (extract(server, &db.name, dir), start)
}

/// Puts the starting copy back as `db` (no longer logging).
fn restore(db: &TestDb, start: &str) {
    let server = db.server();
    let drop = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", db.name);
    server.psql("postgres", &drop).unwrap();
    server
        .psql(
            "postgres",
            &format!("CREATE DATABASE {} TEMPLATE {start}", db.name),
        )
        .unwrap();
}

/// pgreplay's replay file and parse statistics of a log equal `pgrig replay -f`'s. False (and
/// said) when pgreplay 1.2.0 cannot read the log: PostgreSQL 18 (not 15) writes bind values as
/// `DETAIL:  Parameters: …`, which pgreplay refuses ("no parameters for prepared statement");
/// the log is then checked against the recorded contents only.
fn parses_as_pgreplay_does(db: &TestDb, log: &Path, csv: bool, dir: &Path) -> bool {
    let (theirs, ours) = (dir.join("theirs.rf"), dir.join("ours.rf"));
    let mut cmd = Command::new(pgreplay());
    cmd.arg("-f");
    if csv {
        cmd.arg("-c");
    }
    let oracle = run({
        cmd.arg("-o").arg(&theirs).arg(log);
        cmd
    });
    let capital = std::fs::read_to_string(log).is_ok_and(|t| t.contains("Parameters: $1"));
    if !oracle.success()
        && capital
        && oracle
            .stderr
            .contains("no parameters for prepared statement")
    {
        println!(
            "NOTE: pgreplay 1.2.0 cannot read {} (bind values logged as \"Parameters:\", as PostgreSQL 18 does): \
             compared with the recorded contents only",
            log.display()
        );
        return false;
    }
    assert!(oracle.success(), "pgreplay -f: {oracle:?}");
    let mut args = vec!["replay", "-f"];
    if csv {
        args.push("-c");
    }
    let (o, l) = (ours.display().to_string(), log.display().to_string());
    args.extend(["-o", &o, &l]);
    let out = pgrig(db, &args);
    assert!(out.success(), "pgrig replay -f: {out:?}");
    assert_eq!(out.stdout, oracle.stdout, "{l}: parse statistics");
    let (a, b) = (
        std::fs::read(&ours).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    assert!(a.len() > 1000, "{l}: a replay file of {} bytes", a.len());
    assert!(
        a == b,
        "{l}: replay files differ ({} and {} bytes)",
        a.len(),
        b.len()
    );
    true
}

/// Replays `log` onto a fresh copy of the starting database with `program` (pgrig replay or
/// pgreplay), `-j`, and returns the contents it leaves.
fn replayed_contents(
    db: &TestDb,
    start: &str,
    log: &Path,
    pgreplay_oracle: bool,
    csv: bool,
    contents: &dyn Fn(&TestDb) -> String,
) -> (String, String) {
    restore(db, start);
    let server = db.server();
    let (host, port) = (
        server.socket_dir().display().to_string(),
        server.port().to_string(),
    );
    let mut args: Vec<&str> = vec!["-j", "-h", &host, "-p", &port];
    if csv {
        args.push("-c");
    }
    let l = log.display().to_string();
    args.push(&l);
    let out = if pgreplay_oracle {
        let mut c = db.command(pgreplay());
        c.args(&args);
        run(c)
    } else {
        let mut all = vec!["replay"];
        all.extend(&args);
        pgrig(db, &all)
    };
    assert!(out.success(), "replay of {l}: {out:?}");
    let errors = out
        .stdout
        .lines()
        .find(|l| l.contains("completed with error"))
        .and_then(|l| l.split(" or ").next())
        .unwrap_or_else(|| panic!("no error count in:\n{}", out.stdout))
        .trim()
        .to_string();
    (contents(db), errors)
}

/// Records `workload` and checks parse and replay of every format against pgreplay and the
/// recorded contents.
fn differential(
    hint: &str,
    load: impl FnOnce(&TestDb),
    workload: impl FnOnce(&TestDb),
    contents: &dyn Fn(&TestDb) -> String,
) {
    let server = logging_server();
    let db = fresh_db_on(server, hint);
    load(&db);
    let dir = tempfile::tempdir().unwrap();
    let (log, start) = record(&db, workload, dir.path());
    let recorded = contents(&db);
    restore(&db, &start);
    assert_ne!(contents(&db), recorded, "the workload changed nothing");

    for (path, csv) in [(&log.stderr, false), (&log.csv, true)] {
        let oracle = parses_as_pgreplay_does(&db, path, csv, dir.path());
        let (ours, our_errors) = replayed_contents(&db, &start, path, false, csv, contents);
        assert_eq!(ours, recorded, "pgrig's replay of {}", path.display());
        if !oracle {
            continue;
        }
        let (theirs, their_errors) = replayed_contents(&db, &start, path, true, csv, contents);
        assert_eq!(theirs, recorded, "pgreplay's replay of {}", path.display());
        assert_eq!(
            our_errors,
            their_errors,
            "statements that failed, {}",
            path.display()
        );
    }
    if let Some(json) = &log.json {
        let (ours, _) = replayed_contents(&db, &start, json, false, false, contents);
        assert_eq!(ours, recorded, "pgrig's replay of the jsonlog");
    }
    let _ = server.psql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {start} WITH (FORCE)"),
    );
}

#[test]
fn a_sysbench_oltp_read_write_log_replays_to_the_recorded_contents_as_pgreplay_does() {
    let sysbench = pgrig_testkit::sysbench_oracle();
    let sb = |db: &TestDb, args: &[&str]| {
        let out = run(db.sysbench_command(&sysbench, args));
        assert!(out.success(), "sysbench {args:?}: {out:?}");
    };
    differential(
        "replay_sysbench",
        |db| {
            sb(
                db,
                &[
                    "oltp_read_write",
                    "--tables=2",
                    "--table-size=500",
                    "prepare",
                ],
            )
        },
        |db| {
            sb(
                db,
                &[
                    "oltp_read_write",
                    "--tables=2",
                    "--table-size=500",
                    "--threads=1",
                    "--events=60",
                    "--time=0",
                    "run",
                ],
            )
        },
        &|db| {
            db.psql(
                "SELECT (SELECT md5(string_agg(concat_ws(':', id, k, c, pad), ',' ORDER BY id)) FROM sbtest1), \
                        (SELECT md5(string_agg(concat_ws(':', id, k, c, pad), ',' ORDER BY id)) FROM sbtest2)",
            )
        },
    );
}

#[test]
fn a_tpcc_log_replays_to_the_recorded_contents_as_pgreplay_does() {
    differential(
        "replay_tpcc",
        |db| {
            let out = pgrig(db, &["tpcc", "load", "--warehouses", "1"]);
            assert!(out.success(), "tpcc load: {out:?}");
        },
        |db| {
            let out = pgrig(
                db,
                &[
                    "run",
                    "--target",
                    &db.conninfo(),
                    "-w",
                    "tpcc",
                    "-o",
                    "warehouses=1",
                    "-c",
                    "1",
                    "-T",
                    "2s",
                ],
            );
            assert!(out.success(), "tpcc run: {out:?}");
        },
        &tpcc_contents,
    );
}

/// The statements the recorded server logged as failed (`|ERROR:` entries of the stderr log).
fn recorded_errors(log: &Log) -> usize {
    std::fs::read_to_string(&log.stderr)
        .unwrap()
        .lines()
        .filter(|l| l.split('|').nth(4).is_some_and(|m| m.starts_with("ERROR:")))
        .count()
}

/// Replays of one log a concurrent test makes before it calls the log's order lost.
const ATTEMPTS: usize = 3;

/// Recordings a concurrent test makes before it calls the replay wrong: a recording whose log
/// order is not the order its statements took their locks in (docs/replay.md, "What the log
/// cannot tell") replays to another end state every time, so a missed recording is made again.
const RECORDINGS: usize = 3;

/// Records a concurrent `workload` and replays its log from every format with pgrig (without
/// `-j`: the recorded timing) onto a copy of the starting database, `rounds` times from the
/// stderr log: each leaves the recorded contents with the recorded count of failed statements
/// (in one of [`ATTEMPTS`] replays), for one of [`RECORDINGS`] recordings.
fn concurrent(
    hint: &str,
    load: impl Fn(&TestDb),
    workload: impl Fn(&TestDb),
    contents: &dyn Fn(&TestDb) -> String,
    rounds: usize,
) {
    // the order a replay keeps depends on timing: not beside the suite's heaviest loads
    let _turn = crate::common::alone();
    let mut missed = Vec::new();
    for recording in 0..RECORDINGS {
        let name = format!("{hint}_{recording}");
        match record_and_replay(&name, &load, &workload, contents, rounds) {
            Ok(()) => return,
            Err(e) => missed.push(format!("recording {recording}: {e}")),
        }
    }
    panic!(
        "no recording of {RECORDINGS} replayed as recorded:\n{}",
        missed.join("\n")
    );
}

/// One recording of [`concurrent`], replayed from every format: `Err` names the formats whose
/// [`ATTEMPTS`] replays all differed from the recording.
fn record_and_replay(
    hint: &str,
    load: &dyn Fn(&TestDb),
    workload: &dyn Fn(&TestDb),
    contents: &dyn Fn(&TestDb) -> String,
    rounds: usize,
) -> Result<(), String> {
    let server = logging_server();
    let db = fresh_db_on(server, hint);
    load(&db);
    let dir = tempfile::tempdir().unwrap();
    let (log, start) = record(&db, workload, dir.path());
    let recorded = contents(&db);
    let errors = recorded_errors(&log);
    // PGRIG_KEEP_LOG=DIR keeps the recorded stderr log there, to look at a failure
    if let Ok(d) = std::env::var("PGRIG_KEEP_LOG") {
        std::fs::copy(&log.stderr, format!("{d}/{hint}.log")).unwrap();
    }
    restore(&db, &start);
    assert_ne!(contents(&db), recorded, "the workload changed nothing");
    let mut formats = vec![(&log.stderr, false); rounds];
    formats.push((&log.csv, true));
    if let Some(j) = &log.json {
        formats.push((j, false));
    }
    let mut lost = Vec::new();
    for (path, csv) in formats {
        // the log cannot settle every order (an entry is written before the statement takes its
        // snapshot and locks: docs/replay.md, "What the log cannot tell"), so on a loaded
        // machine a replay may differ from the recording now and then; each format gets
        // ATTEMPTS replays and must reproduce the recording in one (a replay out of the
        // recorded order missed in every one: 57–61 rows differed, 0 of 3)
        let mut missed = Vec::new();
        for _ in 0..ATTEMPTS {
            let (ours, our_errors) = replayed_in_time(&db, &start, path, csv, contents);
            if ours == recorded && our_errors == errors.to_string() {
                break;
            }
            missed.push(format!(
                "contents equal: {}, failed statements {our_errors} (recorded: {errors})",
                ours == recorded
            ));
        }
        if missed.len() == ATTEMPTS {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            lost.push(format!("{name}: {missed:?}"));
        }
    }
    let _ = server.psql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {start} WITH (FORCE)"),
    );
    if lost.is_empty() {
        Ok(())
    } else {
        Err(lost.join("; "))
    }
}

/// [`replayed_contents`] by pgrig at the recorded pace (no `-j`), bounded in time.
fn replayed_in_time(
    db: &TestDb,
    start: &str,
    log: &Path,
    csv: bool,
    contents: &dyn Fn(&TestDb) -> String,
) -> (String, String) {
    restore(db, start);
    let server = db.server();
    let (host, port) = (
        server.socket_dir().display().to_string(),
        server.port().to_string(),
    );
    let l = log.display().to_string();
    let mut args = vec!["replay", "-h", &host, "-p", &port];
    if csv {
        args.push("-c");
    }
    args.push(&l);
    let mut c = db.command("timeout");
    c.arg("300").arg(env!("CARGO_BIN_EXE_pgrig")).args(&args);
    let out = run(c);
    assert!(
        out.success(),
        "replay of {l} (status 124: it hung): {out:?}"
    );
    let errors = out
        .stdout
        .lines()
        .find(|l| l.contains("completed with error"))
        .and_then(|l| l.trim().trim_start_matches('(').split(" or ").next())
        .unwrap_or_else(|| panic!("no error count in:\n{}", out.stdout))
        .trim()
        .to_string();
    (contents(db), errors)
}

#[test]
fn a_concurrent_sysbench_log_on_hot_rows_replays_to_the_recorded_end_state_and_errors() {
    let sysbench = pgrig_testkit::sysbench_oracle();
    let sb = |db: &TestDb, args: &[&str]| {
        let out = run(db.sysbench_command(&sysbench, args));
        assert!(out.success(), "sysbench {args:?}: {out:?}");
    };
    let table = ["oltp_read_write", "--tables=1", "--table-size=10000"];
    concurrent(
        "replay_sb_hot",
        |db| sb(db, &[&table[..], &["prepare"]].concat()),
        |db| {
            let run = ["--threads=2", "--events=500", "--time=0", "run"];
            sb(db, &[&table[..], &run].concat())
        },
        &|db| {
            db.psql("SELECT md5(string_agg(concat_ws(':', id, k, c, pad), ',' ORDER BY id)) FROM sbtest1")
        },
        2,
    );
}

#[test]
fn a_pgbench_tpcb_log_of_8_clients_at_scale_1_replays_to_the_recorded_end_state() {
    concurrent(
        "replay_tpcb_hot",
        |db| {
            let out = run({
                let mut c = db.pgbench();
                c.args(["-i", "-s", "1", "-q"]);
                c
            });
            assert!(out.success(), "pgbench -i: {out:?}");
        },
        |db| {
            let out = run({
                let mut c = db.pgbench();
                c.args(["-c", "8", "-t", "60", "-n"]);
                c
            });
            assert!(out.success(), "pgbench: {out:?}");
        },
        // the balances, and history without its times (mtime is the replay's own)
        &|db| {
            db.psql(
                "SELECT (SELECT md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)) FROM pgbench_accounts), \
                        (SELECT string_agg(tid || ':' || tbalance, ',' ORDER BY tid) FROM pgbench_tellers), \
                        (SELECT string_agg(bid || ':' || bbalance, ',' ORDER BY bid) FROM pgbench_branches), \
                        (SELECT md5(string_agg(concat_ws(':', tid, bid, aid, delta), ',' ORDER BY tid, bid, aid, delta)) FROM pgbench_history)",
            )
        },
        1,
    );
}

/// What TPC-C's transactions change, without the times they write (o_entry_d, h_date, ...).
fn tpcc_contents(db: &TestDb) -> String {
    db.psql(
                "SELECT (SELECT sum(w_ytd) FROM warehouse), \
                        (SELECT string_agg(d_id || ':' || d_next_o_id || ':' || d_ytd, ',' ORDER BY d_id) FROM district), \
                        (SELECT md5(string_agg(concat_ws(':', c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt), ',' ORDER BY c_w_id, c_d_id, c_id)) FROM customer), \
                        (SELECT md5(string_agg(concat_ws(':', s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt), ',' ORDER BY s_w_id, s_i_id)) FROM stock), \
                        (SELECT md5(string_agg(concat_ws(':', o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt), ',' ORDER BY o_w_id, o_d_id, o_id)) FROM orders), \
                        (SELECT count(*) FROM new_order), (SELECT count(*) FROM history), \
                        (SELECT md5(string_agg(concat_ws(':', ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_quantity, ol_amount), ',' ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number)) FROM order_line)",
            )
}

#[test]
fn a_tpcc_log_of_4_terminals_replays_to_the_recorded_end_state_and_errors() {
    concurrent(
        "replay_tpcc_hot",
        |db| {
            let out = pgrig(db, &["tpcc", "load", "--warehouses", "1"]);
            assert!(out.success(), "tpcc load: {out:?}");
        },
        |db| {
            let target = db.conninfo();
            let args = [
                "run",
                "--target",
                &target,
                "-w",
                "tpcc",
                "-o",
                "warehouses=1",
            ];
            let out = pgrig(db, &[&args[..], &["-c", "4", "-T", "3s"]].concat());
            assert!(out.success(), "tpcc run: {out:?}");
        },
        &tpcc_contents,
        1,
    );
}

/// A log whose strict order would wait for ever on the replay server: A's `UPDATE` sleeps 2 s
/// before it locks its row, so after the order's 1 s B's `UPDATE` (logged after it) is sent
/// and takes the row first; A then waits for B's lock, and A's `COMMIT`, the next item, cannot
/// be sent until A is answered. pgrig lets B's `COMMIT` go first (the end state shows B's
/// update under A's); pgreplay waits for ever.
#[test]
fn a_lock_taken_in_another_order_than_logged_does_not_hang_the_replay() {
    let db = fresh_db_on(logging_server(), "replay_flip");
    db.psql("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1)");
    let (u, d) = (db.server().user().to_string(), db.name.clone());
    let line = |ms: u32, s: &str, m: &str| {
        format!(
            "2026-01-01 10:00:{:02}.{:03} UTC|{u}|{d}|6b0a0000.{s}|LOG:  {m}\n",
            ms / 1000,
            ms % 1000
        )
    };
    let log: String = [
        line(0, "a", "connection authorized: user=x"),
        line(1, "a", "statement: BEGIN"),
        line(
            10,
            "a",
            "statement: UPDATE t SET v = v + 1 WHERE id = 1 AND pg_sleep(2) IS NOT NULL",
        ),
        line(20, "b", "connection authorized: user=x"),
        line(21, "b", "statement: BEGIN"),
        line(30, "b", "statement: UPDATE t SET v = v * 10 WHERE id = 1"),
        line(2040, "a", "statement: COMMIT"),
        line(2050, "b", "statement: COMMIT"),
        line(2060, "a", "disconnection: session time: 0:00:02.060"),
        line(2070, "b", "disconnection: session time: 0:00:02.050"),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flip.log");
    std::fs::write(&path, log).unwrap();
    let server = db.server();
    let (host, port) = (
        server.socket_dir().display().to_string(),
        server.port().to_string(),
    );
    let p = path.display().to_string();
    let args = ["-h", host.as_str(), "-p", port.as_str(), p.as_str()];
    let mut c = db.command("timeout");
    c.arg("60")
        .arg(env!("CARGO_BIN_EXE_pgrig"))
        .arg("replay")
        .args(args);
    let out = run(c);
    assert!(out.success(), "pgrig replay (124: it hung): {out:?}");
    assert!(
        out.stdout
            .contains("(0 or 0.000% of these completed with error)"),
        "{out:?}"
    );
    // B's update, then A's on top of it
    assert_eq!(db.psql("SELECT v FROM t"), "11");
    db.psql("UPDATE t SET v = 1");
    let mut c = db.command("timeout");
    c.arg("15").arg(pgreplay()).args(args);
    let out = run(c);
    assert_eq!(out.code, Some(124), "pgreplay did not hang: {out:?}");
    db.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
}
