//! A worker runs what the coordination schema says only as far as it is a run: forged run rows
//! (written with SQL, as anyone who can write `pgrig_fleet` could) cannot make it connect to
//! another host (with its password), read a local file as a script, write a log anywhere or run
//! a shell command. Its target is its own, scripts travel as their text with a digest, logs go
//! under its own `--log-dir`; the coordinator sends nothing else.

use crate::common;

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pgrig_testkit::{fresh_db, TestDb};

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Waits for `c` (killed after `limit`).
fn ended(mut c: Child, limit: Duration) -> Ended {
    let until = Instant::now() + limit;
    while Instant::now() < until && c.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = c.kill();
    let out = c.wait_with_output().unwrap();
    Ended {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn sql_lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A run of one segment written straight into the schema, with `args` and `scripts` (JSON).
fn forged_run(db: &TestDb, args: &[&str], scripts: &str) -> i64 {
    db.psql(pgrig_fleet::schema::DDL);
    db.psql(
        "ALTER TABLE pgrig_fleet.runs ADD COLUMN IF NOT EXISTS scripts text NOT NULL DEFAULT '[]'",
    );
    let arr: Vec<String> = args.iter().map(|a| sql_lit(a)).collect();
    let id = db.psql(&format!(
        "INSERT INTO pgrig_fleet.runs (segments, args, scripts, seed, interval_ms) VALUES \
         (1, ARRAY[{}]::text[], {}, '1', 1000) RETURNING id",
        arr.join(","),
        sql_lit(scripts)
    ));
    id.trim().parse().unwrap()
}

/// The SHA-256 of `text`, hex, as PostgreSQL computes it.
fn sha256(db: &TestDb, text: &str) -> String {
    let q = format!(
        "SELECT encode(sha256(convert_to({}, 'UTF8')), 'hex')",
        sql_lit(text)
    );
    db.psql(&q).trim().to_string()
}

const SELECT_ONLY: &str = r#"[{"builtin": "select-only", "weight": 1}]"#;

/// `pgrig worker --segment 0/1 --run ID --wait 5 EXTRA` with a password in its environment.
fn worker(db: &TestDb, run: i64, dir: &std::path::Path, extra: &[&str]) -> Child {
    let mut c = common::pgrig_cmd(db);
    c.args(["worker", "--segment", "0/1", "--coordinator", &db.url()])
        .args(["--run", &run.to_string(), "--wait", "5"])
        .args(extra)
        .env("PGPASSWORD", "the-workers-password")
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().expect("worker")
}

/// The worker row's state and error.
fn registration(db: &TestDb, run: i64) -> String {
    db.psql(&format!(
        "SELECT state || ': ' || coalesce(error, '') FROM pgrig_fleet.workers WHERE run_id = {run}"
    ))
}

/// A server that counts the connections made to it and what they sent.
fn fake_server() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            s.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut c) = c {
                let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
                let _ = c.read(&mut [0u8; 1024]);
            }
        }
    });
    (port, seen)
}

#[test]
fn a_worker_connects_to_no_host_the_schema_names() {
    let db = fresh_db("trust_target");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let (port, seen) = fake_server();
    let p = port.to_string();
    let uri = format!("postgresql://127.0.0.1:{port}/x");
    let conninfo = format!("host=127.0.0.1 port={port}");
    for args in [
        vec!["-c", "1", "-t", "1", "-h", "127.0.0.1", "-p", &p],
        vec!["-c", "1", "-t", "1", &conninfo],
        vec!["-c", "1", "-t", "1", "--dbname", &uri],
        vec!["-c", "1", "-t", "1", "-U", "someone_else"],
    ] {
        let run = forged_run(&db, &args, SELECT_ONLY);
        let w = ended(worker(&db, run, dir.path(), &[]), Duration::from_secs(60));
        assert_eq!(w.code, Some(1), "{args:?}\n{}", w.stderr);
        assert!(
            w.stderr.contains("not sent to workers"),
            "{args:?}\n{}",
            w.stderr
        );
        assert!(!w.stderr.contains("the-workers-password"), "{}", w.stderr);
        let reg = registration(&db, run);
        assert!(reg.starts_with("failed: run"), "{reg}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "a worker connected where the schema said"
    );
    // its own target: --target (without a password in it), else its environment
    let run = forged_run(&db, &["-c", "1", "-t", "1"], SELECT_ONLY);
    let w = ended(
        worker(
            &db,
            run,
            dir.path(),
            &["--target", "host=x password=hunter2"],
        ),
        Duration::from_secs(60),
    );
    assert_eq!(w.code, Some(1), "{}", w.stderr);
    assert!(w.stderr.contains("a password in --target"), "{}", w.stderr);
    assert!(!w.stderr.contains("hunter2"), "{}", w.stderr);
}

#[test]
fn a_worker_reads_no_file_the_schema_names() {
    let db = fresh_db("trust_file");
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.sql");
    std::fs::write(&secret, "SELECT 'the-secret-content';\n").unwrap();
    let s = secret.display().to_string();
    for args in [
        vec!["-n", "-t", "1", "-f", &s],
        vec!["-n", "-t", "1", "--file=-"],
    ] {
        let run = forged_run(&db, &args, SELECT_ONLY);
        let w = ended(worker(&db, run, dir.path(), &[]), Duration::from_secs(60));
        assert_eq!(w.code, Some(1), "{}", w.stderr);
        assert!(
            w.stderr.contains("--file is not a run option"),
            "{}",
            w.stderr
        );
        assert!(!w.stderr.contains("the-secret-content"), "{}", w.stderr);
        assert!(registration(&db, run).contains("--file"));
    }
}

#[test]
fn a_worker_writes_logs_only_under_its_own_log_dir() {
    let db = fresh_db("trust_logs");
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let evil = elsewhere.path().join("evil").display().to_string();
    let log_dir = dir.path().display().to_string();
    for prefix in [evil.as_str(), "../evil", ".."] {
        let run = forged_run(
            &db,
            &["-n", "-t", "1", "-l", "--log-prefix", prefix],
            SELECT_ONLY,
        );
        let w = ended(
            worker(&db, run, dir.path(), &["--log-dir", &log_dir]),
            Duration::from_secs(60),
        );
        assert_eq!(w.code, Some(1), "{}", w.stderr);
        assert!(
            w.stderr.contains("must be a plain file name"),
            "{}",
            w.stderr
        );
    }
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn a_run_with_logs_needs_the_workers_log_dir() {
    let db = fresh_db("trust_log_dir");
    common::pgbench_init(&db, 1);
    let cwd = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let coordinator = |db: &TestDb| {
        let mut c = common::pgrig_cmd(db);
        c.args(["bench", "--segments", "1", "--coordinator", &db.url()])
            .args([
                "-n",
                "-S",
                "-c",
                "1",
                "-t",
                "3",
                "-l",
                "--log-prefix",
                "seg",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    // without --log-dir: refused, and the coordinator says why
    let coord = coordinator(&db);
    let mut w = common::pgrig_cmd(&db);
    w.args([
        "worker",
        "--segment",
        "0/1",
        "--coordinator",
        &db.url(),
        "--wait",
        "60",
    ])
    .current_dir(cwd.path())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let w = ended(w.spawn().unwrap(), Duration::from_secs(60));
    let coord = ended(coord, Duration::from_secs(60));
    assert_eq!(w.code, Some(1), "{}", w.stderr);
    assert!(w.stderr.contains("--log-dir"), "{}", w.stderr);
    assert_eq!(coord.code, Some(1), "{}", coord.stderr);
    assert!(coord.stderr.contains("--log-dir"), "{}", coord.stderr);
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "a log in the cwd"
    );
    // with it: the logs are there
    let coord = coordinator(&db);
    let mut w = common::pgrig_cmd(&db);
    w.args([
        "worker",
        "--segment",
        "0/1",
        "--coordinator",
        &db.url(),
        "--wait",
        "60",
    ])
    .args(["--log-dir", &logs.path().display().to_string()])
    .current_dir(cwd.path())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let w = ended(w.spawn().unwrap(), Duration::from_secs(60));
    let coord = ended(coord, Duration::from_secs(60));
    assert_eq!(w.code, Some(0), "{}", w.stderr);
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    let names: Vec<String> = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.len() == 1 && names[0].starts_with("seg."),
        "{names:?}"
    );
}

#[test]
fn a_script_travels_as_its_text_with_its_digest() {
    let db = fresh_db("trust_script_text");
    db.psql("CREATE TABLE work (client int)");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("work.sql");
    let text = "INSERT INTO work VALUES (:client_id);\n";
    std::fs::write(&script, text).unwrap();
    let mut c = common::pgrig_cmd(&db);
    c.args(["bench", "--segments", "1", "--coordinator", &db.url()])
        .args([
            "-n",
            "-c",
            "2",
            "-t",
            "3",
            "-f",
            &script.display().to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let coord = c.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while db
        .try_psql("SELECT count(*) FROM pgrig_fleet.runs")
        .map_or(true, |n| n.trim() != "1")
    {
        assert!(Instant::now() < until, "no run");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::remove_file(&script).unwrap(); // the workers never read it
    let mut w = common::pgrig_cmd(&db);
    w.args([
        "worker",
        "--segment",
        "0/1",
        "--coordinator",
        &db.url(),
        "--wait",
        "60",
        "--target", // its own target, given here rather than in its environment
        &db.url(),
    ])
    .env_remove("PGHOST")
    .env_remove("PGPORT")
    .env_remove("PGDATABASE")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let w = ended(w.spawn().unwrap(), Duration::from_secs(60));
    let coord = ended(coord, Duration::from_secs(60));
    assert_eq!(w.code, Some(0), "{}", w.stderr);
    assert_eq!(coord.code, Some(0), "{}", coord.stderr);
    assert_eq!(db.psql("SELECT count(*) FROM work").trim(), "6");
    let sum = sha256(&db, text);
    assert!(
        w.stderr.contains(&format!("(sha256 {sum})")),
        "{}",
        w.stderr
    );
}

#[test]
fn a_script_with_a_shell_command_or_a_wrong_digest_is_refused() {
    let db = fresh_db("trust_script_shell");
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let shell = format!("\\shell touch {}\nSELECT 1;\n", marker.display());
    let one = |text: &str, sum: &str| {
        serde_json::json!([{"file": "w.sql", "weight": 1, "text": text, "sha256": sum}]).to_string()
    };
    let cases = [
        (one(&shell, &sha256(&db, &shell)), "\\shell"),
        (one("SELECT 2;\n", &sha256(&db, "SELECT 1;\n")), "SHA-256"),
    ];
    for (scripts, needle) in cases {
        let run = forged_run(&db, &["-n", "-c", "1", "-t", "1"], &scripts);
        let w = ended(worker(&db, run, dir.path(), &[]), Duration::from_secs(60));
        assert_eq!(w.code, Some(1), "{}", w.stderr);
        assert!(w.stderr.contains(needle), "{needle}: {}", w.stderr);
    }
    assert!(!marker.exists());
}

#[test]
fn the_coordinator_sends_no_connection_option_or_path() {
    let db = fresh_db("trust_coordinator");
    for args in [
        &["-c", "2", "-t", "1", "-h", "127.0.0.1"][..],
        &["-c", "2", "-t", "1", "postgres"],
        &[
            "-c",
            "2",
            "-t",
            "1",
            "-l",
            "--log-prefix",
            "/tmp/elsewhere/x",
        ],
    ] {
        let mut c: Command = common::pgrig_cmd(&db);
        c.args(["bench", "--segments", "2", "--coordinator", &db.url()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let e = ended(c.spawn().unwrap(), Duration::from_secs(20));
        assert_eq!(e.code, Some(1), "{args:?}: {}{}", e.stdout, e.stderr);
        assert!(
            e.stderr.contains("not sent to workers") || e.stderr.contains("plain file name"),
            "{args:?}: {}",
            e.stderr
        );
    }
}

#[test]
fn a_start_instant_beyond_the_wait_or_infinite_is_refused() {
    let db = fresh_db("trust_start");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    for start in ["'infinity'", "clock_timestamp() + interval '1 year'"] {
        let run = forged_run(&db, &["-n", "-c", "1", "-t", "1"], SELECT_ONLY);
        let w = worker(&db, run, dir.path(), &[]);
        let until = Instant::now() + Duration::from_secs(60);
        while !registration(&db, run).starts_with("registered") {
            assert!(Instant::now() < until, "the worker did not register");
            std::thread::sleep(Duration::from_millis(50));
        }
        db.psql(&format!(
            "UPDATE pgrig_fleet.runs SET state = 'running', start_at = {start}, \
             coordinator_seen = clock_timestamp() WHERE id = {run}"
        ));
        let w = ended(w, Duration::from_secs(30));
        assert_eq!(w.code, Some(1), "{start}: {}", w.stderr);
        assert!(w.stderr.contains("start instant"), "{start}: {}", w.stderr);
    }
}

/// Forged pgbench rows whose figures would exhaust the target or the worker (`-c 5001`: more
/// connections than a worker opens, which pgbench's own open-files check lets through when the
/// limit is high; `-T` of 31 years; a progress interval of 11 days) are refused by name before
/// anything runs; the worker row says why.
#[test]
fn a_pgbench_row_past_a_bound_is_refused_by_name() {
    let db = fresh_db("trust_bounds");
    let dir = tempfile::tempdir().unwrap();
    let mut files = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut files) };
    assert_eq!(rc, 0);
    // below 5004 open files pgbench's own check refuses -c 5001 first (also by name)
    let clients_refusal = if files.rlim_cur >= 5004 {
        "--client=5001"
    } else {
        "open files"
    };
    for (args, name) in [
        (&["-n", "-c", "5001", "-t", "1"][..], clients_refusal),
        (&["-n", "-T", "999999999"][..], "--time=999999999"),
        (
            &["-n", "-t", "1", "-P", "1000000"][..],
            "--progress=1000000",
        ),
    ] {
        let run = forged_run(&db, args, SELECT_ONLY);
        let w = ended(worker(&db, run, dir.path(), &[]), Duration::from_secs(60));
        assert_eq!(w.code, Some(1), "{args:?}: {}", w.stderr);
        assert!(w.stderr.contains(name), "{args:?}: {}", w.stderr);
        assert!(registration(&db, run).contains(name), "{args:?}");
    }
}

/// A run of kind `lua` written into the schema with `args`, naming `file`'s digest.
fn forged_lua_run(db: &TestDb, file: &std::path::Path, args: &[&str]) -> i64 {
    db.psql(pgrig_fleet::schema::DDL);
    let text = std::fs::read_to_string(file).unwrap();
    let scripts = format!(
        r#"{{"lua": {{"name": "script.lua", "sha256": "{}"}}}}"#,
        sha256(db, &text)
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

/// Forged Lua rows: `--threads=100000000` (which filled `max_connections` and aborted the
/// worker), `--time=-5` (taken as no limit), a negative rate or events, a percentile past
/// 100: each refused by name, nothing connects.
#[test]
fn a_lua_row_past_a_bound_is_refused_by_name() {
    let db = fresh_db("trust_lua_bounds");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("script.lua");
    std::fs::write(
        &file,
        "function event() db_query('SELECT 1') end\n\
         function thread_init() drv = sysbench.sql.driver() con = drv:connect() end\n",
    )
    .unwrap();
    for bad in [
        "--threads=100000000",
        "--time=-5",
        "--events=-1",
        "--rate=-3",
        "--report-interval=999999999",
        "--rand-spec-iter=0",
    ] {
        let run = forged_lua_run(&db, &file, &["--threads=1", "--time=1", bad]);
        let mut c = common::pgrig_cmd(&db);
        c.args(["worker", "--segment", "0/1", "--coordinator", &db.url()])
            .args(["--run", &run.to_string(), "--wait", "5", "--lua-script"])
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let w = ended(c.spawn().unwrap(), Duration::from_secs(60));
        assert_eq!(w.code, Some(1), "{bad}: {}", w.stderr);
        assert!(w.stderr.contains(bad), "{bad}: {}", w.stderr);
        assert!(registration(&db, run).contains(bad), "{bad}");
    }
}
