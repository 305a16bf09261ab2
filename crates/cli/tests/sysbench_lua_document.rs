//! A Lua script's run document (`pgrig sysbench SCRIPT run --json FILE --store PATH`): its
//! figures are those of sysbench's report printed by the same run (final report and interval
//! lines, parsed), and the server's own counters agree — `pg_stat_statements` calls per
//! statement equal the document's queries by class, `pg_stat_database`'s commits grow by at
//! least the events, the table holds one row update per event — and the stored run reads back
//! as the same document. Differential: sysbench 1.0.20 runs the same script with the same
//! `--events`, and the server counts the same statements for it.

use crate::sysbench_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pgrig_results::document::RunDocument;
use pgrig_testkit::{fresh_db_on, run, CmdOutput, TestDb};
use sysbench_common::{command, link, oracle, reset_statements, statements_cluster};

/// Per event: BEGIN, one UPDATE (prepared), one SELECT (a query), COMMIT — deterministic.
const LEDGER: &str = r#"
sysbench.cmdline.options = { rows = {"rows in the ledger", 4} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE ledger (id int PRIMARY KEY, n bigint NOT NULL)")
  con:query(string.format("INSERT INTO ledger SELECT g, 0 FROM generate_series(1, %d) g",
                          sysbench.opt.rows))
end
function thread_init()
  con = sysbench.sql.driver():connect()
  bump = con:prepare("UPDATE ledger SET n = n + 1 WHERE id = ?")
  id = bump:bind_create(sysbench.sql.type.INT)
  bump:bind_param(id)
end
function event()
  con:query("BEGIN")
  id:set(sysbench.rand.uniform(1, sysbench.opt.rows))
  bump:execute()
  con:query_row("SELECT sum(n) FROM ledger")
  con:query("COMMIT")
end
"#;

fn script_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-sb-doc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("script dir");
    dir
}

fn run_in(program: &Path, db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = command(program, db, args);
    c.current_dir(dir);
    run(c)
}

/// The report line starting with `label` (after its indentation): its first field.
fn field(report: &str, label: &str) -> String {
    let line = (report.lines())
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line in\n{report}"));
    let rest = line.trim_start()[label.len()..].trim();
    rest.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn number(report: &str, label: &str) -> f64 {
    let f = field(report, label);
    f.trim_end_matches('s')
        .parse()
        .unwrap_or_else(|_| panic!("{label} {f}"))
}

/// `pg_stat_statements` of `db`: calls by the statement's first word (`UPDATE`, `SELECT`,
/// `BEGIN`, `COMMIT`) among the ledger's statements and the transaction commands.
fn calls(db: &TestDb) -> BTreeMap<String, u64> {
    let rows = db.psql(
        "SELECT split_part(query, ' ', 1), calls FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND (query LIKE '%ledger%' OR query IN ('BEGIN', 'COMMIT'))",
    );
    let mut out = BTreeMap::new();
    for l in rows.lines().filter(|l| !l.is_empty()) {
        let (word, n) = l.split_once('|').expect("two columns");
        *out.entry(word.to_uppercase()).or_insert(0) += n.parse::<u64>().expect("calls");
    }
    out
}

fn commits(db: &TestDb) -> u64 {
    let q = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()";
    db.psql(q).trim().parse().expect("xact_commit")
}

/// The database's commits, once the clients' counts have reached the statistics (they are
/// flushed when a session ends, shortly after): at least `floor` after waiting up to 5 s.
fn commits_reaching(db: &TestDb, floor: u64) -> u64 {
    let t = std::time::Instant::now();
    loop {
        let n = commits(db);
        if n >= floor || t.elapsed().as_secs() >= 5 {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn prepared_db(name: &str, dir: &Path) -> TestDb {
    let db = fresh_db_on(statements_cluster(), name);
    db.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    let prep = run_in(link(), &db, dir, &["ledger.lua", "prepare"]);
    assert_eq!(prep.code, Some(0), "{}{}", prep.stdout, prep.stderr);
    db
}

#[test]
fn a_scripts_run_document_has_the_reports_figures_and_the_servers_counts() {
    let dir = script_dir("figures");
    std::fs::write(dir.join("ledger.lua"), LEDGER).unwrap();
    let db = prepared_db("sb_lua_doc", &dir);
    let json = dir.join("run.json");
    let store = dir.join("runs.sqlite");
    reset_statements(&db);
    let before = commits(&db);
    let json_arg = format!("--json={}", json.display());
    let store_arg = format!("--store={}", store.display());
    let args = [
        "ledger.lua",
        "--threads=2",
        "--events=300",
        "--time=0",
        &json_arg,
        &store_arg,
        "run",
    ];
    let out = run_in(link(), &db, &dir, &args);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc: RunDocument =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json file"))
            .expect("a run document");
    let r = &out.stdout;
    // the report's figures
    let events = doc.transactions.ok;
    assert_eq!(events, 300);
    assert_eq!(number(r, "total number of events:") as u64, events);
    assert_eq!(number(r, "transactions:") as u64, events);
    let counter = |k: &str| doc.workload_counters.get(k).copied().unwrap_or(u64::MAX);
    assert_eq!(number(r, "read:") as u64, counter("queries_read"));
    assert_eq!(number(r, "write:") as u64, counter("queries_write"));
    assert_eq!(number(r, "other:") as u64, counter("queries_other"));
    assert_eq!(
        number(r, "ignored errors:") as u64,
        doc.transactions.retries
    );
    assert_eq!(number(r, "reconnects:") as u64, doc.reconnects);
    assert!(
        (number(r, "total time:") - doc.duration_s).abs() < 0.0002,
        "{r}"
    );
    let ms = |label: &str, v: f64| {
        let printed = number(r, label);
        assert!((printed - v).abs() <= 0.0051, "{label} {printed} vs {v}");
    };
    ms("min:", doc.latency_ms.min);
    ms("avg:", doc.latency_ms.mean);
    ms("max:", doc.latency_ms.max);
    ms("sum:", doc.latency_ms.mean * events as f64);
    let histogram: u64 = doc.latency_histogram.buckets.iter().map(|b| b.1).sum();
    assert_eq!(histogram, events);
    let per_client: u64 = doc.clients.iter().map(|c| c.transactions).sum();
    assert_eq!((doc.clients.len(), per_client), (2, events));
    assert_eq!(doc.client_cpu.threads.len(), 2);
    assert!(doc.client_cpu.cpu_time_s > 0.0, "{:?}", doc.client_cpu);
    assert_eq!(doc.workload.as_deref(), Some("sysbench"));
    assert_eq!(doc.scripts[0].desc, "ledger.lua");
    assert_eq!(
        doc.workload_options.get("rows").map(String::as_str),
        Some("4")
    );
    // the server's counts
    let c = calls(&db);
    assert_eq!(c.get("UPDATE").copied(), Some(events), "{c:?}");
    assert_eq!(
        c.get("SELECT").copied(),
        Some(counter("queries_read")),
        "{c:?}"
    );
    assert_eq!(
        c.get("UPDATE").copied(),
        Some(counter("queries_write")),
        "{c:?}"
    );
    let tx = c.get("BEGIN").copied().unwrap_or(0) + c.get("COMMIT").copied().unwrap_or(0);
    assert_eq!(tx, counter("queries_other"), "{c:?}");
    assert!(commits_reaching(&db, before + events) >= before + events);
    assert_eq!(
        db.psql("SELECT sum(n) FROM ledger").trim(),
        events.to_string()
    );
    // the stored run is the same document
    let stored = pgrig_study::store::Store::open_existing(&store.display().to_string())
        .expect("store")
        .export(None)
        .expect("export");
    assert_eq!(stored.len(), 1);
    let view = pgrig_results::view::RunView::of(&stored[0]);
    assert_eq!(view.tps, Some(doc.tps));
    assert_eq!(view.transactions.ok, Some(events as f64));
    assert_eq!(view.series.len(), doc.series.len());
    assert_eq!(view.workload.as_deref(), Some("sysbench"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scripts_interval_lines_are_its_documents_seconds() {
    let dir = script_dir("series");
    std::fs::write(dir.join("ledger.lua"), LEDGER).unwrap();
    let db = prepared_db("sb_lua_series", &dir);
    let json = dir.join("run.json");
    let json_arg = format!("--json={}", json.display());
    let args = [
        "ledger.lua",
        "--threads=2",
        "--time=3",
        "--report-interval=1",
        &json_arg,
        "run",
    ];
    let out = run_in(link(), &db, &dir, &args);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc: RunDocument =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json file")).unwrap();
    let lines: Vec<(u64, f64, f64)> = (out.stdout.lines())
        .filter(|l| l.starts_with('['))
        .map(|l| {
            let sec = l[1..]
                .trim_start()
                .split('s')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let after = |k: &str| -> f64 {
                let at = l.find(k).unwrap() + k.len();
                l[at..].split_whitespace().next().unwrap().parse().unwrap()
            };
            (sec, after("tps: "), after("err/s: "))
        })
        .collect();
    assert!(lines.len() >= 2, "{}", out.stdout);
    for (sec, tps, err) in &lines {
        let s = doc
            .series
            .get(*sec as usize - 1)
            .expect("the second in the series");
        assert_eq!(s.second, *sec);
        assert_eq!(
            (s.tps as f64, s.retries as f64),
            (*tps, *err),
            "{}",
            out.stdout
        );
    }
    let seconds: u64 = doc.series.iter().map(|s| s.tps).sum();
    assert!(seconds <= doc.transactions.ok && seconds > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sysbench_and_pgrig_send_the_same_statements_for_a_scripts_events() {
    let dir = script_dir("oracle");
    std::fs::write(dir.join("ledger.lua"), LEDGER).unwrap();
    let ours = prepared_db("sb_lua_doc_ours", &dir);
    let theirs = prepared_db("sb_lua_doc_theirs", &dir);
    let json = dir.join("run.json");
    let json_arg = format!("--json={}", json.display());
    let args = [
        "ledger.lua",
        "--threads=2",
        "--events=200",
        "--time=0",
        "run",
    ];
    reset_statements(&ours);
    reset_statements(&theirs);
    let mut with_json = args.to_vec();
    with_json.insert(4, &json_arg);
    let a = run_in(link(), &ours, &dir, &with_json);
    assert_eq!(a.code, Some(0), "{}{}", a.stdout, a.stderr);
    let ours_calls = calls(&ours);
    let b = run_in(&oracle(), &theirs, &dir, &args);
    assert_eq!(b.code, Some(0), "sysbench: {}{}", b.stdout, b.stderr);
    let theirs_calls = calls(&theirs);
    assert_eq!(ours_calls, theirs_calls);
    assert_eq!(number(&a.stdout, "total number of events:"), 200.0);
    assert_eq!(number(&b.stdout, "total number of events:"), 200.0);
    for label in ["read:", "write:", "other:", "total:"] {
        assert_eq!(
            number(&a.stdout, label),
            number(&b.stdout, label),
            "{label}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scripts_rate_paces_its_events_as_sysbench_does() {
    let dir = script_dir("rate");
    std::fs::write(dir.join("ledger.lua"), LEDGER).unwrap();
    let ours = prepared_db("sb_lua_rate_ours", &dir);
    let theirs = prepared_db("sb_lua_rate_theirs", &dir);
    let json = dir.join("run.json");
    let json_arg = format!("--json={}", json.display());
    // 40 events a second for 3 s: 120 expected (Poisson, standard deviation 11)
    let args = ["ledger.lua", "--threads=2", "--rate=40", "--time=3", "run"];
    let mut with_json = args.to_vec();
    with_json.insert(4, &json_arg);
    let a = run_in(link(), &ours, &dir, &with_json);
    assert_eq!(a.code, Some(0), "{}{}", a.stdout, a.stderr);
    let b = run_in(&oracle(), &theirs, &dir, &args);
    assert_eq!(b.code, Some(0), "sysbench: {}{}", b.stdout, b.stderr);
    let doc: RunDocument =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json file")).unwrap();
    for out in [&a.stdout, &b.stdout] {
        assert!(out.contains("Target transaction rate: 40/sec"), "{out}");
        let events = number(out, "total number of events:");
        assert!(
            (60.0..=180.0).contains(&events),
            "{events} events at 40/s for 3 s\n{out}"
        );
    }
    assert_eq!(
        doc.transactions.ok as f64,
        number(&a.stdout, "total number of events:")
    );
    assert_eq!(doc.options.rate, Some(40.0));
    assert!(doc.schedule_lag_ms.max >= doc.schedule_lag_ms.mean && doc.schedule_lag_ms.mean >= 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Statements of every kind, prepared and not: what sysbench's pgsql driver counts as read,
/// write and other follows the result (rows, a row count in the command tag, or neither), not
/// the statement's first word.
const KINDS: &str = r#"
function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("CREATE TEMP TABLE IF NOT EXISTS k (id int, v int)")
  sel = con:prepare("SELECT v FROM k WHERE id = ?")
  upd = con:prepare("UPDATE k SET v = v + 1 WHERE id = ?")
  a = sel:bind_create(sysbench.sql.type.INT); sel:bind_param(a)
  b = upd:bind_create(sysbench.sql.type.INT); upd:bind_param(b)
end
function event()
  con:query("BEGIN ISOLATION LEVEL REPEATABLE READ")
  con:query("SET LOCAL work_mem = '8MB'")
  con:query("INSERT INTO k VALUES (1, 1)")
  a:set(1); sel:execute()
  b:set(-5); upd:execute()
  con:query("SELECT 1 WHERE false")
  con:query("DELETE FROM k WHERE id = 1 RETURNING v")
  con:query("CREATE TEMP TABLE IF NOT EXISTS k2 (id int)")
  con:query("COMMIT")
end
"#;

#[test]
fn query_classes_follow_the_result_as_sysbenchs_driver_counts_them() {
    let dir = script_dir("kinds");
    std::fs::write(dir.join("kinds.lua"), KINDS).unwrap();
    let db = fresh_db_on(statements_cluster(), "sb_lua_kinds");
    for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        let args = ["kinds.lua", "--events=20", "--time=0", mode, "run"];
        let ours = run_in(link(), &db, &dir, &args);
        assert_eq!(ours.code, Some(0), "{}{}", ours.stdout, ours.stderr);
        let theirs = run_in(&oracle(), &db, &dir, &args);
        assert_eq!(
            theirs.code,
            Some(0),
            "sysbench: {}{}",
            theirs.stdout,
            theirs.stderr
        );
        for label in ["read:", "write:", "other:", "total:"] {
            assert_eq!(
                number(&ours.stdout, label),
                number(&theirs.stdout, label),
                "{mode} {label}\npgrig:\n{}\nsysbench:\n{}",
                ours.stdout,
                theirs.stdout
            );
        }
        // reads: the SELECTs (rows or none) and DELETE … RETURNING; writes: the INSERT (the
        // UPDATE of no row is "other", as are BEGIN, SET, CREATE and COMMIT)
        assert_eq!(number(&ours.stdout, "read:"), 60.0, "{mode}");
        assert_eq!(number(&ours.stdout, "write:"), 20.0, "{mode}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
