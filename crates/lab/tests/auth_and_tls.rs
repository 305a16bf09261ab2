//! Servers configured for password authentication and TLS (what the wire driver's tests need).

#[path = "../../testkit/src/skip.rs"]
mod skip;

use std::process::Command;

use pgrig_lab::{Server, ServerOptions, TlsFiles};

/// Runs `SELECT ...` over TCP with the given password; Ok(output) or Err(stderr).
fn query_tcp(
    server: &Server,
    user: &str,
    password: &str,
    extra: &str,
    sql: &str,
) -> Result<String, String> {
    let conninfo = format!(
        "host=127.0.0.1 port={} user={user} dbname=postgres password={password} {extra}",
        server.port()
    );
    let out = Command::new(server.binaries().psql())
        .args(["-X", "-At", "-d", &conninfo, "-c", sql])
        .env_remove("PGPASSWORD")
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

#[test]
fn md5_server_accepts_right_password_and_rejects_wrong_one() {
    let server = Server::start(
        ServerOptions::default()
            .setting("password_encryption", "md5")
            .superuser_password("s3cret")
            .tcp(true)
            .hba(["local all all trust", "host all all 127.0.0.1/32 md5"]),
    )
    .unwrap();
    let stored = server
        .psql(
            "postgres",
            "SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = 'postgres'",
        )
        .unwrap();
    assert_eq!(stored, "md5");
    assert_eq!(
        query_tcp(&server, "postgres", "s3cret", "", "SELECT 1").unwrap(),
        "1"
    );
    let err = query_tcp(&server, "postgres", "wrong", "", "SELECT 1").unwrap_err();
    assert!(err.contains("password authentication failed"), "{err}");
}

#[test]
fn scram_server_with_bootstrap_roles_authenticates_each_role() {
    let server = Server::start(
        ServerOptions::default()
            .setting("password_encryption", "scram-sha-256")
            .bootstrap_sql("CREATE ROLE scram_user LOGIN PASSWORD 'pw1'")
            .bootstrap_sql("CREATE ROLE clear_user LOGIN PASSWORD 'pw2'")
            .tcp(true)
            .hba([
                "local all all trust",
                "host all clear_user 127.0.0.1/32 password",
                "host all all 127.0.0.1/32 scram-sha-256",
            ]),
    )
    .unwrap();
    assert_eq!(
        query_tcp(&server, "scram_user", "pw1", "", "SELECT current_user").unwrap(),
        "scram_user"
    );
    assert_eq!(
        query_tcp(&server, "clear_user", "pw2", "", "SELECT current_user").unwrap(),
        "clear_user"
    );
    assert!(query_tcp(&server, "scram_user", "nope", "", "SELECT 1").is_err());
}

#[test]
fn bad_bootstrap_sql_fails_start_with_the_error() {
    let err = Server::start(ServerOptions::default().bootstrap_sql("CREATE ROLLE oops"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("single-user"), "{err}");
    assert!(err.contains("syntax error"), "{err}");
}

#[test]
fn superuser_password_appears_in_connection_strings() {
    let server = Server::start(ServerOptions::default().superuser_password("pw")).unwrap();
    assert!(server.conninfo("postgres").ends_with("password=pw"));
    assert!(server
        .env("postgres")
        .contains(&("PGPASSWORD".into(), "pw".into())));
}

#[test]
fn tls_server_serves_encrypted_connections() {
    let dir = std::env::temp_dir().join(format!("pgrig-lab-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        skip::skip("openssl is not available (Debian: openssl; ./test installs it)");
        return;
    }
    let tls = TlsFiles::from_paths(&cert, &key, None).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let server = Server::start(
        ServerOptions::default()
            .tls(tls)
            .tcp(true)
            .hba(["local all all trust", "hostssl all all 127.0.0.1/32 trust"]),
    )
    .unwrap();
    let ssl = query_tcp(
        &server,
        "postgres",
        "x",
        "sslmode=require",
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    )
    .unwrap();
    assert_eq!(ssl, "t");
    let err = query_tcp(&server, "postgres", "x", "sslmode=disable", "SELECT 1").unwrap_err();
    assert!(
        err.contains("no encryption") || err.contains("pg_hba.conf"),
        "{err}"
    );
}

#[test]
fn extra_files_land_in_the_data_directory() {
    let server = Server::start(ServerOptions::default().extra_file("notes.txt", "hello")).unwrap();
    assert_eq!(
        std::fs::read_to_string(server.data_dir().join("notes.txt")).unwrap(),
        "hello"
    );
    let bad = Server::start(ServerOptions::default().extra_file("../escape", "x"));
    assert!(bad.is_err());
}
