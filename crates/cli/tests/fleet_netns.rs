//! Segments on separate "hosts": each worker runs in a network namespace of its own (made by
//! the test with `ip netns` and a veth pair; only addresses inside them), reaching the server
//! through a TCP relay on its veth address. One relay adds latency — in user space, because
//! this kernel has no `sch_netem` (`tc qdisc ... netem` is refused) — so that host is "far":
//! its clock offset error bound shows the delay, the segments still start together, and the
//! merge is still exact. Needs root (namespaces); without it the test says SKIPPED loudly.

use crate::common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use hdrhistogram::Histogram;
use pgrig_testkit::{fresh_db, TestDb};

/// A network namespace joined to this one by a veth pair: `root_addr` here, `.2` inside.
struct Netns {
    name: String,
    root_addr: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Netns {
    fn create(i: u32) -> Netns {
        let pid = std::process::id() % 100_000;
        let name = format!("pgrs{pid}n{i}");
        let (a, b) = (format!("pgrs{pid}a{i}"), format!("pgrs{pid}b{i}"));
        let net = format!("10.{}.{}", 230 + i, pid % 250);
        let root_addr = format!("{net}.1");
        ip(&["netns", "add", &name]);
        let ns = Netns { name, root_addr };
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
        ip(&["link", "set", &b, "netns", &ns.name]);
        ip(&["addr", "add", &format!("{}/24", ns.root_addr), "dev", &a]);
        ip(&["link", "set", &a, "up"]);
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &ns.name, "ip"];
            all.extend_from_slice(args);
            ip(&all);
        };
        inside(&["addr", "add", &format!("{net}.2/24"), "dev", &b]);
        inside(&["link", "set", &b, "up"]);
        inside(&["link", "set", "lo", "up"]);
        ns
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // the veth pair goes with the namespace
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Copies `from` to `to`, holding each chunk `delay` first (one-way latency).
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        std::thread::sleep(delay);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// A TCP relay on `addr` (port chosen) to the server's `127.0.0.1:port`; its port.
fn relay(addr: &str, port: u16, delay: Duration) -> u16 {
    let l = TcpListener::bind((addr, 0)).expect("relay listens on the veth address");
    let at = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().map_while(Result::ok) {
            let Ok(s) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            let _ = (c.set_nodelay(true), s.set_nodelay(true));
            let (c2, s2) = (c.try_clone().unwrap(), s.try_clone().unwrap());
            std::thread::spawn(move || pump(c, s, delay));
            std::thread::spawn(move || pump(s2, c2, delay));
        }
    });
    at
}

/// The throwaway server's generated password (the last field of its password file's line).
fn password(db: &TestDb) -> String {
    if let Some(pw) = db.server().password() {
        return pw.to_string();
    }
    let file = db
        .server()
        .passfile()
        .expect("a TCP server has a password file");
    let text = std::fs::read_to_string(file).unwrap();
    let line = text.lines().next().expect("a password line");
    line.rsplit(':').next().unwrap().to_string()
}

/// `pgrig worker` inside `ns`, reaching server and coordinator through the relay at `port`,
/// writing its `-l` logs under `logs` (its --log-dir).
fn worker_in(ns: &Netns, db: &TestDb, port: u16, i: u32, logs: &str) -> std::process::Child {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &ns.name, env!("CARGO_BIN_EXE_pgrig")]);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PG") {
            c.env_remove(k);
        }
    }
    let env = db.env();
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (user, dbname) = (get("PGUSER").unwrap(), get("PGDATABASE").unwrap());
    c.env("PGHOST", &ns.root_addr)
        .env("PGPORT", port.to_string())
        .env("PGUSER", &user)
        .env("PGDATABASE", &dbname);
    c.env("PGPASSWORD", password(db));
    let coord = format!(
        "host={} port={port} user={user} dbname={dbname}",
        ns.root_addr
    );
    c.args([
        "worker",
        "--segment",
        &format!("{i}/2"),
        "--coordinator",
        &coord,
    ])
    .args(["--wait", "60", "--log-dir", logs])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c.spawn().expect("ip netns exec pgrig worker")
}

/// (start µs since the epoch, latency µs) of every transaction in the `-l` files named `PREFIX.*`.
fn logged(dir: &std::path::Path, prefix: &str) -> Vec<(u64, u64)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if !p.file_name().unwrap().to_string_lossy().starts_with(prefix) {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let f: Vec<u64> = line
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let end = f[4] * 1_000_000 + f[5];
            all.push((end - f[2], f[2]));
        }
    }
    all
}

#[test]
fn segments_in_network_namespaces_one_far_away_start_together_and_merge_exactly() {
    if !nix::unistd::geteuid().is_root() {
        pgrig_testkit::skip("network namespaces need root (ip netns); run the suite as root");
        return;
    }
    let db = fresh_db("fleet_netns");
    common::pgbench_init(&db, 1);
    let port = db.server().port();
    let (near, far) = (Netns::create(0), Netns::create(1));
    let near_port = relay(&near.root_addr, port, Duration::ZERO);
    let far_port = relay(&far.root_addr, port, Duration::from_millis(5));
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().display().to_string();
    let json = dir.path().join("run.json").display().to_string();
    let mut coord = common::pgrig_cmd(&db);
    coord
        .args(["bench", "--segments", "2", "--coordinator", &db.url()])
        .args(["-n", "-S", "-c", "4", "-j", "2", "-T", "4", "-l"])
        .args(["--log-prefix", "seg", "--json", &json])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let coord = coord.spawn().unwrap();
    let w0 = worker_in(&near, &db, near_port, 0, &logs);
    let w1 = worker_in(&far, &db, far_port, 1, &logs);
    for w in [w0, w1] {
        let out = w.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "worker:\n{err}");
    }
    let out = coord.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "coordinator:\n{stderr}");
    // the far host's offset was measured through the added latency: error bound >= 5 ms
    let far_line = stderr
        .lines()
        .find(|l| l.contains("segment 1 on"))
        .expect("segment 1's line");
    let err_ms: f64 = far_line
        .split("(± ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("error bound");
    assert!(err_ms >= 5.0, "no latency on the far host? {far_line}");
    // started together: the first transactions of the two hosts within 400 ms (the far
    // host's connections take ~10 round trips of 10 ms before its first transaction)
    let pids: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_prefix("seg.")
                .map(|r| r.split('.').next().unwrap().to_string())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(pids.len(), 2, "one log per worker process");
    let firsts: Vec<u64> = (pids.iter())
        .map(|p| {
            logged(dir.path(), &format!("seg.{p}"))
                .iter()
                .map(|t| t.0)
                .min()
                .unwrap()
        })
        .collect();
    let apart_ms = firsts[0].abs_diff(firsts[1]) as f64 / 1000.0;
    eprintln!("first transactions of the two hosts {apart_ms:.1} ms apart; far host ± {err_ms} ms");
    assert!(apart_ms < 400.0, "started {apart_ms} ms apart");
    // merged exactly
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    h.auto(true);
    for (_, lat) in logged(dir.path(), "seg.") {
        h.record(lat).unwrap();
    }
    let expected: Vec<(u64, u64)> = (h.iter_recorded())
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let merged: Vec<(u64, u64)> =
        serde_json::from_value(doc["latency_histogram"]["buckets"].clone()).unwrap();
    assert_eq!(
        merged, expected,
        "merged histogram vs the union of both hosts' logs"
    );
}
