//! `pgrig bench` over TLS (the session moved onto pgrig's runtime keeps its rustls state):
//! `sslmode=require` and `verify-full` against a server with a test-made certificate, every
//! transaction's backend reporting SSL, and a clear error when the server has no TLS.

use std::process::Command;

use pgrig_testkit::{run, ServerOptions, TestPki};

#[test]
fn every_transaction_runs_over_tls_with_require_and_verify_full() {
    let p = TestPki::new("pgrig bench test CA");
    let server = pgrig_testkit::custom_cluster(
        ServerOptions::default()
            .tls(p.server_files())
            .tcp(true)
            .hba([
                "local all all trust",
                "hostssl all all 127.0.0.1/32 trust",
                "hostssl all all ::1/128 trust",
            ]),
    );
    server
        .psql("postgres", "create table seen (ssl boolean)")
        .expect("create table");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("ssl.sql");
    std::fs::write(
        &script,
        "insert into seen select ssl from pg_stat_ssl where pid = pg_backend_pid();\n",
    )
    .unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &p.ca_pem).unwrap();
    for (mode, extra) in [
        ("require", String::new()),
        ("verify-full", format!(" sslrootcert={}", ca.display())),
    ] {
        let conninfo = format!(
            "host=localhost port={} user={} dbname=postgres sslmode={mode}{extra}",
            server.port(),
            server.user()
        );
        let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
        c.env("HOME", dir.path())
            .args([
                "bench", "-n", "-c", "2", "-j", "2", "-t", "25", "-M", "prepared", "-f",
            ])
            .arg(&script)
            .arg(&conninfo);
        let out = run(c);
        assert_eq!(out.code, Some(0), "{mode}: {}", out.stderr);
    }
    let counts = server
        .psql(
            "postgres",
            "select count(*) filter (where ssl), count(*) from seen",
        )
        .expect("count");
    assert_eq!(counts.trim(), "100|100");
}

#[test]
fn require_against_a_server_without_tls_fails_clearly() {
    let server = pgrig_testkit::custom_cluster(ServerOptions::default().tcp(true));
    let conninfo = format!(
        "host=127.0.0.1 port={} user={} dbname=postgres sslmode=require",
        server.port(),
        server.user()
    );
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["bench", "-n", "-S", "-t", "1", &conninfo]);
    let out = run(c);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("server does not support SSL, but SSL was required"),
        "{}",
        out.stderr
    );
}
