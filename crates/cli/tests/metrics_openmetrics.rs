//! `--metrics-addr`: the endpoint serves OpenMetrics while the run lasts, parsed by the
//! reference parser (`prometheus_client`'s OpenMetrics parser, PyPI; `./test` installs it), and
//! its final counters agree with the report. Scrapes are plain socket reads every 100 ms while the
//! run lasts (fast on a loaded machine); every exposition is parsed by the reference parser after.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pgrig_testkit::fresh_db;

/// Parses each exposition (one per line of stdin, JSON strings) with prometheus_client's
/// OpenMetrics parser, which rejects what is not OpenMetrics; prints one `name{labels} value`
/// line per sample and a `--` line after each exposition.
const PARSE: &str = r#"
import sys, json
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for line in sys.stdin:
    for fam in text_string_to_metric_families(json.loads(line)):
        for s in fam.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            print(f"{s.name}{{{labels}}} {s.value}")
    print("--")
"#;

/// One scrape of `url` (`http://HOST:PORT/metrics`) over a plain socket: the body, with the
/// OpenMetrics content type checked. Fast even on a loaded machine, so a short run still gets
/// scraped several times; the bodies are parsed afterwards by the reference parser ([`parse`]).
fn fetch(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut conn = std::net::TcpStream::connect(addr).expect("connect to the endpoint");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(conn, "GET /{path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).expect("a response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(
        head.lines().any(|l| l
            .to_ascii_lowercase()
            .starts_with("content-type: application/openmetrics-text")),
        "{head}"
    );
    body.to_string()
}

/// Whether an exposition says the run has finished (the loop's stop condition; what is
/// asserted comes from [`parse`]).
fn says_finished(body: &str) -> bool {
    body.lines()
        .any(|l| l == "pgrig_run_state{pgrig_run_state=\"finished\"} 1")
}

/// Every exposition parsed by the reference parser, in order: `name{labels}` → value.
fn parse(bodies: &[String]) -> Vec<BTreeMap<String, f64>> {
    let mut child = Command::new("python3")
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut input = String::new();
    for b in bodies {
        input.push_str(&serde_json::to_string(b).unwrap());
        input.push('\n');
    }
    // Written from a thread of its own: many expositions fill both pipes. A parser that died
    // at once (the oracle missing) is reported from its stderr below.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, input.as_bytes());
    });
    let out = child.wait_with_output().expect("python3 ends");
    let _ = writer.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'prometheus_client'"),
        "the oracle is missing: pip install prometheus_client (./test does)"
    );
    assert!(out.status.success(), "not OpenMetrics: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut all = vec![BTreeMap::new()];
    for line in text.lines() {
        if line == "--" {
            all.push(BTreeMap::new());
            continue;
        }
        let (key, v) = line.rsplit_once(' ').unwrap();
        all.last_mut()
            .unwrap()
            .insert(key.to_string(), v.parse().unwrap());
    }
    all.pop();
    assert_eq!(all.len(), bodies.len());
    all
}

/// Scrapes `url` every 100 ms until an exposition says the run finished (or `limit` passes);
/// returns every exposition, parsed.
fn scrape_until_finished(url: &str, limit: Duration) -> Vec<BTreeMap<String, f64>> {
    let mut bodies = Vec::new();
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let body = fetch(url);
        let done = says_finished(&body);
        bodies.push(body);
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    parse(&bodies)
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
    let _alone = common::alone();
    let db = fresh_db("metrics");
    common::pgbench_init(&db, 1);
    let mut cmd = common::pgrig_cmd(&db);
    // -P: the report's latency average is the transactions' mean (without it, pgbench's
    // duration × clients / transactions, which a loaded machine pulls away from the mean)
    cmd.args(["bench", "-n", "-c", "2", "-j", "2", "-T", "4", "-P", "1"])
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
    let scrapes = scrape_until_finished(&url, Duration::from_secs(60));
    let mut last_ok = 0.0;
    for m in &scrapes {
        let ok = m["pgrig_transactions_total{outcome=ok}"];
        assert!(ok >= last_ok, "a counter went down: {last_ok} -> {ok}");
        last_ok = ok;
    }
    let running = scrapes
        .iter()
        .filter(|m| {
            m["pgrig_run_state{pgrig_run_state=running}"] == 1.0
                && m["pgrig_transactions_total{outcome=ok}"] > 0.0
        })
        .count();
    let final_scrape = scrapes
        .last()
        .filter(|m| m["pgrig_run_state{pgrig_run_state=finished}"] == 1.0)
        .cloned();
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
    let scrapes = scrape_until_finished(&url, Duration::from_secs(90));
    let segments_seen = scrapes
        .iter()
        .map(|m| {
            m.keys()
                .filter(|k| {
                    k.starts_with("pgrig_client_cpu_seconds_total{host=") && k.contains(",segment=")
                })
                .count()
        })
        .max()
        .unwrap_or(0);
    let final_scrape = scrapes
        .last()
        .filter(|m| m["pgrig_run_state{pgrig_run_state=finished}"] == 1.0)
        .cloned();
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

/// `pgrig bench ARGS --metrics-addr 127.0.0.1:0`, started; the child and the endpoint's URL.
fn bench_serving(db: &pgrig_testkit::TestDb, args: &[&str]) -> (std::process::Child, String) {
    let mut cmd = common::pgrig_cmd(db);
    cmd.arg("bench")
        .args(args)
        .args(["--metrics-addr", "127.0.0.1:0", "--metrics-linger", "0"])
        .stdout(Stdio::null())
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
        .expect("the address line on stderr");
    (child, url)
}

/// Waits up to `limit` for `child` to exit (killed after); how long it took, `None` if it ran on.
fn exits_within(child: &mut std::process::Child, limit: Duration) -> Option<Duration> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn slow_and_idle_scrapers_neither_delay_a_scrape_nor_keep_the_run_alive() {
    use std::io::Write;
    let db = fresh_db("metrics_slow_client");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let s = script.display().to_string();
    let (mut child, url) = bench_serving(&db, &["-n", "-c", "1", "-T", "3", "-f", &s]);
    let addr = url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    // one client sending a byte every 1.5 s (never a whole request) for up to 45 s
    let slow_addr = addr.clone();
    std::thread::spawn(move || {
        let Ok(mut c) = std::net::TcpStream::connect(&slow_addr) else {
            return;
        };
        for b in b"GET /metrics HTTP/1.0\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if c.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1500));
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let idle: Vec<_> = (0..5)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (tx, rx) = mpsc::channel();
    let u = url.clone();
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let body = fetch(&u);
        let _ = tx.send((t0.elapsed(), body));
    });
    let scraped = rx.recv_timeout(Duration::from_secs(8));
    let ended = exits_within(&mut child, Duration::from_secs(25));
    drop(idle);
    let (took, body) = scraped.expect("a scrape behind a slow and five idle clients within 8 s");
    assert!(body.contains("pgrig_run_state"), "{body}");
    assert!(took < Duration::from_secs(8), "the scrape took {took:?}");
    // the run lasts 3 s; today's server kept it alive as long as the slow client sent bytes
    let ended = ended.expect("bench still running 25 s after a 3 s run: a scraper kept it alive");
    assert!(ended < Duration::from_secs(20), "ended after {ended:?}");
}

/// One scrape, `None` once the endpoint is gone.
fn try_fetch(url: &str) -> Option<String> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://")?;
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut conn = std::net::TcpStream::connect(addr).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(conn, "GET /{path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut response = String::new();
    conn.read_to_string(&mut response).ok()?;
    Some(response.split_once("\r\n\r\n")?.1.to_string())
}

/// Issue 20 item 8(a): a segment killed mid-run leaves the merged run incomplete, and its
/// counters, scraped every 100 ms from the start to the endpoint's end, never go down (the
/// final merge covers fewer segments than were seen live).
#[test]
fn merged_counters_never_go_down_across_a_killed_worker() {
    let db = fresh_db("metrics_killed_worker");
    common::pgbench_init(&db, 1);
    let mut coord = common::pgrig_cmd(&db);
    coord
        .args(["bench", "--segments", "2", "--coordinator", &db.url()])
        .args(["-n", "-S", "-c", "2", "-T", "8"])
        .args(["--metrics-addr", "127.0.0.1:0", "--metrics-linger", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut coord = coord.spawn().expect("coordinator");
    let (tx, rx) = mpsc::channel();
    let stderr = coord.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split("serving OpenMetrics on ").nth(1) {
                let _ = tx.send(at.to_string());
            }
        }
    });
    let spawn = |i: u32| {
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
    };
    let (mut w0, mut w1) = (spawn(0), spawn(1));
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("address");
    let mut bodies = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut killed, mut running_seen) = (false, 0);
    while Instant::now() < deadline {
        let Some(body) = try_fetch(&url) else { break };
        let running = body.contains("pgrig_run_state{pgrig_run_state=\"running\"} 1");
        let ok_now = body
            .lines()
            .find_map(|l| l.strip_prefix("pgrig_transactions_total{outcome=\"ok\"} "))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        bodies.push(body);
        running_seen += usize::from(running && ok_now > 0);
        if !killed && running_seen > 25 {
            w1.kill().unwrap();
            let _ = w1.wait();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(killed, "the run never got going");
    let _ = w0.wait();
    let out = coord.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an incomplete run");
    let scrapes = parse(&bodies);
    let last = scrapes.last().expect("scrapes");
    assert_eq!(last["pgrig_run_state{pgrig_run_state=incomplete}"], 1.0);
    for pair in scrapes.windows(2) {
        for (k, v) in pair[0].iter().filter(|(k, _)| {
            k.contains("_total") || k.contains("_bucket") || k.ends_with("_count{}")
        }) {
            let next = pair[1].get(k).copied().unwrap_or(f64::NAN);
            assert!(next >= *v, "{k} went from {v} to {next}");
        }
    }
}

/// Issue 20 item 9: without `--metrics-linger`, a scraper that comes back only every second
/// still reads the final figures (the default lingers for one scrape interval), and the help
/// says so.
#[test]
fn the_final_figures_are_scraped_without_a_linger_option() {
    let db = fresh_db("metrics_default_linger");
    common::pgbench_init(&db, 1);
    let mut cmd = common::pgrig_cmd(&db);
    cmd.args(["bench", "-n", "-S", "-c", "1", "-T", "2"])
        .args(["--metrics-addr", "127.0.0.1:0"])
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
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("address");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut finished = None;
    while Instant::now() < deadline {
        let Some(body) = try_fetch(&url) else { break };
        if says_finished(&body) {
            finished = Some(body);
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let body = finished.expect("the final figures were never scraped");
    let m = &parse(&[body])[0];
    let stdout = String::from_utf8_lossy(&out.stdout);
    let processed = field(&stdout, "number of transactions actually processed: ");
    assert_eq!(m["pgrig_transactions_total{outcome=ok}"], processed as f64);
    let help = common::pgrig_cmd(&db)
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("default 60, one default Prometheus scrape interval"),
        "{help}"
    );
}

/// 200 slow clients (another account's, say), each sending a byte of a request every second
/// and reconnecting when closed, no longer keep scrapes out (40 of them made 10 of 10 fail):
/// every scrape is answered, promptly.
#[test]
fn two_hundred_slow_clients_do_not_keep_a_scrape_out() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    let _turn = common::alone();
    let db = fresh_db("metrics_slow_crowd");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let s = script.display().to_string();
    let (mut child, url) = bench_serving(&db, &["-n", "-c", "1", "-T", "12", "-f", &s]);
    let addr = url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let (d, a) = (done.clone(), addr.clone());
    let crowd = std::thread::spawn(move || {
        let part = b"GET /metrics HTTP/1.0\r\nX-Slow: ";
        let open = || {
            let mut c = std::net::TcpStream::connect(&a).ok()?;
            c.write_all(&part[..1]).ok()?;
            Some(c)
        };
        let mut conns: Vec<Option<std::net::TcpStream>> = (0..200).map(|_| open()).collect();
        while !d.load(Ordering::SeqCst) {
            for c in conns.iter_mut() {
                let alive = c.as_mut().is_some_and(|s| s.write_all(b"a").is_ok());
                if !alive {
                    *c = open();
                }
            }
            std::thread::sleep(Duration::from_millis(1000));
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let mut answered = 0;
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let t0 = Instant::now();
        if try_fetch(&url).is_some_and(|b| b.contains("pgrig_run_state")) {
            answered += 1;
            slowest = slowest.max(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    done.store(true, Ordering::SeqCst);
    crowd.join().unwrap();
    let _ = exits_within(&mut child, Duration::from_secs(30));
    assert_eq!(answered, 10, "scrapes answered behind 200 slow clients");
    assert!(
        slowest < Duration::from_secs(2),
        "the slowest scrape took {slowest:?}"
    );
}
