//! Password authentication against a private cluster whose pg_hba.conf asks for cleartext
//! `password`, `md5` and `scram-sha-256`: right and wrong passwords, passwords from the
//! parameters, `PGPASSWORD` and a password file, and a missing password. Error texts are
//! compared with what the installed libpq (`psql`) prints.

mod common;

use std::process::Command;
use std::sync::OnceLock;

use common::{block_on, quote, TestEnv};
use pgrig_testkit::{Server, ServerOptions};
use pgrig_wire::{Connection, Error};

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let md5 = postgres_protocol::password::md5(b"md5pw", "md5user");
        let scram = postgres_protocol::password::scram_sha_256("scrampw".as_bytes());
        let mut hba = Vec::new();
        for (kind, addr) in [("local", ""), ("host", "127.0.0.1/32")] {
            for (user, method) in [
                ("postgres", "trust"),
                ("pwuser", "password"),
                ("md5user", "md5"),
                ("scramuser", "scram-sha-256"),
            ] {
                hba.push(format!("{kind} all {user} {addr} {method}"));
            }
        }
        pgrig_testkit::custom_cluster(ServerOptions {
            hba: Some(hba),
            tcp: true,
            bootstrap_sql: vec![
                "CREATE ROLE pwuser LOGIN PASSWORD 'pw pw'".into(),
                format!("CREATE ROLE md5user LOGIN PASSWORD '{md5}'"),
                format!("CREATE ROLE scramuser LOGIN PASSWORD '{scram}'"),
            ],
            ..Default::default()
        })
    })
}

fn tcp(user: &str) -> String {
    format!(
        "host=127.0.0.1 port={} user={user} dbname=postgres sslmode=disable",
        server().port()
    )
}

fn unix(user: &str) -> String {
    let s = server();
    format!(
        "host={} port={} user={user} dbname=postgres",
        s.socket_dir().display(),
        s.port()
    )
}

async fn try_connect(env: &TestEnv, conninfo: &str) -> Result<Connection, Error> {
    Connection::connect(&env.config(conninfo)).await
}

async fn current_user(env: &TestEnv, conninfo: &str) -> String {
    let mut c = try_connect(env, conninfo)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let r = c.simple_query("SELECT current_user").await.unwrap();
    c.close().await;
    r[0].rows[0].get(0).unwrap().to_owned()
}

/// What libpq says for the same connection string, without psql's `psql: error: ` prefix.
fn libpq_error(conninfo: &str, env: &[(&str, &str)]) -> Option<String> {
    let mut cmd = Command::new("psql");
    cmd.arg("-X")
        .arg("-w")
        .arg("-c")
        .arg("SELECT 1")
        .arg(conninfo);
    cmd.env_remove("PGPASSWORD")
        .env("PGPASSFILE", "/nonexistent");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
    Some(
        err.strip_prefix("psql: error: ")
            .unwrap_or(&err)
            .to_string(),
    )
}

#[test]
fn right_passwords_authenticate_with_every_method() {
    let env = TestEnv::new();
    block_on(async {
        for (user, pw) in [
            ("pwuser", "pw pw"),
            ("md5user", "md5pw"),
            ("scramuser", "scrampw"),
        ] {
            let tcp_ci = format!("{} password={}", tcp(user), quote(pw));
            assert_eq!(current_user(&env, &tcp_ci).await, user);
            let unix_ci = format!("{} password={}", unix(user), quote(pw));
            assert_eq!(current_user(&env, &unix_ci).await, user);
        }
    });
}

#[test]
fn wrong_password_fails_with_libpq_text_and_sqlstate() {
    let env = TestEnv::new();
    block_on(async {
        for user in ["pwuser", "md5user", "scramuser"] {
            let ci = format!("{} password=wrong", tcp(user));
            let err = try_connect(&env, &ci).await.unwrap_err();
            assert_eq!(err.code(), Some("28P01"), "{err}");
            let expected = format!(
                "connection to server at \"127.0.0.1\", port {} failed: FATAL:  password authentication failed for user \"{user}\"",
                server().port()
            );
            assert_eq!(err.to_string(), expected);
            if let Some(libpq) = libpq_error(&ci, &[]) {
                assert_eq!(err.to_string(), libpq);
            }
        }
    });
}

#[test]
fn password_from_pgpassword() {
    let env = TestEnv::new().with("PGPASSWORD", "scrampw");
    block_on(async {
        assert_eq!(current_user(&env, &tcp("scramuser")).await, "scramuser");
    });
}

#[test]
fn missing_password_fails_like_libpq() {
    let env = TestEnv::new();
    block_on(async {
        let err = try_connect(&env, &tcp("md5user")).await.unwrap_err();
        let expected = format!(
            "connection to server at \"127.0.0.1\", port {} failed: fe_sendauth: no password supplied",
            server().port()
        );
        assert_eq!(err.to_string(), expected);
        assert!(err.needs_password());
        if let Some(libpq) = libpq_error(&tcp("md5user"), &[]) {
            assert_eq!(err.to_string(), libpq);
        }
    });
}

#[test]
fn empty_password_counts_as_none_and_a_wrong_one_does_not_ask_again() {
    let env = TestEnv::new();
    block_on(async {
        let empty = format!("{} password=''", tcp("scramuser"));
        let err = try_connect(&env, &empty).await.unwrap_err();
        assert!(err.needs_password(), "{err}");
        assert!(err
            .to_string()
            .ends_with("fe_sendauth: no password supplied"));
        let wrong = format!("{} password=nope", tcp("scramuser"));
        let err = try_connect(&env, &wrong).await.unwrap_err();
        assert!(!err.needs_password(), "{err}");
    });
}

#[test]
fn password_from_pgpass_file_with_socket_as_localhost() {
    let env = TestEnv::new();
    let port = server().port();
    env.write_private(
        ".pgpass",
        format!("localhost:{port}:*:scramuser:scrampw\n127.0.0.1:{port}:postgres:md5user:md5pw\n")
            .as_bytes(),
    );
    block_on(async {
        assert_eq!(current_user(&env, &unix("scramuser")).await, "scramuser");
        assert_eq!(current_user(&env, &tcp("md5user")).await, "md5user");
    });
}

#[test]
fn wrong_password_from_file_names_the_file() {
    let env = TestEnv::new();
    let path = env.write_private("pw/passfile", b"*:*:*:pwuser:nope\n");
    let env = env.with("PGPASSFILE", &path.display().to_string());
    block_on(async {
        let err = try_connect(&env, &tcp("pwuser")).await.unwrap_err();
        assert!(
            err.to_string().ends_with(&format!(
                "password retrieved from file \"{}\"",
                path.display()
            )),
            "{err}"
        );
    });
}

#[test]
fn group_readable_pgpass_is_ignored() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let path = env.write_private(".pgpass", b"*:*:*:*:scrampw\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    block_on(async {
        let err = try_connect(&env, &tcp("scramuser")).await.unwrap_err();
        assert!(
            err.to_string()
                .ends_with("fe_sendauth: no password supplied"),
            "{err}"
        );
    });
}

#[test]
fn uri_with_percent_encoded_password() {
    let env = TestEnv::new();
    let uri = format!(
        "postgresql://pwuser:pw%20pw@127.0.0.1:{}/postgres?sslmode=disable",
        server().port()
    );
    block_on(async {
        assert_eq!(current_user(&env, &uri).await, "pwuser");
    });
}
