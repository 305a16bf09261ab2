//! Connections moved onto `pgrig_wire::rt` (the benchmark runtime): Unix sockets and TCP,
//! many sessions served by one thread, responses larger than the read buffer, sleeps between
//! queries, and a server that goes away.

mod common;

use std::time::Duration;

use common::TestEnv;
use pgrig_wire::{rt, Connection};

async fn value(c: &mut Connection, sql: &str) -> Option<String> {
    let r = c.simple_query(sql).await.unwrap();
    r[0].rows[0].get(0).map(str::to_owned)
}

#[test]
fn unix_and_tcp_connections_run_queries_on_rt() {
    let db = pgrig_testkit::fresh_db("rt_basic");
    let env = TestEnv::new();
    for ci in [db.conninfo(), db.tcp_conninfo()] {
        let mut c = Connection::connect_rt(&env.config(&ci)).expect("connect");
        let got = rt::block_on(async move {
            let v = value(&mut c, "SELECT 6 * 7").await;
            // Larger than the 16 kB read buffer: the buffer grows, reads continue.
            let big = value(&mut c, "SELECT repeat('x', 1000000)").await;
            c.close().await;
            (v, big.map(|s| s.len()))
        });
        assert_eq!(got, (Some("42".into()), Some(1_000_000)), "{ci}");
    }
}

#[test]
fn one_thread_serves_many_sessions_concurrently() {
    let db = pgrig_testkit::fresh_db("rt_many");
    let env = TestEnv::new();
    let conns: Vec<Connection> = (0..8)
        .map(|_| Connection::connect_rt(&env.config(&db.conninfo())).unwrap())
        .collect();
    let spans = rt::block_on(async move {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                rt::spawn_local(async move {
                    // The session's number, and when its server-side sleep began and ended.
                    let sql = format!(
                        "SELECT {i} || ' ' || extract(epoch FROM statement_timestamp()) \
                         || ' ' || extract(epoch FROM clock_timestamp()) FROM pg_sleep(0.5)"
                    );
                    let v = value(&mut c, &sql).await.unwrap();
                    rt::sleep(Duration::from_millis(10)).await;
                    c.close().await;
                    let f: Vec<f64> = v.split(' ').map(|x| x.parse().unwrap()).collect();
                    (f[0] as u32, f[1], f[2])
                })
            })
            .collect();
        let mut spans = Vec::new();
        for h in handles {
            spans.push(h.await);
        }
        spans
    });
    assert_eq!(
        spans.iter().map(|s| s.0).sum::<u32>(),
        (0..8u32).sum::<u32>()
    );
    // Concurrency, not turns: every sleep began before any of them ended.
    let last_start = spans.iter().map(|s| s.1).fold(f64::MIN, f64::max);
    let first_end = spans.iter().map(|s| s.2).fold(f64::MAX, f64::min);
    assert!(last_start < first_end, "{spans:?}");
}

#[test]
fn a_terminated_session_reports_an_error_instead_of_hanging() {
    let db = pgrig_testkit::fresh_db("rt_gone");
    let env = TestEnv::new();
    let mut victim = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    let mut killer = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    let pid = victim.backend_pid();
    let err = rt::block_on(async move {
        value(
            &mut killer,
            &format!("SELECT pg_terminate_backend({pid})::text"),
        )
        .await;
        victim.simple_query("SELECT 1").await.err()
    });
    assert!(err.is_some(), "a query on a terminated session must fail");
}

#[test]
fn a_query_larger_than_the_socket_buffer_is_sent_whole() {
    let db = pgrig_testkit::fresh_db("rt_big_send");
    let env = TestEnv::new();
    let mut c = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    // 8 MB of query text: the kernel buffer fills, the write waits for EPOLLOUT.
    let sql = format!("SELECT length('{}')", "y".repeat(8 << 20));
    let got = rt::block_on(async move {
        let v = value(&mut c, &sql).await;
        c.close().await;
        v
    });
    assert_eq!(got.as_deref(), Some("8388608"));
}
