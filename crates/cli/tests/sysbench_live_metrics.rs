//! `--metrics-addr` on sysbench's command line: while a Lua script runs, the endpoint serves
//! its events as they happen, and its last exposition's counts are the run document's (events,
//! ignored errors); a bundled test's run serves the report's events.

use crate::sysbench_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pgrig_results::document::RunDocument;
use pgrig_testkit::fresh_db;
use sysbench_common::{command, link};

fn fetch(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut conn = std::net::TcpStream::connect(addr).expect("connect to the endpoint");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(conn, "GET /{path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).expect("a response");
    response
        .split_once("\r\n\r\n")
        .expect("an HTTP response")
        .1
        .to_string()
}

/// The value of the sample line starting with `name` (labels included).
fn sample(body: &str, name: &str) -> f64 {
    (body.lines())
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(-1.0)
}

const OK: &str = "pgrig_transactions_total{outcome=\"ok\"}";
const CPU: &str = "pgrig_client_cpu_seconds_total{host=";
const FINISHED: &str = "pgrig_run_state{pgrig_run_state=\"finished\"}";
const RUNNING: &str = "pgrig_run_state{pgrig_run_state=\"running\"}";

/// Runs `args` through the `sysbench` link with the endpoint; every exposition until the run
/// finished, and the command's standard output.
fn scraped(db: &pgrig_testkit::TestDb, args: &[&str]) -> (Vec<String>, String) {
    let mut cmd = command(link(), db, args);
    cmd.args(["--metrics-addr=127.0.0.1:0", "--metrics-linger=30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("pgrig");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split("serving OpenMetrics on ").nth(1) {
                let _ = tx.send(at.to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the address on stderr");
    let mut bodies = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let body = fetch(&url);
        let done = sample(&body, FINISHED) == 1.0;
        bodies.push(body);
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("pgrig ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    (bodies, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_scripts_live_metrics_count_its_events_as_they_happen_and_end_at_its_document() {
    let db = fresh_db("sb_live_lua");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sleepy.lua");
    std::fs::write(
        &script,
        "function thread_init() con = sysbench.sql.driver():connect() end\n\
         function event() con:query(\"SELECT pg_sleep(0.005)\") end\n",
    )
    .unwrap();
    let json = dir.path().join("run.json");
    let j = format!("--json={}", json.display());
    let (bodies, _) = scraped(
        &db,
        &[
            script.to_str().unwrap(),
            "--threads=2",
            "--time=3",
            &j,
            "run",
        ],
    );
    let running = (bodies.iter())
        .filter(|b| sample(b, RUNNING) == 1.0 && sample(b, OK) > 0.0)
        .count();
    assert!(
        running >= 1,
        "no exposition while the script ran: {bodies:?}"
    );
    let last = bodies.last().unwrap();
    assert_eq!(sample(last, FINISHED), 1.0, "{last}");
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(sample(last, OK), doc.transactions.ok as f64, "{last}");
    assert_eq!(
        sample(last, "pgrig_retries_total"),
        doc.transactions.retries as f64
    );
    let histogram = sample(last, "pgrig_latency_seconds_count");
    assert_eq!(histogram, doc.transactions.ok as f64, "{last}");
    let mut prev = 0.0;
    for b in &bodies {
        assert!(sample(b, OK) >= prev, "a counter went down");
        prev = sample(b, OK).max(prev);
    }
    // the client-CPU counter is the process's CPU: it never goes down, and at the end it
    // holds at least what the document's worker threads spent (the process adds its main
    // thread and the endpoint's)
    let cpu = |b: &String| {
        (b.lines().find(|l| l.starts_with(CPU)))
            .and_then(|l| l.split_whitespace().last()?.parse::<f64>().ok())
            .unwrap_or(-1.0)
    };
    assert!(
        bodies.windows(2).all(|w| cpu(&w[1]) >= cpu(&w[0])),
        "the CPU counter went down"
    );
    assert!(
        cpu(last) >= doc.client_cpu.cpu_time_s - 0.01 && cpu(last) > 0.0,
        "client CPU {} < the threads' {}\n{last}",
        cpu(last),
        doc.client_cpu.cpu_time_s
    );
}

#[test]
fn a_bundled_tests_live_metrics_end_at_its_reports_events() {
    let db = fresh_db("sb_live_native");
    let prep = sysbench_common::pgrig(&db, &["oltp_point_select", "--table-size=100", "prepare"]);
    assert_eq!(prep.code, Some(0), "{}", prep.stdout);
    let args = [
        "oltp_point_select",
        "--table-size=100",
        "--threads=2",
        "--time=2",
        "run",
    ];
    let (bodies, stdout) = scraped(&db, &args);
    let events: f64 = (stdout.lines())
        .find_map(|l| l.trim_start().strip_prefix("total number of events:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("the events line");
    assert_eq!(sample(bodies.last().unwrap(), OK), events);
}
