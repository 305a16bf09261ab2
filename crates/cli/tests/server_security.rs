//! `pgrig server start` as a user meets it: socket only by default, `--tcp` with a password that
//! is kept in a 0600 file and never printed, and `--set` values that would break the
//! configuration refused with the option named.

use std::process::Command;

use pgrig_testkit::{run, CmdOutput};

fn server(state: &std::path::Path, args: &[&str]) -> CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSFILE"] {
        c.env_remove(v);
    }
    c.env("XDG_RUNTIME_DIR", state).arg("server").args(args);
    run(c)
}

fn export<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("export {name}=")))
        .unwrap_or_else(|| panic!("no export {name} in:\n{stdout}"))
}

#[test]
fn server_start_with_tcp_prints_the_password_file_and_never_the_password() {
    let state = tempfile::tempdir().unwrap();
    let started = server(state.path(), &["start", "--tcp"]);
    assert_eq!(started.code, Some(0), "{}", started.stderr);
    let passfile = export(&started.stdout, "PGPASSFILE").to_string();
    let text = std::fs::read_to_string(&passfile).unwrap();
    let password = text.lines().next().unwrap().rsplit(':').next().unwrap();
    let port = export(&started.stdout, "PGPORT").to_string();
    let q = run({
        let mut c = Command::new("psql");
        c.args(["-X", "-w", "-At", "-c", "select inet_client_addr()"])
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", &port)
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres")
            .env("PGPASSFILE", &passfile)
            .env_remove("PGPASSWORD");
        c
    });
    assert_eq!(q.stdout.trim(), "127.0.0.1", "{}", q.stderr);
    let status = server(state.path(), &["status"]);
    let stopped = server(state.path(), &["stop"]);
    assert_eq!(stopped.code, Some(0), "{}", stopped.stderr);
    for out in [&started, &status, &stopped] {
        assert!(!out.stdout.contains(password) && !out.stderr.contains(password));
    }
    let state_text = std::fs::read_dir(state.path().join("pgrig"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(!state_text.contains(password), "password in the state file");
}

#[test]
fn server_start_without_tcp_listens_on_no_port() {
    let state = tempfile::tempdir().unwrap();
    let started = server(state.path(), &["start"]);
    assert_eq!(started.code, Some(0), "{}", started.stderr);
    let port: u16 = export(&started.stdout, "PGPORT").parse().unwrap();
    let tcp = std::net::TcpStream::connect(("127.0.0.1", port));
    server(state.path(), &["stop"]);
    assert!(tcp.is_err(), "the server listened on 127.0.0.1:{port}");
    assert!(!started.stdout.contains("PGPASSFILE"), "{}", started.stdout);
}

#[test]
fn server_start_refuses_a_set_value_with_a_line_break() {
    let state = tempfile::tempdir().unwrap();
    let out = server(state.path(), &["start", "--set", "work_mem=4MB\nfsync=off"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("invalid --set"), "{}", out.stderr);
    assert!(out.stderr.contains("line break"), "{}", out.stderr);
    assert!(!state.path().join("pgrig/server.json").exists());
}

#[test]
fn run_with_tcp_benchmarks_a_throwaway_server_over_a_password_protected_port() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    for v in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSFILE",
        "PGPASSWORD",
    ] {
        c.env_remove(v);
    }
    c.args([
        "run",
        "--tcp",
        "-w",
        "select-only",
        "-T",
        "1s",
        "--json",
        "-",
    ]);
    let out = run(c);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains(" on 127.0.0.1 port "), "{}", out.stderr);
    let json_start = out.stdout.find('{').expect("json on stdout");
    let v: serde_json::Value = serde_json::from_str(&out.stdout[json_start..]).unwrap();
    assert!(v["tps"].as_f64().unwrap() > 0.0, "{v}");
}

/// `--set` settings that change who can connect are refused without consent (the probe reopened
/// a scratch server to every account with `unix_socket_permissions=0777`); with
/// `--allow-access-settings` the server starts, warns where else it listens, and pgrig's own
/// socket directory stays what `start` prints.
#[test]
fn access_settings_are_refused_without_consent() {
    let state = tempfile::tempdir().unwrap();
    let pgrig = |args: &[&str]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pgrig"));
        c.env("XDG_RUNTIME_DIR", state.path()).args(args);
        pgrig_testkit::run(c)
    };
    for set in [
        "unix_socket_permissions=0777",
        "listen_addresses=*",
        "hba_file=/tmp/h",
    ] {
        let out = pgrig(&["server", "start", "--set", set]);
        assert_eq!(out.code, Some(1), "{set}: {}", out.stderr);
        assert!(
            out.stderr.contains("--allow-access-settings"),
            "{}",
            out.stderr
        );
        assert_eq!(
            pgrig(&["server", "status"]).code,
            Some(3),
            "nothing started"
        );
    }
}
