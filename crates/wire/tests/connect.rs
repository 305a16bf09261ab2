//! Connecting with trust authentication over Unix sockets and TCP, session parameters,
//! libpq-style connection errors, timeouts and query cancellation.

mod common;

use std::time::{Duration, Instant};

use common::{block_on, connect, TestEnv};
use pgrig_wire::{Config, ConnArgs, Connection, Error, TransactionStatus};

#[test]
fn trust_over_unix_socket_reports_session_parameters() {
    let db = pgrig_testkit::fresh_db("wire_unix");
    block_on(async {
        let mut c = connect(&db.conninfo()).await;
        assert!(matches!(c.addr(), pgrig_wire::Addr::Unix(_)));
        assert!(!c.is_tls());
        assert!(c.server_version_num() >= 100000, "{}", c.server_version());
        assert!(c
            .server_version()
            .starts_with(&(c.server_version_num() / 10000).to_string()));
        assert_eq!(c.parameter("integer_datetimes"), Some("on"));
        assert_eq!(c.transaction_status(), TransactionStatus::Idle);
        assert!(c.backend_pid() > 0);
        let r = c.simple_query("SELECT current_database()").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some(db.name.as_str()));
        c.close().await;
    });
}

#[test]
fn trust_over_tcp() {
    let db = pgrig_testkit::fresh_db("wire_tcp");
    block_on(async {
        let mut c = connect(&db.tcp_conninfo()).await;
        assert!(matches!(c.addr(), pgrig_wire::Addr::Tcp(_)));
        let r = c
            .simple_query("SELECT inet_client_addr()::text")
            .await
            .unwrap();
        assert_eq!(r[0].rows[0].get(0), Some("127.0.0.1/32"));
        c.close().await;
    });
}

#[test]
fn connects_from_command_line_style_arguments_and_uri() {
    let db = pgrig_testkit::fresh_db("wire_args");
    let server = db.server();
    block_on(async {
        let env = TestEnv::new();
        let args = ConnArgs {
            host: Some(server.socket_dir().display().to_string()),
            port: Some(server.port().to_string()),
            user: Some(server.user().to_string()),
            dbname: Some(db.name.clone()),
        };
        let cfg = Config::from_args_in(&args, "pgbench", &env.env).unwrap();
        let c = Connection::connect(&cfg).await.unwrap();
        assert_eq!(c.parameter("application_name"), Some("pgbench"));
        c.close().await;

        let cfg = env.config(&db.url());
        let mut c = Connection::connect(&cfg).await.unwrap();
        let r = c.simple_query("SELECT current_user").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some(server.user()));
        c.close().await;
    });
}

#[test]
fn application_name_and_options_reach_the_server() {
    let db = pgrig_testkit::fresh_db("wire_opts");
    block_on(async {
        let ci = format!(
            "{} application_name=mine options='-c work_mem=7MB'",
            db.conninfo()
        );
        let mut c = connect(&ci).await;
        assert_eq!(c.parameter("application_name"), Some("mine"));
        let r = c.simple_query("SHOW work_mem").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some("7MB"));
        // ParameterStatus updates are tracked after startup too.
        c.execute_simple("SET application_name = 'changed'")
            .await
            .unwrap();
        assert_eq!(c.parameter("application_name"), Some("changed"));
        c.close().await;
    });
}

#[test]
fn missing_socket_error_reads_like_libpq() {
    let dir = tempfile::tempdir().unwrap();
    let env = TestEnv::new();
    let cfg = env.config(&format!("host={} port=5432 user=x", dir.path().display()));
    let err = block_on(Connection::connect(&cfg)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "connection to server on socket \"{}/.s.PGSQL.5432\" failed: No such file or directory\n\
             \tIs the server running locally and accepting connections on that socket?",
            dir.path().display()
        )
    );
}

#[test]
fn refused_tcp_error_reads_like_libpq() {
    let env = TestEnv::new();
    let cfg = env.config("host=127.0.0.1 port=1 user=x sslmode=disable");
    let err = block_on(Connection::connect(&cfg)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\
         \tIs the server running on that host and accepting TCP/IP connections?"
    );
}

#[test]
fn every_failed_host_is_reported_and_the_next_one_is_tried() {
    let db = pgrig_testkit::fresh_db("wire_multi");
    let server = db.server();
    let env = TestEnv::new();
    let ci = format!(
        "host=127.0.0.1,{} port=1,{} user={} dbname={}",
        server.socket_dir().display(),
        server.port(),
        server.user(),
        db.name
    );
    block_on(async {
        let c = Connection::connect(&env.config(&ci)).await.unwrap();
        assert!(matches!(c.addr(), pgrig_wire::Addr::Unix(_)));
        c.close().await;
    });
}

#[test]
fn unknown_database_is_a_connect_error_with_sqlstate() {
    let server = pgrig_testkit::cluster();
    let env = TestEnv::new();
    let ci = format!("{} dbname=no_such_db_xyz", server.conninfo("postgres"));
    let err = block_on(Connection::connect(&env.config(&ci))).unwrap_err();
    assert_eq!(err.code(), Some("3D000"));
    assert!(
        err.to_string()
            .ends_with("failed: FATAL:  database \"no_such_db_xyz\" does not exist"),
        "{err}"
    );
}

#[test]
fn connect_timeout_expires_on_a_silent_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let env = TestEnv::new();
    let cfg = env.config(&format!(
        "host=127.0.0.1 port={port} user=x connect_timeout=2"
    ));
    let start = Instant::now();
    let err = block_on(Connection::connect(&cfg)).unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(1900));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        err.to_string(),
        format!("connection to server at \"127.0.0.1\", port {port} failed: timeout expired")
    );
    drop(listener);
}

#[test]
fn cancel_interrupts_a_running_query() {
    let db = pgrig_testkit::fresh_db("wire_cancel");
    block_on(async {
        let mut c = connect(&db.tcp_conninfo()).await;
        let token = c.cancel_token();
        assert_eq!(token.process_id(), c.backend_pid());
        let start = Instant::now();
        c.query(b"SELECT pg_sleep(10)");
        c.send().await.unwrap();
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            token.cancel().await.unwrap();
        };
        let (_, err) = tokio::join!(canceller, c.simple_query_results_error());
        assert_eq!(err.as_deref(), Some("57014"));
        assert!(start.elapsed() < Duration::from_secs(5));
        // The session is still usable.
        let r = c.simple_query("SELECT 1").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some("1"));
        c.close().await;
    });
}

trait ErrorCode {
    async fn simple_query_results_error(&mut self) -> Option<String>;
}

impl ErrorCode for Connection {
    /// Reads results up to ReadyForQuery and returns the SQLSTATE of the first error.
    async fn simple_query_results_error(&mut self) -> Option<String> {
        self.skip_until_ready().await.unwrap().map(|e| e.code)
    }
}

#[test]
fn server_shutdown_is_reported_as_a_lost_connection() {
    let db = pgrig_testkit::fresh_db("wire_lost");
    block_on(async {
        let mut c = connect(&db.conninfo()).await;
        let mut other = connect(&db.conninfo()).await;
        let pid = c.backend_pid();
        other
            .execute_simple(&format!("SELECT pg_terminate_backend({pid})"))
            .await
            .unwrap();
        let err = c.simple_query("SELECT 1").await.unwrap_err();
        // The server may say why before closing; either way the connection is gone.
        assert!(err.is_fatal() || matches!(err, Error::Closed), "{err:?}");
        other.close().await;
    });
}
