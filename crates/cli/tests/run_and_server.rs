//! `pgrig run` (the README's first command: a throwaway server, init, run, summary, cleanup, or
//! an existing target) and `pgrig server start|status|stop`.

use std::process::Command;

use pgrig_testkit::{fresh_db, run, CmdOutput};

fn pgrig() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE"] {
        c.env_remove(v);
    }
    c
}

/// The directory named in `... on port N in DIR (removed when the run ends)`.
fn server_dir(stderr: &str) -> std::path::PathBuf {
    let line = stderr
        .lines()
        .find(|l| l.contains("(removed when the run ends)"))
        .unwrap_or_else(|| panic!("no server line in:\n{stderr}"));
    let dir = line
        .split(" in ")
        .nth(1)
        .expect("dir")
        .trim_end_matches(" (removed when the run ends)");
    dir.into()
}

fn field<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no {name:?} line in:\n{stdout}"))
        .trim()
}

#[test]
fn run_without_a_target_benchmarks_a_throwaway_server_and_removes_it() {
    let out: CmdOutput = run({
        let mut c = pgrig();
        c.args([
            "run",
            "--workload",
            "tpcb-like",
            "--clients",
            "2",
            "--duration",
            "2s",
        ]);
        c
    });
    assert_eq!(out.code, Some(0), "stderr:\n{}", out.stderr);
    let dir = server_dir(&out.stderr);
    assert!(
        !dir.exists(),
        "{} still exists after the run",
        dir.display()
    );
    assert!(
        out.stderr
            .contains("initialising pgbench tables at scale 2"),
        "{}",
        out.stderr
    );
    let tx = field(&out.stdout, "transactions:");
    let ok: u64 = tx.split_whitespace().next().unwrap().parse().unwrap();
    assert!(ok > 0, "{tx}");
    assert!(tx.contains(" 0 failed"), "{tx}");
    let tps: f64 = field(&out.stdout, "throughput:")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(tps > 0.0);
    let lat = field(&out.stdout, "latency ms:");
    for p in ["mean", "p50", "p90", "p99", "p99.9", "max"] {
        assert!(lat.contains(p), "{lat}");
    }
    assert!(field(&out.stdout, "client CPU time:").contains("per transaction"));
    assert!(field(&out.stdout, "client run-queue wait:").contains("% of the run"));
    assert!(
        !out.stderr.contains("clients on scale"),
        "default scale follows the clients"
    );
}

#[test]
fn run_against_a_target_initialises_it_and_writes_json() {
    let db = fresh_db("run_target");
    let out = run({
        let mut c = pgrig();
        c.args([
            "run",
            "--target",
            &db.conninfo(),
            "--init",
            "--scale",
            "1",
            "--workload",
            "select-only",
        ]);
        c.args([
            "--clients",
            "2",
            "--threads",
            "2",
            "--duration",
            "1s",
            "--json",
            "-",
        ]);
        c
    });
    assert_eq!(out.code, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(
        db.psql("select count(*) from pgbench_accounts").trim(),
        "100000"
    );
    let json_start = out.stdout.find('{').expect("json on stdout");
    let v: serde_json::Value = serde_json::from_str(&out.stdout[json_start..]).expect("valid json");
    assert!(v["tps"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(
        v["client_cpu"]["threads"].as_array().map(Vec::len),
        Some(2),
        "{v}"
    );
}

#[test]
fn run_rejects_an_unknown_workload_before_starting_anything() {
    let out = run({
        let mut c = pgrig();
        c.args(["run", "--workload", "no-such-workload", "--duration", "1s"]);
        c
    });
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("no-such-workload"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("starting a throwaway"),
        "{}",
        out.stderr
    );
}

#[test]
fn server_start_status_stop_round_trip() {
    let state = tempfile::tempdir().unwrap();
    let cmd = |arg: &str| {
        let mut c = pgrig();
        c.env("XDG_RUNTIME_DIR", state.path()).args(["server", arg]);
        run(c)
    };
    let started = cmd("start");
    assert_eq!(started.code, Some(0), "{}", started.stderr);
    let conninfo = field(&started.stdout, "connect with:").to_string();
    let q = run({
        let mut c = Command::new("psql");
        c.args(["-XAtc", "select 6*7", &conninfo]);
        c
    });
    assert_eq!(q.stdout.trim(), "42", "{}", q.stderr);

    let st = cmd("status");
    assert_eq!(st.code, Some(0));
    assert!(st.stdout.contains(": running"), "{}", st.stdout);
    assert!(
        cmd("start").code == Some(1),
        "a second start must refuse while one runs"
    );

    let stopped = cmd("stop");
    assert_eq!(stopped.code, Some(0), "{}", stopped.stderr);
    let st = cmd("status");
    assert_eq!(st.code, Some(3));
    assert!(st.stdout.contains("no pgrig server is running"));
}
