//! Starting, using, restarting and dropping throwaway clusters.

#[path = "../../testkit/src/skip.rs"]
mod skip;

use std::time::Instant;

use pgrig_lab::{Server, ServerOptions};

#[test]
fn started_server_answers_queries_and_drop_removes_everything() {
    let t = Instant::now();
    let server = Server::start(ServerOptions::default()).expect("server starts");
    eprintln!("cluster start took {:?}", t.elapsed());
    assert_eq!(server.psql("postgres", "SELECT 40 + 2").unwrap(), "42");
    assert_eq!(
        server.psql("postgres", "SELECT current_user").unwrap(),
        "postgres"
    );
    let root = server.root_dir().to_path_buf();
    let pid = server.postmaster_pid().unwrap();
    assert!(server
        .socket_dir()
        .join(format!(".s.PGSQL.{}", server.port()))
        .exists());
    drop(server);
    assert!(!root.exists(), "cluster directory removed");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists() || !is_postgres(pid));
}

fn is_postgres(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains("(postgres)") && !s.contains(") Z"))
        .unwrap_or(false)
}

#[test]
fn two_clusters_run_side_by_side_on_different_ports() {
    let a = Server::start(ServerOptions::default()).unwrap();
    let b = Server::start(ServerOptions::default()).unwrap();
    assert_ne!(a.port(), b.port());
    assert_ne!(a.data_dir(), b.data_dir());
    a.psql("postgres", "CREATE DATABASE only_in_a").unwrap();
    let in_b = b
        .psql(
            "postgres",
            "SELECT count(*) FROM pg_database WHERE datname = 'only_in_a'",
        )
        .unwrap();
    assert_eq!(in_b, "0");
}

#[test]
fn restart_keeps_data_and_applies_alter_system() {
    let mut server = Server::start(ServerOptions::default()).unwrap();
    server
        .psql(
            "postgres",
            "CREATE TABLE kept (x int); INSERT INTO kept VALUES (1)",
        )
        .unwrap();
    server
        .psql("postgres", "ALTER SYSTEM SET work_mem = '7MB'")
        .unwrap();
    let old_pid = server.postmaster_pid().unwrap();
    server.restart().unwrap();
    assert_ne!(server.postmaster_pid().unwrap(), old_pid);
    assert_eq!(server.psql("postgres", "SELECT x FROM kept").unwrap(), "1");
    assert_eq!(server.psql("postgres", "SHOW work_mem").unwrap(), "7MB");
}

#[test]
fn stop_immediate_kills_server_and_restart_recovers_it() {
    let mut server = Server::start(ServerOptions::default()).unwrap();
    server
        .psql(
            "postgres",
            "CREATE TABLE t (x int); INSERT INTO t VALUES (5)",
        )
        .unwrap();
    let pids = server.pids();
    server.stop_immediate();
    assert!(!server.is_running());
    assert!(server.pids().is_empty());
    assert!(server.psql("postgres", "SELECT 1").is_err());
    for pid in pids {
        assert!(!is_postgres(pid), "process {pid} survived");
    }
    server.restart().unwrap();
    assert_eq!(server.psql("postgres", "SELECT x FROM t").unwrap(), "5");
}

#[test]
fn pids_lists_postmaster_and_backends() {
    let server = Server::start(ServerOptions::default()).unwrap();
    let pids = server.pids();
    assert_eq!(pids[0], server.postmaster_pid().unwrap());
    assert!(
        pids.len() >= 3,
        "postmaster plus auxiliary processes: {pids:?}"
    );
    let backend: u32 = server
        .psql(
            "postgres",
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'",
        )
        .unwrap()
        .parse()
        .unwrap();
    assert!(pids.contains(&backend));
}

#[test]
fn settings_and_max_connections_are_applied() {
    let server = Server::start(
        ServerOptions::default()
            .max_connections(37)
            .setting("work_mem", "3MB")
            .setting("application_name", "with space"),
    )
    .unwrap();
    assert_eq!(
        server.psql("postgres", "SHOW max_connections").unwrap(),
        "37"
    );
    assert_eq!(server.psql("postgres", "SHOW work_mem").unwrap(), "3MB");
    assert_eq!(server.psql("postgres", "SHOW fsync").unwrap(), "off");
}

#[test]
fn durable_cluster_keeps_fsync_on() {
    let server = Server::start(ServerOptions::default().fast(false)).unwrap();
    assert_eq!(server.psql("postgres", "SHOW fsync").unwrap(), "on");
    assert!(!server.data_dir().starts_with("/dev/shm"));
}

#[test]
fn bad_setting_fails_with_the_server_log_in_the_error() {
    let err = Server::start(ServerOptions::default().setting("no_such_setting_xyz", "1"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("did not start"), "{err}");
    assert!(err.contains("no_such_setting_xyz"), "{err}");
}

#[test]
fn failed_start_shows_the_log_tail_and_names_no_removed_file() {
    let err = Server::start(ServerOptions::default().setting("shared_buffers", "1kB"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("did not start"), "{err}");
    assert!(
        err.contains("shared_buffers"),
        "the log's tail is missing: {err}"
    );
    assert!(err.contains("removed with the cluster directory"), "{err}");
    for word in err.split_whitespace().filter(|w| w.starts_with('/')) {
        let path = word.trim_end_matches([',', ';', ')', ':']);
        assert!(
            std::path::Path::new(path).exists() || !path.contains("pgrig-cluster-"),
            "the error names {path}, which no longer exists: {err}"
        );
    }
}

#[test]
fn setting_with_a_line_break_is_refused_before_anything_starts() {
    let err = Server::start(
        ServerOptions::default().setting("work_mem", "4MB\nshared_preload_libraries = 'x'"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("setting \"work_mem\""), "{err}");
    assert!(err.contains("line break"), "{err}");
}

#[test]
fn missing_binaries_error_names_the_package_to_install() {
    let opts = ServerOptions {
        bin_dir: Some("/nonexistent/pg/bin".into()),
        ..ServerOptions::default()
    };
    let err = Server::start(opts).unwrap_err().to_string();
    assert!(err.contains("postgresql"), "{err}");
    assert!(err.contains("/nonexistent/pg/bin"), "{err}");
}

#[test]
fn initdb_without_template_also_works() {
    let opts = ServerOptions {
        use_template: false,
        ..ServerOptions::default()
    };
    let server = Server::start(opts).unwrap();
    assert_eq!(server.psql("postgres", "SELECT 1").unwrap(), "1");
}

#[test]
fn env_and_url_reach_the_server() {
    let server = Server::start(ServerOptions::default().tcp(true)).unwrap();
    let env = server.env("postgres");
    let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSFILE"]
    );
    for target in [
        server.url("template1"),
        server.tcp_url("template1"),
        server.tcp_conninfo("template1"),
    ] {
        let out = std::process::Command::new(server.binaries().psql())
            .args([
                "-X",
                "-At",
                "-d",
                &target,
                "-c",
                "SELECT current_database()",
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "template1",
            "{target}"
        );
    }
}

#[test]
fn base_dir_the_server_account_cannot_enter_is_refused_clearly() {
    if !nix::unistd::Uid::effective().is_root() {
        skip::skip("only root switches to another account (run the tests as root)");
        return;
    }
    let hidden = std::env::temp_dir().join(format!("pgrig-lab-private-{}", std::process::id()));
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::set_permissions(&hidden, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let opts = ServerOptions {
        base_dir: Some(hidden.join("inner")),
        ..ServerOptions::default()
    };
    let err = Server::start(opts).unwrap_err().to_string();
    std::fs::remove_dir_all(&hidden).unwrap();
    assert!(err.contains("cannot enter"), "{err}");
}
