//! `--metrics-addr`: the endpoint serves OpenMetrics while the run lasts, parsed by the
//! reference parser (`prometheus_client`'s OpenMetrics parser, PyPI; .ci/run installs it), and
//! its final counters agree with the report.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pgrig_testkit::fresh_db;

/// Scrapes URL and parses it with prometheus_client's OpenMetrics parser (which rejects what
/// is not OpenMetrics); prints one `name{labels} value` line per sample.
const SCRAPE: &str = r#"
import sys, urllib.request
from prometheus_client.openmetrics.parser import text_string_to_metric_families
with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
    ctype = r.headers.get("Content-Type")
    body = r.read().decode()
assert ctype.startswith("application/openmetrics-text"), ctype
for fam in text_string_to_metric_families(body):
    for s in fam.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        print(f"{fam.type} {s.name}{{{labels}}} {s.value}")
"#;

/// `name{labels}` → value, with each family's type checked present.
fn scrape(url: &str) -> Result<BTreeMap<String, f64>, String> {
    let out = Command::new("python3")
        .args(["-c", SCRAPE, url])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'prometheus_client'"),
        "the oracle is missing: pip install prometheus_client (.ci/run does)"
    );
    if !out.status.success() {
        return Err(stderr.into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let mut w = line.rsplitn(2, ' ');
        let v: f64 = w.next().unwrap().parse().unwrap();
        let key = w.next().unwrap().split_once(' ').unwrap().1.to_string();
        m.insert(key, v);
    }
    Ok(m)
}

fn field(stdout: &str, prefix: &str) -> u64 {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{stdout}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn metrics_endpoint_parses_as_openmetrics_and_agrees_with_the_report() {
    let db = fresh_db("metrics");
    common::pgbench_init(&db, 1);
    let mut cmd = common::pgrig_cmd(&db);
    cmd.args(["bench", "-n", "-c", "2", "-j", "2", "-T", "4"])
        .args(["--metrics-addr", "127.0.0.1:0", "--metrics-linger", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("pgrig");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split("serving OpenMetrics on ").nth(1) {
                let _ = tx.send(at.to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the address line on stderr");
    let (mut running, mut last_ok, mut final_scrape) = (0, 0.0, None);
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline {
        let m = scrape(&url).expect("an OpenMetrics exposition");
        let ok = m["pgrig_transactions_total{outcome=ok}"];
        assert!(ok >= last_ok, "a counter went down: {last_ok} -> {ok}");
        last_ok = ok;
        if m["pgrig_run_state{pgrig_run_state=running}"] == 1.0 && ok > 0.0 {
            running += 1;
        }
        if m["pgrig_run_state{pgrig_run_state=finished}"] == 1.0 {
            final_scrape = Some(m);
            break;
        }
        std::thread::sleep(Duration::from_millis(400));
    }
    let out = child.wait_with_output().expect("pgrig ends");
    let stderr = reader.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(running >= 2, "fewer than two scrapes while running");
    let m = final_scrape.expect("a scrape of the finished run");
    let processed = field(&stdout, "number of transactions actually processed: ");
    let failed = field(&stdout, "number of failed transactions: ");
    assert_eq!(m["pgrig_transactions_total{outcome=ok}"], processed as f64);
    assert_eq!(m["pgrig_transactions_total{outcome=failed}"], failed as f64);
    assert_eq!(m["pgrig_latency_seconds_count{}"], processed as f64);
    assert_eq!(m["pgrig_latency_seconds_bucket{le=+Inf}"], processed as f64);
    let avg_ms: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("latency average = "))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .expect("latency average line");
    let mean_ms = m["pgrig_latency_seconds_sum{}"] * 1000.0 / processed as f64;
    assert!((mean_ms - avg_ms).abs() < 0.01, "{mean_ms} vs {avg_ms}");
    assert!(m
        .keys()
        .any(|k| k.starts_with("pgrig_client_cpu_seconds_total{host=")));
}

#[test]
fn metrics_addr_that_cannot_be_bound_is_a_clear_error() {
    let db = fresh_db("metrics_bind");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = common::pgrig_bench(&db, &["-n", "-t", "1", "--metrics-addr", &addr]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains(&format!("--metrics-addr {addr}: could not listen")),
        "{}",
        out.stderr
    );
}

#[test]
fn coordinator_serves_the_merged_segments_as_openmetrics() {
    let db = fresh_db("metrics_coordinator");
    common::pgbench_init(&db, 1);
    let mut coord = common::pgrig_cmd(&db);
    coord
        .args(["bench", "--segments", "2", "--coordinator", &db.url()])
        .args(["-n", "-S", "-c", "4", "-j", "2", "-T", "4"])
        .args(["--metrics-addr", "127.0.0.1:0", "--metrics-linger", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut coord = coord.spawn().expect("coordinator");
    let (tx, rx) = mpsc::channel();
    let stderr = coord.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split("serving OpenMetrics on ").nth(1) {
                let _ = tx.send(at.to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let mut w = common::pgrig_cmd(&db);
            w.args([
                "worker",
                "--segment",
                &format!("{i}/2"),
                "--coordinator",
                &db.url(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            w.spawn().expect("worker")
        })
        .collect();
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("address");
    let (mut segments_seen, mut final_scrape) = (0, None);
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let m = scrape(&url).expect("an OpenMetrics exposition");
        let cpu = m.keys().filter(|k| k.contains("host=segment-")).count();
        segments_seen = segments_seen.max(cpu);
        if m["pgrig_run_state{pgrig_run_state=finished}"] == 1.0 {
            final_scrape = Some(m);
            break;
        }
        std::thread::sleep(Duration::from_millis(400));
    }
    for mut w in workers {
        assert!(w.wait().unwrap().success());
    }
    let out = coord.wait_with_output().unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let m = final_scrape.expect("a scrape of the finished run");
    let processed = field(&stdout, "number of transactions actually processed: ");
    assert_eq!(m["pgrig_transactions_total{outcome=ok}"], processed as f64);
    assert_eq!(m["pgrig_latency_seconds_bucket{le=+Inf}"], processed as f64);
    assert_eq!(segments_seen, 2, "client CPU of each segment while running");
}
