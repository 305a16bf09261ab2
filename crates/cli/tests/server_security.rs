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

/// Settings that read another configuration file, load code from a path or run a command
/// reach the access settings indirectly (the probe's `--set include=inc.conf` listened on
/// 0.0.0.0 with a trust-all hba file): refused without consent like the direct ones, before
/// anything starts, the setting named. A library from the server's own directory needs none.
#[test]
fn includes_library_paths_and_commands_are_refused_without_consent() {
    let state = tempfile::tempdir().unwrap();
    let inc = state.path().join("inc.conf");
    std::fs::write(
        &inc,
        "listen_addresses = '0.0.0.0'\nunix_socket_permissions = 0777\n",
    )
    .unwrap();
    let inc = inc.display().to_string();
    let dir = state.path().display().to_string();
    for set in [
        format!("include={inc}"),
        format!("INCLUDE_IF_EXISTS={inc}"),
        format!("include_dir={dir}"),
        format!("config_file={inc}"),
        format!("data_directory={dir}"),
        "shared_preload_libraries=/tmp/evil".to_string(),
        "session_preload_libraries=$libdir/../../../../tmp/evil".to_string(),
        format!("dynamic_library_path={dir}"),
        "archive_command=touch /tmp/pwned".to_string(),
        "restore_command=touch /tmp/pwned".to_string(),
        "ssl_passphrase_command=touch /tmp/pwned".to_string(),
        format!("external_pid_file={dir}/pid"),
        "port=5999".to_string(),
    ] {
        let out = server(state.path(), &["start", "--set", &set]);
        assert_eq!(out.code, Some(1), "{set}: {}", out.stderr);
        let name = set.split('=').next().unwrap();
        assert!(out.stderr.contains(name), "{set}: {}", out.stderr);
        if name != "port" {
            assert!(
                out.stderr.contains("--allow-access-settings"),
                "{set}: {}",
                out.stderr
            );
        }
        assert_eq!(server(state.path(), &["status"]).code, Some(3), "{set}");
    }
    let ok = server(
        state.path(),
        &[
            "start",
            "--set",
            "shared_preload_libraries=pg_stat_statements",
        ],
    );
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    server(state.path(), &["stop"]);
}

/// A study's `settings = { include = … }` and a matrix of `settings.archive_command` on a
/// throwaway server are refused before anything starts, at the line that set them (a study has
/// no consent for them: they belong on an external server).
#[test]
fn a_study_cannot_give_its_throwaway_server_an_include_or_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc.conf");
    std::fs::write(&inc, "listen_addresses = '0.0.0.0'\n").unwrap();
    let pgrig = |text: &str| {
        std::fs::write(dir.path().join("s.toml"), text).unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
        c.current_dir(dir.path())
            .args(["study", "--dry-run", "s.toml"]);
        run(c)
    };
    let base = "name = \"s\"\n[workload]\nbuiltin = \"select-only\"\ntransactions = 10\n";
    let cases = [
        (
            format!(
                "{base}[target]\nsettings = {{ include = \"{}\" }}\n",
                inc.display()
            ),
            "include",
            "s.toml:6",
        ),
        (
            format!("settings = {{ include_dir = \"/tmp\" }}\n{base}"),
            "include_dir",
            "s.toml:1",
        ),
        (
            format!(
                "{base}[matrix]\n\"settings.archive_command\" = [\"true\", \"touch /tmp/x\"]\n"
            ),
            "archive_command",
            "s.toml:6",
        ),
    ];
    for (text, name, at) in cases {
        let out = pgrig(&text);
        assert_ne!(out.code, Some(0), "{text}\n{}", out.stdout);
        assert!(out.stderr.contains(name), "{}", out.stderr);
        assert!(out.stderr.contains(at), "{}", out.stderr);
        assert!(out.stderr.contains("external server"), "{}", out.stderr);
    }
}

/// A `--set` value cannot end its string early: the configuration reader takes `\` as an escape
/// too, so the probe's `application_name=a'b\' include='/x'` stopped the server from starting;
/// now the server starts and the value comes back whole.
#[test]
fn a_set_value_with_quotes_and_backslashes_stays_one_value() {
    let state = tempfile::tempdir().unwrap();
    let value = r"a'b\' include='/x'";
    let started = server(
        state.path(),
        &["start", "--set", &format!("application_name={value}")],
    );
    assert_eq!(started.code, Some(0), "{}", started.stderr);
    let q = run({
        let mut c = Command::new("psql");
        // psql names itself, so ask what the file held, as the server read it
        let sql = "SELECT setting || '|' || (error IS NULL) FROM pg_file_settings \
                   WHERE name = 'application_name'";
        c.args(["-X", "-At", "-c", sql])
            .env("PGHOST", export(&started.stdout, "PGHOST"))
            .env("PGPORT", export(&started.stdout, "PGPORT"))
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres")
            .env_remove("PGAPPNAME");
        c
    });
    server(state.path(), &["stop"]);
    assert_eq!(
        q.stdout.trim_end_matches('\n'),
        format!("{value}|true"),
        "{}",
        q.stderr
    );
}
