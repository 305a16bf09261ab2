//! The server's figures per second of a run — checkpoints, WAL bytes, server CPU — against the
//! server's own counts taken by the test around the run: a `CHECKPOINT` forced while `pgrig run`
//! (and a study's run) goes on must show in the second it completed and in no other; the seconds'
//! WAL must add up to the run's `pg_current_wal_lsn()` difference; their CPU to the server
//! processes' CPU time read from `/proc/PID/stat` (postmaster, its reaped children, its live
//! children) — and the report drawn from the run marks that second on its TPS, latency and server
//! charts. The tests use a cluster of their own (not the suite's shared one) and take turns
//! (`common::alone`): nothing else writes WAL on their cluster or competes for the CPU.

use crate::common;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pgrig_testkit::{fresh_db_on, Server, ServerOptions, TestDb};
use serde_json::Value;

/// This file's own cluster: the figures are the whole cluster's (WAL, checkpoints, server CPU),
/// so no other test of the suite may write on it.
fn series_cluster() -> &'static Server {
    static SERVER: std::sync::OnceLock<Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| pgrig_testkit::custom_cluster(ServerOptions::default()))
}

fn fresh_db(name: &str) -> TestDb {
    fresh_db_on(series_cluster(), name)
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn lsn(db: &TestDb) -> f64 {
    db.psql("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")
        .parse()
        .unwrap()
}

/// The checkpoints the server counted as done so far, by its version's view.
fn checkpoints(db: &TestDb) -> u64 {
    let v: u32 = db.psql("SHOW server_version_num").parse().unwrap();
    let sql = match v {
        180000.. => "SELECT num_done FROM pg_stat_checkpointer",
        170000.. => "SELECT num_timed + num_requested FROM pg_stat_checkpointer",
        _ => "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter",
    };
    db.psql(sql).parse().unwrap()
}

/// `/proc/PID/stat` fields 4 (ppid) and 14..17 (utime, stime, cutime, cstime), in ticks.
fn proc_stat(pid: u32) -> Option<(u32, [u64; 4])> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    let n = |i: usize| f[i].parse::<u64>().ok();
    Some((n(1)? as u32, [n(11)?, n(12)?, n(13)?, n(14)?]))
}

/// CPU seconds of the postmaster `pm` (its own and its reaped children's) and its live children,
/// read again when a child was reaped meanwhile (it would be in neither sum).
fn server_cpu_s(pm: u32) -> f64 {
    loop {
        let (_, t0) = proc_stat(pm).unwrap();
        let mut ticks = 0;
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok());
            if let Some((ppid, t)) = pid.and_then(proc_stat) {
                if ppid == pm {
                    ticks += t[0] + t[1];
                }
            }
        }
        let (_, t1) = proc_stat(pm).unwrap();
        if t1[2] + t1[3] == t0[2] + t0[3] {
            ticks += t1.iter().sum::<u64>();
            // SAFETY: sysconf only reads a configuration value.
            return ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 };
        }
    }
}

/// What the server counted around a command: WAL bytes, checkpoints, CPU seconds.
struct Around {
    wal: f64,
    checkpoints: u64,
    cpu_s: f64,
    /// when the forced CHECKPOINT returned, Unix seconds
    checkpoint_done: f64,
}

/// Runs `c`, forcing a CHECKPOINT `after` its start, and measures the server around it.
fn around(db: &TestDb, mut c: Command, after: Duration) -> (Around, std::process::Output) {
    let pm = db.server().postmaster_pid().unwrap();
    db.psql("CHECKPOINT");
    let (wal0, cp0, cpu0) = (lsn(db), checkpoints(db), server_cpu_s(pm));
    let child: Child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    db.psql("CHECKPOINT");
    let checkpoint_done = unix_now();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let a = Around {
        wal: lsn(db) - wal0,
        checkpoints: checkpoints(db) - cp0,
        cpu_s: server_cpu_s(pm) - cpu0,
        checkpoint_done,
    };
    (a, out)
}

fn sum(series: &[Value], key: &str) -> f64 {
    series.iter().map(|s| s[key].as_f64().unwrap()).sum()
}

/// Every second has the three figures; the forced checkpoint is in the second it completed (one
/// second either way for the sampling's delay) and the only one; WAL and CPU add up to the
/// server's own counts.
fn check(series: &[Value], started_unix_s: f64, a: &Around, what: &str) {
    assert!(series.len() >= 4, "{what}: {series:?}");
    for s in series {
        for k in ["checkpoints", "wal_bytes", "server_cpu"] {
            assert!(s[k].is_number(), "{what}: second without {k}: {s}");
        }
    }
    let marked: Vec<f64> = series
        .iter()
        .filter(|s| s["checkpoints"].as_u64().unwrap() > 0)
        .map(|s| s["second"].as_f64().unwrap())
        .collect();
    let expected = (a.checkpoint_done - started_unix_s).ceil();
    eprintln!(
        "{what}: checkpoints in seconds {marked:?} (CHECKPOINT returned in second {expected}); \
         server counted {}",
        a.checkpoints
    );
    assert_eq!(sum(series, "checkpoints"), a.checkpoints as f64, "{what}");
    assert_eq!(marked.len(), 1, "{what}: {marked:?}");
    assert!(
        (marked[0] - expected).abs() <= 1.0,
        "{what}: {marked:?} vs {expected}"
    );
    let wal = sum(series, "wal_bytes");
    eprintln!(
        "{what}: WAL per second adds up to {wal} B; pg_current_wal_lsn() moved {} B ({:.2} %)",
        a.wal,
        100.0 * wal / a.wal
    );
    assert!(
        wal <= a.wal && wal >= 0.9 * a.wal,
        "{what}: {wal} vs {}",
        a.wal
    );
    let cpu = sum(series, "server_cpu");
    eprintln!(
        "{what}: server CPU per second adds up to {cpu:.3} CPU-s; /proc: {:.3} s",
        a.cpu_s
    );
    assert!(
        cpu <= 1.1 * a.cpu_s + 0.05 && cpu >= 0.5 * a.cpu_s,
        "{what}: {cpu} vs {}",
        a.cpu_s
    );
}

#[test]
fn a_forced_checkpoint_wal_and_server_cpu_show_per_second_in_a_run() {
    let _alone = common::alone();
    let db = fresh_db("series_run");
    common::pgbench_init(&db, 1);
    db.psql("VACUUM ANALYZE");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut c = common::pgrig_cmd(&db);
    c.args([
        "run",
        "--target",
        &db.conninfo(),
        "-c",
        "2",
        "-T",
        "6s",
        "--json",
    ])
    .arg(&json);
    let (a, _) = around(&db, c, Duration::from_millis(3000));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let series = doc["series"].as_array().unwrap();
    check(
        series,
        doc["started_at_unix_s"].as_f64().unwrap(),
        &a,
        "run",
    );
    // the report draws the server's seconds and marks the checkpoint's second on its charts
    let html = dir.path().join("run.html");
    let mut c = common::pgrig_cmd(&db);
    c.arg("report").arg(&json).arg("-o").arg(&html);
    let out = pgrig_testkit::run(c);
    assert!(out.success(), "{}", out.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("run-server-over-time"), "no server chart");
    // (band labels are SVG text elements, their text on a line of its own)
    let marks = page.lines().filter(|l| l.trim() == "checkpoint").count();
    assert_eq!(
        marks, 3,
        "the checkpoint on the TPS, latency and server charts"
    );
}

fn results(dir: &Path, args: &[&str]) -> Value {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["results"]).args(args).current_dir(dir);
    let out = pgrig_testkit::run(c);
    assert!(out.success(), "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn a_study_stores_the_servers_seconds_with_its_run() {
    let _alone = common::alone();
    let db = fresh_db("series_study");
    let dir = tempfile::tempdir().unwrap();
    let study = format!(
        "name = \"series\"\n[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n\
         [workload]\nduration = \"6s\"\n[matrix]\nclients = [2]\n",
        db.url()
    );
    std::fs::write(dir.path().join("study.toml"), study).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["study", "study.toml"]).current_dir(dir.path());
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // the run begins when its server sampler connects (after the dataset is created)
    let sampling = "SELECT count(*) FROM pg_stat_activity \
                    WHERE application_name = 'pgrig-server-seconds'";
    let t0 = std::time::Instant::now();
    while db.psql(sampling) == "0" {
        assert!(t0.elapsed() < Duration::from_secs(120), "no run began");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
    let cp0 = checkpoints(&db);
    db.psql("CHECKPOINT");
    let forced = checkpoints(&db) - cp0;
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = results(dir.path(), &["export", "--format", "json"]);
    let id = runs[0]["run_id"].to_string();
    let shown = results(dir.path(), &["show", &id]);
    let series = shown["series"].as_array().unwrap();
    assert!(series.len() >= 4, "{series:?}");
    for s in series {
        assert!(s["wal_bytes"].as_u64().unwrap() > 0, "{s}");
        assert!(s["server_cpu"].as_f64().unwrap() > 0.0, "{s}");
        assert!(s["checkpoints"].is_u64(), "{s}");
    }
    let marked: Vec<&Value> = series
        .iter()
        .filter(|s| s["checkpoints"].as_u64().unwrap() > 0)
        .collect();
    eprintln!("study: forced {forced} checkpoint(s); marked {marked:?}");
    assert_eq!(forced, 1);
    assert_eq!(sum(series, "checkpoints"), 1.0, "{series:?}");
    let second = marked[0]["second"].as_f64().unwrap();
    assert!((2.0..=5.0).contains(&second), "{second}");
}
