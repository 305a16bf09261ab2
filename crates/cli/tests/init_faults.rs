//! Faults during `pgrig init`: Ctrl-C while loading cancels the server-side work and exits 1
//! with a clear message (and a rerun works); a server that dies mid-load gives a clear error
//! and exit 1.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgrig_testkit::{custom_cluster, fresh_db, fresh_db_on, ServerOptions, TestDb};

fn spawn_init(db: &TestDb, args: &[&str]) -> Child {
    let mut c: Command = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.arg("init").args(args);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().expect("spawn pgrig init")
}

/// Waits until a backend of `db` runs a statement starting with `prefix`.
fn wait_for_query(db: &TestDb, prefix: &str) {
    let sql = format!(
        "select count(*) from pg_stat_activity where datname = '{}' and state = 'active' and query like '{prefix}%'",
        db.name
    );
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if db.try_psql(&sql).map(|s| s != "0").unwrap_or(false) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no backend ever ran {prefix}");
}

fn finish(mut child: Child) -> (Option<i32>, String) {
    let start = Instant::now();
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("pgrig init did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let code = child.wait().ok().and_then(|s| s.code());
    (code, err)
}

fn active_backends(db: &TestDb) -> String {
    db.psql(&format!(
        "select count(*) from pg_stat_activity where datname = '{}' and state = 'active' and pid <> pg_backend_pid()",
        db.name
    ))
}

/// The backends of `db` still active once every cancelled one has ended: polls for up to 10 s
/// (a cancelled backend ends a moment after its client has).
fn active_backends_after_cancel(db: &TestDb) -> String {
    let start = Instant::now();
    loop {
        let n = active_backends(db);
        if n == "0" || start.elapsed() > Duration::from_secs(10) {
            return n;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn interrupt(child: &Child) {
    // SAFETY: sending SIGINT to our own child process.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(r, 0);
}

#[test]
fn ctrl_c_during_client_side_load_cancels_and_exits_1() {
    let db = fresh_db("ctrlc_copy");
    let child = spawn_init(&db, &["-s", "30"]);
    wait_for_query(&db, "copy pgbench_accounts");
    interrupt(&child);
    let (code, err) = finish(child);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("canceling statement due to user request"),
        "the server-side COPY was cancelled: {err}"
    );
    assert!(
        err.contains("pgrig: error: initialization canceled by Ctrl-C"),
        "{err}"
    );
    assert_eq!(active_backends(&db), "0");
    // Nothing a rerun cannot drop.
    let rerun = pgrig_testkit::run({
        let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
        c.args(["init", "-s", "1"]);
        c
    });
    assert!(rerun.success(), "{}", rerun.stderr);
}

#[test]
fn ctrl_c_during_parallel_server_side_generation_cancels_every_connection() {
    let db = fresh_db("ctrlc_g");
    let child = spawn_init(
        &db,
        &["-I", "dtG", "-s", "40", "--partitions=4", "--load-jobs=3"],
    );
    wait_for_query(&db, "insert into \"pgbench_accounts_");
    interrupt(&child);
    let (code, err) = finish(child);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("canceling statement due to user request"),
        "{err}"
    );
    assert!(err.contains("initialization canceled by Ctrl-C"), "{err}");
    assert_eq!(active_backends_after_cancel(&db), "0");
}

#[test]
fn server_dying_mid_load_is_a_clear_error() {
    let server: &'static pgrig_testkit::Server =
        Box::leak(Box::new(custom_cluster(ServerOptions::default())));
    let db = fresh_db_on(server, "dies");
    let child = spawn_init(&db, &["-s", "30"]);
    wait_for_query(&db, "copy pgbench_accounts");
    // An immediate shutdown, as if the server crashed.
    let st = Command::new("kill")
        .args(["-QUIT", &server.postmaster_pid().expect("pid").to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let (code, err) = finish(child);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("pgrig: error: "), "{err}");
    assert!(
        err.contains("server closed the connection")
            || err.contains("terminating connection")
            || err.contains("connection"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    std::mem::forget(db);
}
