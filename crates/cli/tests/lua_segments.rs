//! A sysbench Lua script's run split over client hosts: `sysbench SCRIPT.lua --segments N
//! --coordinator URL ... run` (pgrig through its `sysbench` link) and `pgrig worker --segment
//! I/N --lua-script FILE` processes on loopback, coordinated through `pgrig_fleet` in the test
//! database. The merged run is checked against what the server holds (a row per event, written
//! with `sysbench.tid`) and against what each worker measured and reported itself; the trust
//! boundary — workers run only their own script of the run's SHA-256, take run options only,
//! and the coordinator stores no connection option — is checked with forged rows.

use crate::common;
use crate::lua_segments_common::{coordinator, poll, sql_lit, wait, worker};
use crate::sysbench_common::{command, link};

use std::path::{Path, PathBuf};
use std::process::Child;

use pgrig_results::document::RunDocument;
use pgrig_testkit::{fresh_db, CmdOutput, TestDb};

/// Every thread writes one row in `thread_init` (`n` < 0: its first random number, negated) and
/// one per event, each with its `sysbench.tid`; the `-- tag` comment lets a test tell a copy
/// apart.
const SCRIPT: &str = r#"
sysbench.cmdline.options = { rows = {"a script option", 10} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE seen (tid int NOT NULL, n int NOT NULL)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", sysbench.tid,
                          -sysbench.rand.uniform(1, 1000000000)))
end
function event()
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", sysbench.tid,
                          sysbench.rand.uniform(1, sysbench.opt.rows)))
end
-- tag
"#;

/// `script.lua` (with `tag` in place of the tag) in a directory of its own.
fn script(dir: &Path, tag: &str) -> PathBuf {
    let f = dir.join("script.lua");
    std::fs::write(&f, SCRIPT.replace("-- tag", &format!("-- {tag}"))).unwrap();
    f
}

/// The figure after `label` on a report line (`max:   12.55`).
fn figure(report: &str, label: &str) -> f64 {
    let line = (report.lines())
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line in:\n{report}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|v| v.trim_end_matches('s').parse().ok())
        .unwrap_or_else(|| panic!("no figure in {line:?}"))
}

#[test]
fn a_two_segment_script_run_merges_into_what_one_host_with_every_thread_does() {
    let _turn = common::alone();
    let db = fresh_db("lua_seg_merge");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let prep = command(link(), &db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stdout)
    );
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let store = dir.path().join("runs.db");
    let store_arg = format!("--store={}", store.display());
    let args = [
        "--threads=5",
        "--events=3001",
        "--rows=7",
        "--histogram",
        &json_arg,
        &store_arg,
    ];
    let coord = coordinator(&db, &file, 2, &args);
    let started: Vec<Child> = (0..2)
        .map(|i| worker(&db, i, 2, &file, &["--wait", "60"]))
        .collect();
    let ws: Vec<CmdOutput> = started.into_iter().map(wait).collect();
    let c = wait(coord);
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w.code, Some(0), "worker {i}:\n{}\n{}", w.stdout, w.stderr);
    }
    assert_eq!(c.code, Some(0), "coordinator:\n{}\n{}", c.stdout, c.stderr);
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();

    // the server's rows: one thread_init row per global thread id 0..4, one row per event
    let init = db.psql("SELECT string_agg(tid::text, ',' ORDER BY tid) FROM seen WHERE n < 0");
    assert_eq!(init.trim(), "0,1,2,3,4", "thread ids seen by the server");
    let events: u64 = db
        .psql("SELECT count(*) FROM seen WHERE n >= 0")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(events, 3001);
    assert_eq!(doc.transactions.ok, events);
    assert_eq!(figure(&c.stdout, "transactions:") as u64, events);
    let rows: u64 = db.psql("SELECT count(*) FROM seen").trim().parse().unwrap();
    assert_eq!(
        doc.workload_counters["queries_write"], rows,
        "writes = rows inserted"
    );
    assert_eq!(figure(&c.stdout, "write:") as u64, rows);
    let per_tid = db.psql(
        "SELECT string_agg(count::text, ',' ORDER BY tid) FROM \
                           (SELECT tid, count(*) FROM seen WHERE n >= 0 GROUP BY tid) t",
    );
    let ids: Vec<u32> = doc.clients.iter().map(|c| c.id).collect();
    let per_client: Vec<String> = doc
        .clients
        .iter()
        .map(|c| c.transactions.to_string())
        .collect();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    assert_eq!(per_client.join(","), per_tid.trim(), "events per thread");
    assert_eq!(
        doc.segments.as_ref().map(|s| s.merged.clone()),
        Some(vec![0, 1])
    );
    assert_eq!(doc.complete, Some(true));
    let mut show = common::pgrig_cmd(&db);
    show.args(["results", "show", "1", "--store"]).arg(&store);
    let shown = show.output().unwrap();
    let stored: RunDocument = serde_json::from_slice(&shown.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&shown.stdout)));
    assert_eq!(
        (stored.transactions.ok, stored.complete),
        (events, Some(true)),
        "--store"
    );

    // each worker's own report: events add up, the merged extremes are the workers' extremes
    let worker_events: f64 = ws
        .iter()
        .map(|w| figure(&w.stdout, "total number of events:"))
        .sum();
    assert_eq!(worker_events as u64, events);
    let most = ws
        .iter()
        .map(|w| figure(&w.stdout, "max:"))
        .fold(0.0, f64::max);
    let least = ws
        .iter()
        .map(|w| figure(&w.stdout, "min:"))
        .fold(f64::MAX, f64::min);
    assert_eq!(figure(&c.stdout, "max:"), most);
    assert_eq!(figure(&c.stdout, "min:"), least);
    assert!(
        (doc.latency_ms.max - most).abs() <= 0.005,
        "{} vs {most}",
        doc.latency_ms.max
    );
    let p95s: Vec<f64> = ws
        .iter()
        .map(|w| figure(&w.stdout, "95th percentile:"))
        .collect();
    let p95 = figure(&c.stdout, "95th percentile:");
    assert!(
        p95 >= p95s[0].min(p95s[1]) && p95 <= p95s[0].max(p95s[1]),
        "{p95} {p95s:?}"
    );
    assert!(
        c.stdout.contains("distribution"),
        "--histogram: {}",
        c.stdout
    );

    // the union of every second each worker reported on its own (the interval rows' HDR
    // histograms) is the merged histogram: same buckets, same p95
    let texts = db.psql("SELECT histogram FROM pgrig_fleet.intervals ORDER BY id");
    let mut union = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for t in texts.lines().filter(|t| !t.is_empty()) {
        union
            .add(pgrig_fleet::codec::histogram_of(t).unwrap())
            .unwrap();
    }
    assert_eq!(union.len(), events);
    let buckets: Vec<(u64, u64)> = (union.iter_recorded())
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    assert_eq!(doc.latency_histogram.buckets, buckets);
    assert_eq!(
        doc.latency_ms.p95,
        union.value_at_quantile(0.95) as f64 / 1000.0
    );
}

#[test]
fn a_worker_without_the_runs_script_refuses_and_the_coordinator_names_the_digest() {
    let db = fresh_db("lua_seg_digest");
    let (ours, theirs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = script(ours.path(), "tag");
    let other = script(theirs.path(), "edited");
    let coord = coordinator(&db, &file, 1, &["--time=1", "--segments-wait=60"]);
    let w = wait(worker(&db, 0, 1, theirs.path(), &["--wait", "60"]));
    let c = wait(coord);
    let want = pgrig_fleet::lua_script::digest(SCRIPT.as_bytes());
    assert_eq!(w.code, Some(1), "{}", w.stderr);
    assert!(
        w.stderr.contains(&format!(
            "no --lua-script file has the run's script script.lua (sha256 {want})"
        )),
        "{}",
        w.stderr
    );
    assert!(
        w.stderr.contains(&other.display().to_string()),
        "names what it has: {}",
        w.stderr
    );
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(
        c.stderr.contains("segment 0 on") && c.stderr.contains(&want),
        "{}",
        c.stderr
    );
    assert!(
        c.stderr.contains("Copy the coordinator's script.lua"),
        "{}",
        c.stderr
    );
    let rows: i64 = db
        .psql("SELECT count(*) FROM pg_tables WHERE tablename = 'seen'")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(rows, 0, "nothing ran");
}

/// A run of kind `lua` written straight into the schema, naming `file`'s digest.
fn forged_run(db: &TestDb, file: &Path, args: &[&str]) -> i64 {
    db.psql(pgrig_fleet::schema::DDL);
    let text = std::fs::read_to_string(file).unwrap();
    let sha = db.psql(&format!(
        "SELECT encode(sha256(convert_to({}, 'UTF8')), 'hex')",
        sql_lit(&text)
    ));
    let scripts = format!(
        r#"{{"lua": {{"name": "script.lua", "sha256": "{}"}}}}"#,
        sha.trim()
    );
    let arr: Vec<String> = args.iter().map(|a| sql_lit(a)).collect();
    let id = db.psql(&format!(
        "INSERT INTO pgrig_fleet.runs (segments, args, scripts, seed, interval_ms, kind) VALUES \
         (1, ARRAY[{}]::text[], {}, '1', 1000, 'lua') RETURNING id",
        arr.join(","),
        sql_lit(&scripts)
    ));
    id.trim().parse().unwrap()
}

#[test]
fn a_worker_refuses_a_stored_option_outside_the_allow_list() {
    let db = fresh_db("lua_seg_allow");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    for bad in [
        "--pgsql-host=evil.example",
        "--pgsql-password=x",
        "--test=/tmp/other.lua",
        "--config-file=/etc/passwd",
        "--json=/tmp/x.json",
        "--undeclared=1",
    ] {
        let run = forged_run(&db, &file, &["--threads=1", "--time=1", bad]);
        let w = wait(worker(
            &db,
            0,
            1,
            &file,
            &["--run", &run.to_string(), "--wait", "5"],
        ));
        assert_eq!(w.code, Some(1), "{bad}: {}", w.stderr);
        assert!(w.stderr.contains(bad), "{bad}: {}", w.stderr);
        let reg = db.psql(&format!(
            "SELECT state || ': ' || error FROM pgrig_fleet.workers WHERE run_id = {run}"
        ));
        assert!(
            reg.starts_with("failed: ") && reg.contains(bad),
            "{bad}: {reg}"
        );
    }
    // a pgbench worker does not take a Lua run, nor a Lua worker a pgbench run
    let run = forged_run(&db, &file, &["--threads=1", "--time=1"]);
    let mut c = common::pgrig_cmd(&db);
    c.args([
        "worker",
        "--segment",
        "0/1",
        "--coordinator",
        &db.url(),
        "--run",
        &run.to_string(),
        "--wait",
        "5",
    ]);
    let w = c.output().unwrap();
    let err = String::from_utf8_lossy(&w.stderr);
    assert_eq!(w.status.code(), Some(1), "{err}");
    assert!(err.contains("give this worker --lua-script FILE"), "{err}");
}

#[test]
fn connection_options_on_the_coordinators_command_line_are_not_stored() {
    let db = fresh_db("lua_seg_conn");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let args = [
        "--pgsql-password=sekret-pw",
        "--threads=2",
        "--time=1",
        "--rows=3",
        "--segments-wait=1",
    ];
    let c = wait(coordinator(&db, &file, 2, &args));
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(
        c.stderr.contains("only 0 of 2 segments registered"),
        "{}",
        c.stderr
    );
    assert!(c.stderr.contains("--pgsql-host, --pgsql-port, --pgsql-user, --pgsql-db, --pgsql-password: not sent to workers")
        || c.stderr.contains("not sent to workers"), "{}", c.stderr);
    assert!(!format!("{}{}", c.stdout, c.stderr).contains("sekret"));
    let row = db.psql("SELECT kind, array_to_string(args, ' '), scripts FROM pgrig_fleet.runs");
    let f: Vec<&str> = row.trim().split('|').collect();
    assert_eq!(f[0], "lua");
    let seed = f[1].rsplit("--rand-seed=").next().unwrap();
    assert_eq!(
        f[1],
        format!("--threads=2 --time=1 --rows=3 --rand-seed={seed}")
    );
    assert!(
        !row.contains("pgsql") && !row.contains("sekret") && !row.contains("db-driver"),
        "{row}"
    );
    assert!(
        !row.contains("thread_init"),
        "the script's text is not stored: {row}"
    );
    let want = pgrig_fleet::lua_script::digest(SCRIPT.as_bytes());
    assert!(f[2].contains(&want) && f[2].contains("script.lua"), "{row}");
}

#[test]
fn segments_split_a_script_files_run_only() {
    let db = fresh_db("lua_seg_cmds");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let coord = format!("--coordinator={}", db.url());
    for (args, says) in [
        (
            vec![file.to_str().unwrap(), "--segments=2", &coord, "prepare"],
            "--segments: only `run`",
        ),
        (
            vec![file.to_str().unwrap(), "--segments=2", &coord, "cleanup"],
            "--segments: only `run`",
        ),
        (
            vec!["oltp_read_only", "--segments=2", &coord, "run"],
            "--segments: 'oltp_read_only' is a bundled test",
        ),
        (
            vec![file.to_str().unwrap(), "--segments=2", "run"],
            "--segments needs --coordinator",
        ),
        (
            vec![
                file.to_str().unwrap(),
                "--segments=3",
                "--threads=2",
                &coord,
                "run",
            ],
            "needs at least 3 threads",
        ),
    ] {
        let out = command(link(), &db, &args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}");
        assert!(stdout.contains(says), "{args:?}: {stdout}");
    }
    let runs = db.psql("SELECT to_regclass('pgrig_fleet.runs') IS NULL");
    assert_eq!(runs.trim(), "t", "no run was written");
}

#[test]
fn a_forged_result_is_refused_naming_the_row_and_nothing_is_reported() {
    let db = fresh_db("lua_seg_forged");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let coord = coordinator(
        &db,
        &file,
        1,
        &["--threads=1", "--time=1", "--segments-wait=30"],
    );
    let run = poll(
        &db,
        "SELECT max(id) FROM pgrig_fleet.runs WHERE to_regclass('pgrig_fleet.runs') IS NOT NULL",
    );
    let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    h.record(1000).unwrap();
    // one event, sound figures, but thread 3 in a run of one thread
    let forged = serde_json::json!({
        "events": 1, "reads": 0, "writes": 1, "other": 0, "errors": 0, "reconnects": 0,
        "restarted": 0, "sql_used": true, "latency": [1.0, 1.0, 1.0, 1.0e6],
        "hdr": pgrig_fleet::codec::histogram_text(&h), "slots": [[0, 1]], "lag": [0, 0.0, 0.0],
        "elapsed_s": 1.0, "started_unix_s": 1.7e9, "seconds": [[1, 0, 1.0, 0, 1, 0, 0, 1]],
        "threads": [[1, 0.001, 0.0, 0.0, 0.0, 1.0]], "first_thread": 3, "fatal": false, "interrupted": false,
        "options": [["rows", "10"]], "server_version": "15"
    });
    db.psql(&format!(
        "INSERT INTO pgrig_fleet.workers (run_id, segment, host, cores, version, clock_offset_ms, \
         clock_error_ms, state, result) VALUES ({run}, 0, 'forger', 1, 'x', 0, 0, 'done', {})",
        sql_lit(&forged.to_string())
    ));
    let c = wait(coord);
    assert_eq!(c.code, Some(1), "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stderr.contains(&format!("run {run}: refused the result of segment 0 (host \"forger\"): it holds threads 3 to 3, not the segment's 0 to 0")),
        "{}",
        c.stderr
    );
    assert!(
        !c.stdout.contains("transactions:"),
        "no report: {}",
        c.stdout
    );
    let state = db.psql(&format!(
        "SELECT state FROM pgrig_fleet.runs WHERE id = {run}"
    ));
    assert_eq!(state.trim(), "failed");
}

#[test]
fn a_killed_worker_leaves_an_incomplete_run_labelled_with_the_other_segment_merged() {
    let _turn = common::alone();
    let db = fresh_db("lua_seg_killed");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let prep = command(link(), &db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap();
    assert!(prep.status.success());
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let coord = coordinator(
        &db,
        &file,
        2,
        &["--threads=4", "--time=8", "--rate=100", &json_arg],
    );
    let w0 = worker(&db, 0, 2, &file, &["--wait", "60"]);
    let mut w1 = worker(&db, 1, 2, &file, &["--wait", "60"]);
    poll(
        &db,
        "SELECT count(*) > 0 FROM seen WHERE n >= 0 AND tid >= 2",
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    w1.kill().unwrap();
    let _ = w1.wait();
    let (c, w0) = (wait(coord), wait(w0));
    assert_eq!(w0.code, Some(0), "{}", w0.stderr);
    assert_eq!(c.code, Some(2), "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout
            .contains("INCOMPLETE RUN: no result from segment(s) 1 of 2"),
        "{}",
        c.stdout
    );
    assert!(
        c.stderr.contains("segment 1 on") && c.stderr.contains("the run is incomplete"),
        "{}",
        c.stderr
    );
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc.complete, Some(false));
    assert_eq!(
        doc.segments.as_ref().map(|s| s.missing.clone()),
        Some(vec![1])
    );
    let seg0: u64 = db
        .psql("SELECT count(*) FROM seen WHERE n >= 0 AND tid < 2")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        doc.transactions.ok, seg0,
        "segment 0's events, as the server counts them"
    );
    let ids: Vec<u32> = doc.clients.iter().map(|c| c.id).collect();
    assert_eq!(ids, [0, 1]);
}

#[test]
fn each_segment_thread_draws_the_random_stream_of_its_global_id() {
    let (seg_db, one_db) = (fresh_db("lua_seg_rand_a"), fresh_db("lua_seg_rand_b"));
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    let f = file.to_str().unwrap();
    for db in [&seg_db, &one_db] {
        assert!(command(link(), db, &[f, "prepare"])
            .output()
            .unwrap()
            .status
            .success());
    }
    let args = ["--threads=5", "--events=20", "--rand-seed=4242"];
    let coord = coordinator(&seg_db, &file, 3, &args);
    let ws: Vec<Child> = (0..3)
        .map(|i| worker(&seg_db, i, 3, &file, &["--wait", "60"]))
        .collect();
    for w in ws.into_iter().map(wait) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    assert_eq!(wait(coord).code, Some(0));
    let mut all = vec![f];
    all.extend(args);
    all.push("run");
    let one = command(link(), &one_db, &all).output().unwrap();
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stdout)
    );
    let draws = "SELECT string_agg(tid || ':' || n, ',' ORDER BY tid) FROM seen WHERE n < 0";
    let (a, b) = (seg_db.psql(draws), one_db.psql(draws));
    assert_eq!(a.trim().split(',').count(), 5, "{a}");
    assert_eq!(
        a, b,
        "3 segments and one host: the same first draw per thread id"
    );
}

#[test]
fn ctrl_c_on_the_coordinator_stops_every_lua_worker_and_reports_what_ran() {
    let db = fresh_db("lua_seg_ctrl_c");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    assert!(command(link(), &db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap()
        .status
        .success());
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let coord = coordinator(
        &db,
        &file,
        2,
        &["--threads=2", "--time=60", "--rate=50", &json_arg],
    );
    let ws: Vec<Child> = (0..2)
        .map(|i| worker(&db, i, 2, &file, &["--wait", "60"]))
        .collect();
    poll(&db, "SELECT count(DISTINCT tid) = 2 FROM seen WHERE n >= 0");
    let t0 = std::time::Instant::now();
    common::interrupt(&coord);
    let ws: Vec<CmdOutput> = ws.into_iter().map(wait).collect();
    let c = wait(coord);
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "workers ran on"
    );
    for w in &ws {
        assert_eq!(w.code, Some(130), "{}", w.stderr);
    }
    assert_eq!(c.code, Some(130), "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout.contains("transactions:"),
        "the report of what ran: {}",
        c.stdout
    );
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc.interrupted);
    assert_eq!(doc.complete, Some(true));
    let events: u64 = db
        .psql("SELECT count(*) FROM seen WHERE n >= 0")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(doc.transactions.ok, events);
}

/// The body of `GET url` (an `http://HOST:PORT/PATH` URL).
fn fetch(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut conn = std::net::TcpStream::connect(addr).expect("connect to the endpoint");
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(conn, "GET /{path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).expect("a response");
    response
        .split_once("\r\n\r\n")
        .map_or(String::new(), |r| r.1.to_string())
}

/// The value of the sample line starting with `name` (labels included).
fn sample(body: &str, name: &str) -> f64 {
    (body.lines())
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(-1.0)
}

#[test]
fn the_coordinators_live_metrics_end_at_every_segments_events() {
    use std::io::BufRead;
    let db = fresh_db("lua_seg_metrics");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path(), "tag");
    assert!(command(link(), &db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap()
        .status
        .success());
    let args = [
        "--threads=3",
        "--time=3",
        "--rate=60",
        "--metrics-addr=127.0.0.1:0",
        "--metrics-linger=30",
    ];
    let mut coord = coordinator(&db, &file, 2, &args);
    let stderr = coord.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(at) = line.split("serving OpenMetrics on ").nth(1) {
                let _ = tx.send(at.to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the address");
    let ws: Vec<Child> = (0..2)
        .map(|i| worker(&db, i, 2, &file, &["--wait", "60"]))
        .collect();
    for w in ws.into_iter().map(wait) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let finished = "pgrig_run_state{pgrig_run_state=\"finished\"}";
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let body = loop {
        let b = fetch(&url);
        if sample(&b, finished) == 1.0 || std::time::Instant::now() > until {
            break b;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let c = wait(coord);
    assert_eq!(c.code, Some(0), "{}", c.stdout);
    assert_eq!(sample(&body, finished), 1.0, "{body}");
    let events: f64 = db
        .psql("SELECT count(*) FROM seen WHERE n >= 0")
        .trim()
        .parse()
        .unwrap();
    assert!(events > 0.0);
    assert_eq!(
        sample(&body, "pgrig_transactions_total{outcome=\"ok\"}"),
        events,
        "{body}"
    );
    assert_eq!(
        sample(&body, "pgrig_latency_seconds_count"),
        events,
        "{body}"
    );
    assert_eq!(figure(&c.stdout, "transactions:"), events);
}

/// A script in sysbench 0.5's manner: no option declarations (options become globals, as
/// text), the thread's id as `event`'s argument.
const LEGACY: &str = r#"
function thread_init(thread_id)
  con = sysbench.sql.driver():connect()
end
function event(thread_id)
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", thread_id, tonumber(legacy_n)))
end
"#;

#[test]
fn an_undeclared_scripts_options_travel_as_globals_but_never_replace_one() {
    let db = fresh_db("lua_seg_legacy");
    db.psql("CREATE TABLE seen (tid int NOT NULL, n int NOT NULL)");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("legacy.lua");
    std::fs::write(&file, LEGACY).unwrap();
    // 300 events (and no time limit): enough that each of the 3 threads gets some however the
    // machine's load shares them out (with 30, a loaded run once left thread 1 without any)
    let args = ["--threads=3", "--events=300", "--time=0", "--legacy-n=5"];
    let coord = coordinator(&db, &file, 2, &args);
    let ws: Vec<Child> = (0..2)
        .map(|i| worker(&db, i, 2, &file, &["--wait", "60"]))
        .collect();
    for w in ws.into_iter().map(wait) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let c = wait(coord);
    assert_eq!(c.code, Some(0), "{}\n{}", c.stdout, c.stderr);
    let seen = db.psql("SELECT string_agg(DISTINCT tid::text, ',') || ' ' || min(n) || ' ' || max(n) || ' ' || count(*) FROM seen");
    assert_eq!(
        seen.trim(),
        "0,1,2 5 5 300",
        "thread_id is global, --legacy-n a global"
    );
    let run = forged_run(&db, &file, &["--threads=1", "--time=1", "--event=boom"]);
    let w = wait(worker(
        &db,
        0,
        1,
        &file,
        &["--run", &run.to_string(), "--wait", "5"],
    ));
    assert_eq!(w.code, Some(1), "{}", w.stderr);
    assert!(
        w.stderr.contains("--event=boom would replace"),
        "{}",
        w.stderr
    );
}
