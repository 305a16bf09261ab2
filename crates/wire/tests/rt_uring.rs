//! The io_uring variant of `pgrig_wire::rt` (`PGRIG_IO=uring`): many sessions on one thread
//! whose sends and receives share one `io_uring_enter`, responses larger than the ring's
//! receive buffer, a query larger than its send backlog, a TLS-less session dropped with a
//! receive in flight (its backend must go away: the receive is cancelled before the descriptor
//! closes), and sleeps between queries (the ring's wait honours the timers).

mod common;

use std::future::Future;
use std::sync::Once;
use std::time::{Duration, Instant};

use common::TestEnv;
use pgrig_wire::{rt, Connection};

/// Every test selects io_uring before any connection is made (the choice is read once per
/// process; all tests of this binary make the same one).
fn uring() {
    static SET: Once = Once::new();
    SET.call_once(|| std::env::set_var("PGRIG_IO", "uring"));
}

async fn value(c: &mut Connection, sql: &str) -> Option<String> {
    let r = c.simple_query(sql).await.unwrap();
    r[0].rows[0].get(0).map(str::to_owned)
}

#[test]
fn uring_sessions_on_one_thread_get_their_own_answers() {
    uring();
    let db = pgrig_testkit::fresh_db("uring_many");
    let env = TestEnv::new();
    let conns: Vec<Connection> = (0..8)
        .map(|_| Connection::connect_rt(&env.config(&db.conninfo())).unwrap())
        .collect();
    let sums = rt::block_on(async move {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                rt::spawn_local(async move {
                    let mut sum = 0u64;
                    for k in 0..200u64 {
                        // each answer names its session and round, and has a length of its own
                        let sql =
                            format!("SELECT {i} * 1000 + {k} || ':' || repeat('z', {k} * 37)");
                        let v = value(&mut c, &sql).await.unwrap();
                        let (n, pad) = v.split_once(':').unwrap();
                        assert_eq!(
                            n.parse::<u64>().unwrap(),
                            i as u64 * 1000 + k,
                            "session {i}"
                        );
                        assert_eq!(pad.len() as u64, k * 37);
                        sum += k;
                    }
                    c.close().await;
                    sum
                })
            })
            .collect();
        let mut sums = Vec::new();
        for h in handles {
            sums.push(h.await);
        }
        sums
    });
    assert_eq!(sums, vec![(0..200u64).sum::<u64>(); 8]);
    assert!(
        rt::io_uring_in_use(),
        "PGRIG_IO=uring must put the sessions on a ring"
    );
}

#[test]
fn uring_sends_and_receives_more_than_its_buffers_hold() {
    uring();
    let db = pgrig_testkit::fresh_db("uring_big");
    let env = TestEnv::new();
    let mut c = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    // 8 MB of query text (more than the send backlog and the socket buffer), then a 1 MB answer
    // (more than the ring's 16 kB receive buffer).
    let sql = format!("SELECT length('{}')", "y".repeat(8 << 20));
    let got = rt::block_on(async move {
        let sent = value(&mut c, &sql).await;
        let big = value(&mut c, "SELECT repeat('x', 1000000)").await;
        c.close().await;
        (sent, big.map(|s| s.len()))
    });
    assert_eq!(got, (Some("8388608".into()), Some(1_000_000)));
    assert!(rt::io_uring_in_use());
}

#[test]
fn uring_session_dropped_while_waiting_closes_its_backend() {
    uring();
    let db = pgrig_testkit::fresh_db("uring_drop");
    let env = TestEnv::new();
    let mut victim = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    let mut watcher = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    let pid = victim.backend_pid();
    let gone = rt::block_on(async move {
        // The backend notices a closed socket during its query within 50 ms.
        victim
            .simple_query("SET client_connection_check_interval = '50ms'")
            .await
            .unwrap();
        // The victim waits for a 2 s query; after 100 ms its future, connection included, is
        // dropped with the receive in flight.
        let query = async move {
            let _ = victim.simple_query("SELECT pg_sleep(2)").await;
        };
        let mut query = Box::pin(query);
        let mut timer = std::pin::pin!(rt::sleep(Duration::from_millis(100)));
        std::future::poll_fn(|cx| {
            if query.as_mut().poll(cx).is_ready() || timer.as_mut().poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
            std::task::Poll::Pending
        })
        .await;
        drop(query);
        // Its backend must see the socket close (ending the sleep early) and exit.
        let t0 = Instant::now();
        loop {
            let alive = value(
                &mut watcher,
                &format!("SELECT count(*)::text FROM pg_stat_activity WHERE pid = {pid}"),
            )
            .await;
            if alive.as_deref() == Some("0") {
                return Some(t0.elapsed());
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return None;
            }
            rt::sleep(Duration::from_millis(50)).await;
        }
    });
    let gone = gone.expect("the dropped session's backend was still there after 10 s");
    assert!(
        gone < Duration::from_millis(1900),
        "backend went away only after its query: {gone:?}"
    );
}

#[test]
fn uring_waits_end_at_their_timers() {
    uring();
    let db = pgrig_testkit::fresh_db("uring_sleep");
    let env = TestEnv::new();
    let mut c = Connection::connect_rt(&env.config(&db.conninfo())).unwrap();
    let (v, took) = rt::block_on(async move {
        let t0 = Instant::now();
        let mut v = None;
        for _ in 0..10 {
            v = value(&mut c, "SELECT 'ok'").await;
            rt::sleep(Duration::from_millis(20)).await;
        }
        c.close().await;
        (v, t0.elapsed())
    });
    assert_eq!(v.as_deref(), Some("ok"));
    assert!(
        took >= Duration::from_millis(200),
        "sleeps ended early: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "sleeps ended late: {took:?}");
}
