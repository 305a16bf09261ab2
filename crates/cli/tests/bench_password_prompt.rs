//! pgbench's password prompt: when the server wants a password and none is known, `pgbench`
//! asks `Password: ` on the terminal (echo off) and connects again; without a terminal it asks
//! on stderr and reads standard input. Compared with the installed pgbench 15 on a private
//! cluster whose `scramuser` needs a SCRAM password; the terminal is a pty made by util-linux
//! `script`.

use crate::common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::pgbench_link;
use pgrig_testkit::{custom_cluster, fresh_db_on, Server, ServerOptions, TestDb};

const SECRET: &str = "sekret-4711";

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        custom_cluster(ServerOptions {
            hba: Some(vec![
                "local all scramuser scram-sha-256".into(),
                "local all all trust".into(),
            ]),
            bootstrap_sql: vec![format!("CREATE ROLE scramuser LOGIN PASSWORD '{SECRET}'")],
            ..Default::default()
        })
    })
}

fn as_scramuser(mut cmd: Command, dir: &std::path::Path) -> Command {
    cmd.env("PGUSER", "scramuser")
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", dir.join("no-such-pgpass"))
        .current_dir(dir);
    cmd
}

/// Runs `program ARGS` on a pty (`script`), answers the password prompt once it shows, and
/// returns (exit status, everything the terminal showed).
fn on_a_terminal(db: &TestDb, dir: &std::path::Path, program: &std::path::Path) -> (i32, String) {
    let line = format!("{} -n -t 1 -f one.sql", program.display());
    terminal_session(db, dir, &line, format!("{SECRET}\n").as_bytes())
}

/// Runs the shell command `line` on a pty (`script`), types `keys` once the password prompt
/// shows, and returns (exit status, everything the terminal showed).
fn terminal_session(db: &TestDb, dir: &std::path::Path, line: &str, keys: &[u8]) -> (i32, String) {
    let mut script = as_scramuser(db.command("script"), dir);
    script
        .args(["-q", "-e", "-c", line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = script
        .spawn()
        .expect("util-linux `script` is needed for this test");
    let shown = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let shown = shown.clone();
        let mut out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let start = Instant::now();
    while !String::from_utf8_lossy(&shown.lock().unwrap()).contains("Password: ") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no prompt: {}",
            String::from_utf8_lossy(&shown.lock().unwrap())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(keys).unwrap();
    stdin.flush().unwrap();
    // a program that lost the answer waits for ever: fail instead of hanging the suite
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!(
                "no exit 60 s after the answer: {}",
                String::from_utf8_lossy(&shown.lock().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    reader.join().unwrap();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    (status.code().unwrap_or(-1), text)
}

fn setup() -> (TestDb, tempfile::TempDir) {
    let db = fresh_db_on(server(), "password_prompt");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.sql"), "SELECT 1;\n").unwrap();
    (db, dir)
}

#[test]
fn on_a_terminal_the_password_is_asked_without_echo_and_the_run_connects() {
    let (db, dir) = setup();
    let link = dir.path().join("pgbench");
    pgbench_link(&db, dir.path()); // creates the link
    let oracle = pgrig_testkit::pgbench_path().expect("the pgbench 15 oracle");
    for program in [link.as_path(), oracle.as_path()] {
        let (code, shown) = on_a_terminal(&db, dir.path(), program);
        assert_eq!(code, 0, "{}: {shown}", program.display());
        assert!(shown.starts_with("Password: "), "{shown}");
        assert!(
            shown.contains("number of transactions actually processed: 1/1"),
            "{shown}"
        );
        assert!(!shown.contains(SECRET), "the password was echoed: {shown}");
    }
}

/// Ctrl-C at the prompt ends pgrig with status 130 and gives the terminal its echo back: the
/// shell that ran it (which survives the Ctrl-C: it traps it) then finds echo on.
#[test]
fn ctrl_c_at_the_prompt_exits_130_and_gives_the_terminal_its_echo_back() {
    let (db, dir) = setup();
    let link = dir.path().join("pgbench");
    pgbench_link(&db, dir.path());
    let line = format!(
        "trap : INT; {} -n -t 1 -f one.sql; echo \"status=$?\"; stty -a",
        link.display()
    );
    let (_, shown) = terminal_session(&db, dir.path(), &line, b"\x03");
    let after = shown
        .split_once("status=130")
        .unwrap_or_else(|| panic!("no exit status 130 after Ctrl-C: {shown}"))
        .1;
    let words: Vec<&str> = after.split([' ', ';', '\r', '\n']).collect();
    assert!(words.contains(&"echo"), "echo is still off: {shown}");
    assert!(!words.contains(&"-echo"), "echo is still off: {shown}");
}

#[test]
fn without_a_terminal_the_prompt_goes_to_stderr_like_pgbench() {
    let (db, dir) = setup();
    let oracle = pgrig_testkit::pgbench_path().expect("the pgbench 15 oracle");
    // (PGPASSWORD, answer): none / empty (both ask), wrong (no question, fails)
    let cases = [
        (None, format!("{SECRET}\n")),
        (None, String::new()),
        (Some(""), format!("{SECRET}\n")),
        (Some("wrong"), format!("{SECRET}\n")),
    ];
    for (env_password, answer) in cases {
        let mut outs = Vec::new();
        for cmd in [pgbench_link(&db, dir.path()), db.command(&oracle)] {
            // setsid: no controlling terminal, so /dev/tty cannot be opened
            let mut c = as_scramuser(db.command("setsid"), dir.path());
            if let Some(p) = env_password {
                c.env("PGPASSWORD", p);
            }
            c.arg(cmd.get_program())
                .args(["-n", "-t", "1", "-f", "one.sql"]);
            c.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(answer.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            outs.push((
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        assert_eq!(
            outs[0], outs[1],
            "PGPASSWORD {env_password:?}, answer {answer:?}"
        );
        let asked = outs[0].1.starts_with("Password: \n");
        assert_eq!(asked, env_password != Some("wrong"), "{:?}", outs[0]);
        assert!(!outs[0].1.contains(SECRET));
    }
}
