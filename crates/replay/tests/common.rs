//! Shared by the replay tests: a recording server whose log holds a real pgbench workload
//! (stderr, csvlog and, on PostgreSQL 15+, jsonlog at once), the oracle pgreplay, and helpers
//! that parse and replay through the library as `pgrig replay` does.

#![allow(dead_code)]

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pgrig_lab::{Server, ServerOptions};
use pgrig_replay::entry::Format;
use pgrig_replay::parser::{LogParser, ParseOptions};
use pgrig_replay::replayer::{replay, Outcome, ReplayOptions};
use pgrig_replay::{replayfile, Item};

/// The oracle: Debian's pgreplay 1.2.0.
pub fn pgreplay() -> PathBuf {
    let p = PathBuf::from(std::env::var("PGRIG_PGREPLAY").unwrap_or("/usr/bin/pgreplay".into()));
    assert!(
        p.exists(),
        "pgreplay 1.2.0 (the oracle of these tests) is not installed at {}: apt-get install -y pgreplay",
        p.display()
    );
    p
}

/// A log recorded from a real server, in its three formats, and the database it was run on.
pub struct Recording {
    pub server: &'static Server,
    pub db: String,
    pub stderr: PathBuf,
    pub csv: PathBuf,
    pub json: Option<PathBuf>,
}

pub fn logging_server(extra: &[(&str, &str)]) -> &'static Server {
    let mut o = ServerOptions::default()
        .setting("logging_collector", "on")
        .setting("log_directory", "log")
        .setting("log_filename", "rec.log")
        .setting("log_connections", "on")
        .setting("log_disconnections", "on")
        .setting("log_line_prefix", "%m|%u|%d|%c|")
        .setting("lc_messages", "C")
        .setting("log_min_messages", "warning");
    let probe = pgrig_lab::PgBinaries::discover().ok();
    let dest = match probe.map(|b| b.major()) {
        Some(v) if v >= 15 => "stderr,csvlog,jsonlog",
        _ => "stderr,csvlog",
    };
    o = o.setting("log_destination", dest);
    for (k, v) in extra {
        o = o.setting(*k, *v);
    }
    Box::leak(Box::new(pgrig_testkit::custom_cluster(o)))
}

pub fn psql(server: &Server, db: &str, sql: &str) -> String {
    server
        .psql(db, sql)
        .unwrap_or_else(|e| panic!("psql on {db}: {e}"))
}

pub fn pgbench(server: &Server, db: &str, args: &[&str]) {
    let mut cmd = Command::new(pgrig_testkit::pgbench_oracle());
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("PG")) {
            cmd.env_remove(&k);
        }
    }
    cmd.envs(server.env(db)).args(args);
    let out = pgrig_testkit::run(cmd);
    assert!(out.success(), "pgbench {args:?} failed: {}", out.stderr);
}

/// Waits until the log collector has written `needle` to `path`.
pub fn wait_for_log(path: &Path, needle: &str) {
    for _ in 0..100 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} never showed {needle:?}", path.display());
}

/// pgbench's tables (scale 1) in a fresh database `db`.
pub fn seed(server: &Server, db: &str) {
    psql(server, "postgres", &format!("DROP DATABASE IF EXISTS {db}"));
    psql(server, "postgres", &format!("CREATE DATABASE {db}"));
    pgbench(server, db, &["-i", "-q", "-s", "1", db]);
}

/// The recording: pgbench's simple-update script (`-N`: its sessions touch no common row, so
/// pgreplay, which sends items strictly in log order, cannot wait on a lock forever) through
/// the simple, extended and prepared protocols, 3 clients, 30 transactions each, logged with
/// log_statement = all.
pub fn recording() -> &'static Recording {
    static REC: OnceLock<Recording> = OnceLock::new();
    REC.get_or_init(|| {
        record(
            "rec",
            &[("log_statement", "all")],
            &["-N"],
            &["simple", "extended", "prepared"],
        )
    })
}

/// pgbench's TPC-B-like script (every transaction updates the one branch row of scale 1), 3
/// clients, through the simple and prepared protocols, log_statement = all.
pub fn contended_recording() -> &'static Recording {
    static REC: OnceLock<Recording> = OnceLock::new();
    REC.get_or_init(|| {
        record(
            "tpcb",
            &[("log_statement", "all")],
            &[],
            &["simple", "prepared"],
        )
    })
}

/// The simple-update script logged only by `log_min_duration_statement = 0` (no
/// log_statement): `duration: ... statement:` and `duration: ... execute ...:` entries.
pub fn duration_recording() -> &'static Recording {
    static REC: OnceLock<Recording> = OnceLock::new();
    REC.get_or_init(|| {
        record(
            "dur",
            &[("log_min_duration_statement", "0")],
            &["-N"],
            &["simple", "extended"],
        )
    })
}

/// Records pgbench (`script` options, each protocol in turn) on a new logging server, with
/// `logging` set on its database once its tables are loaded (so the load is not in the log).
pub fn record(name: &str, logging: &[(&str, &str)], script: &[&str], modes: &[&str]) -> Recording {
    let server = logging_server(&[]);
    let db = format!("{name}_{}", std::process::id());
    seed(server, &db);
    for (k, v) in logging {
        psql(
            server,
            "postgres",
            &format!("ALTER DATABASE {db} SET {k} = '{v}'"),
        );
    }
    for mode in modes {
        let mut args = vec!["-n", "-c", "3", "-t", "30", "-M", mode];
        args.extend_from_slice(script);
        args.push(&db);
        pgbench(server, &db, &args);
    }
    psql(server, &db, "SELECT 'recording done'");
    let dir = server.data_dir().join("log");
    let stderr = dir.join("rec.log");
    wait_for_log(&stderr, "SELECT 'recording done'");
    let csv = dir.join("rec.csv");
    wait_for_log(&csv, "recording done");
    let json = Some(dir.join("rec.json")).filter(|p| p.exists());
    if let Some(j) = &json {
        wait_for_log(j, "recording done");
    }
    // a snapshot: the server goes on logging while the tests run (kept in the cluster's own
    // directory, which its watchdog removes when the test binary exits)
    let snap = server.root_dir().join("snapshot");
    std::fs::create_dir_all(&snap).unwrap();
    let copy = |p: &Path| {
        let to = snap.join(p.file_name().unwrap());
        std::fs::copy(p, &to).unwrap();
        to
    };
    let (stderr, csv, json) = (copy(&stderr), copy(&csv), json.as_deref().map(copy));
    Recording {
        server,
        db,
        stderr,
        csv,
        json,
    }
}

/// Parses a log as `pgrig replay -f` does: the items, the warnings and the statistics text.
pub fn parse(path: &Path, format: Format, opts: ParseOptions) -> (Vec<Item>, Vec<String>, String) {
    let f = std::fs::File::open(path).unwrap();
    let opts = ParseOptions {
        format: Some(format),
        ..opts
    };
    let mut p = LogParser::new(BufReader::new(f), &opts);
    let mut items = Vec::new();
    while let Some(i) = p
        .next_item()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    {
        items.push(i);
    }
    (items, p.notes.clone(), p.stats().report())
}

pub fn encode(items: &[Item]) -> Vec<u8> {
    items.iter().flat_map(replayfile::encode).collect()
}

/// Replays items onto `server` as `pgrig replay` does; returns the outcome and what it printed.
pub fn replay_on(
    server: &Server,
    items: Vec<Item>,
    speed: f64,
    jump: bool,
) -> (Outcome, Vec<String>) {
    let opts = ReplayOptions {
        host: Some(server.socket_dir().display().to_string()),
        port: Some(server.port()),
        speed,
        jump,
        ..ReplayOptions::default()
    };
    let mut it = items.into_iter();
    let mut next = || Ok(it.next());
    let said = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let s2 = said.clone();
    let outcome = replay(
        opts,
        &mut next,
        Box::new(move |l: &str| s2.borrow_mut().push(l.to_string())),
    )
    .expect("replay runs");
    let lines = said.borrow().clone();
    (outcome, lines)
}

/// The contents pgbench's transactions leave, in an order-independent form (history without its
/// mtime, which is the time of the insert).
pub fn contents(server: &Server, db: &str) -> String {
    psql(
        server,
        db,
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts), \
                (SELECT string_agg(bid || ':' || bbalance, ',' ORDER BY bid) FROM pgbench_branches), \
                (SELECT string_agg(tid || ':' || tbalance, ',' ORDER BY tid) FROM pgbench_tellers), \
                (SELECT md5(string_agg(concat_ws(':', tid, bid, aid, delta), ',' ORDER BY tid, bid, aid, delta)) FROM pgbench_history), \
                (SELECT count(*) FROM pgbench_history)",
    )
}
