//! TLS with a test-generated CA and server certificate (for `localhost` only), against a
//! private cluster whose pg_hba.conf requires SSL except for one role: every sslmode, host name
//! verification, a wrong CA, a missing root certificate, servers without SSL, and SCRAM over TLS.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::{block_on, TestEnv};
use pgrig_testkit::{unrelated_ca_pem, Server, ServerOptions, TestPki};

struct Pki {
    ca_pem: String,
    other_ca_pem: String,
    server: Server,
}

fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let made = TestPki::new("pgrig test CA");
        let scram = postgres_protocol::password::scram_sha_256(b"tlspw");
        let server = pgrig_testkit::custom_cluster(ServerOptions {
            tls: Some(made.server_files()),
            tcp: true,
            hba: Some(vec![
                "local all all trust".into(),
                "hostssl all scramtls 127.0.0.1/32 scram-sha-256".into(),
                "hostssl all postgres 127.0.0.1/32 trust".into(),
                "hostssl all postgres ::1/128 trust".into(),
                "hostnossl all plainok 127.0.0.1/32 trust".into(),
                "hostnossl all plainok ::1/128 trust".into(),
            ]),
            bootstrap_sql: vec![
                "CREATE ROLE plainok LOGIN".into(),
                format!("CREATE ROLE scramtls LOGIN PASSWORD '{scram}'"),
            ],
            ..Default::default()
        });
        Pki {
            ca_pem: made.ca_pem,
            other_ca_pem: unrelated_ca_pem("some other CA"),
            server,
        }
    })
}

/// A test environment with the right CA at `ca.pem` and a wrong one at `other.pem`.
fn env() -> (TestEnv, PathBuf, PathBuf) {
    let p = pki();
    let env = TestEnv::new();
    let ca = env.write_private("ca.pem", p.ca_pem.as_bytes());
    let other = env.write_private("other.pem", p.other_ca_pem.as_bytes());
    (env, ca, other)
}

fn ci(host: &str, user: &str, extra: &str) -> String {
    format!(
        "host={host} port={} user={user} dbname=postgres {extra}",
        pki().server.port()
    )
}

/// Connects, and reports whether the server sees the session as SSL.
fn ssl_in_use(env: &TestEnv, conninfo: &str) -> Result<bool, String> {
    block_on(async {
        let mut c = pgrig_wire::Connection::connect(&env.config(conninfo))
            .await
            .map_err(|e| e.to_string())?;
        let r = c
            .simple_query("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .await
            .map_err(|e| e.to_string())?;
        let server_side = r[0].rows[0].get(0) == Some("true");
        assert_eq!(server_side, c.is_tls());
        c.close().await;
        Ok(server_side)
    })
}

#[test]
fn disable_connects_in_plain_text() {
    let (env, _, _) = env();
    assert_eq!(
        ssl_in_use(&env, &ci("127.0.0.1", "plainok", "sslmode=disable")),
        Ok(false)
    );
    let err = ssl_in_use(&env, &ci("127.0.0.1", "postgres", "sslmode=disable")).unwrap_err();
    assert!(err.contains("no pg_hba.conf entry"), "{err}");
}

#[test]
fn allow_retries_with_ssl_when_plain_text_is_rejected() {
    let (env, _, _) = env();
    assert_eq!(
        ssl_in_use(&env, &ci("127.0.0.1", "plainok", "sslmode=allow")),
        Ok(false)
    );
    assert_eq!(
        ssl_in_use(&env, &ci("127.0.0.1", "postgres", "sslmode=allow")),
        Ok(true)
    );
}

#[test]
fn prefer_uses_ssl_and_falls_back_when_ssl_session_is_rejected() {
    let (env, _, _) = env();
    assert_eq!(ssl_in_use(&env, &ci("127.0.0.1", "postgres", "")), Ok(true));
    // hostssl has no entry for plainok, so libpq's prefer retries without SSL.
    assert_eq!(
        ssl_in_use(&env, &ci("127.0.0.1", "plainok", "sslmode=prefer")),
        Ok(false)
    );
}

#[test]
fn require_encrypts_without_verifying_when_no_root_certificate_exists() {
    let (env, _, _) = env();
    assert_eq!(
        ssl_in_use(&env, &ci("127.0.0.1", "postgres", "sslmode=require")),
        Ok(true)
    );
}

#[test]
fn require_verifies_the_chain_when_the_default_root_certificate_exists() {
    let (env, _, _) = env();
    env.write_private(".postgresql/root.crt", pki().other_ca_pem.as_bytes());
    let err = ssl_in_use(&env, &ci("127.0.0.1", "postgres", "sslmode=require")).unwrap_err();
    assert!(
        err.ends_with("failed: SSL error: certificate verify failed"),
        "{err}"
    );
}

#[test]
fn verify_ca_checks_the_chain_but_not_the_name() {
    let (env, ca, other) = env();
    let ok = ci(
        "127.0.0.1",
        "postgres",
        &format!("sslmode=verify-ca sslrootcert={}", ca.display()),
    );
    assert_eq!(ssl_in_use(&env, &ok), Ok(true));
    let bad = ci(
        "127.0.0.1",
        "postgres",
        &format!("sslmode=verify-ca sslrootcert={}", other.display()),
    );
    let err = ssl_in_use(&env, &bad).unwrap_err();
    assert!(
        err.ends_with("SSL error: certificate verify failed"),
        "{err}"
    );
}

#[test]
fn verify_full_checks_the_host_name() {
    let (env, ca, _) = env();
    let root = format!("sslmode=verify-full sslrootcert={}", ca.display());
    assert_eq!(
        ssl_in_use(&env, &ci("localhost", "postgres", &root)),
        Ok(true)
    );
    let err = ssl_in_use(&env, &ci("127.0.0.1", "postgres", &root)).unwrap_err();
    assert!(
        err.ends_with(
            "failed: server certificate for \"localhost\" does not match host name \"127.0.0.1\""
        ),
        "{err}"
    );
}

#[test]
fn verify_modes_need_a_root_certificate() {
    let (env, _, _) = env();
    let err = ssl_in_use(&env, &ci("localhost", "postgres", "sslmode=verify-full")).unwrap_err();
    assert!(err.contains("root certificate file"), "{err}");
    assert!(
        err.contains(".postgresql/root.crt\" does not exist"),
        "{err}"
    );
}

#[test]
fn default_root_certificate_location_is_used_for_verify_full() {
    let (env, _, _) = env();
    env.write_private(".postgresql/root.crt", pki().ca_pem.as_bytes());
    assert_eq!(
        ssl_in_use(&env, &ci("localhost", "postgres", "sslmode=verify-full")),
        Ok(true)
    );
}

#[test]
fn scram_over_tls_works_when_the_server_offers_channel_binding() {
    let (env, _, _) = env();
    let c = ci("127.0.0.1", "scramtls", "sslmode=require password=tlspw");
    assert_eq!(ssl_in_use(&env, &c), Ok(true));
}

#[test]
fn server_without_ssl_is_used_in_plain_text_by_prefer_and_refused_by_require() {
    let db = pgrig_testkit::fresh_db("wire_nossl");
    let env = TestEnv::new();
    let base = db.tcp_conninfo();
    assert_eq!(
        ssl_in_use(&env, &format!("{base} sslmode=prefer")),
        Ok(false)
    );
    let err = ssl_in_use(&env, &format!("{base} sslmode=require")).unwrap_err();
    assert!(
        err.ends_with("failed: server does not support SSL, but SSL was required"),
        "{err}"
    );
}

#[test]
fn tls_sessions_keep_working_after_moving_onto_pgrig_rt() {
    let (env, ca, _) = env();
    let ci = ci(
        "localhost",
        "postgres",
        &format!("sslmode=verify-full sslrootcert={}", ca.display()),
    );
    let cfg = env.config(&ci);
    let mut c = pgrig_wire::Connection::connect_rt(&cfg).expect("connect over TLS");
    assert!(c.is_tls());
    let big = pgrig_wire::rt::block_on(async move {
        // A response much larger than one TLS record and the read buffer.
        let r = c
            .simple_query("SELECT string_agg(md5(g::text), '') FROM generate_series(1, 20000) g")
            .await
            .unwrap();
        let ssl = c
            .simple_query("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .await
            .unwrap();
        assert_eq!(ssl[0].rows[0].get(0), Some("true"));
        c.close().await;
        r[0].rows[0].get(0).map(str::len)
    });
    assert_eq!(big, Some(20000 * 32));
}
