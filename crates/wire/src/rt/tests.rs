//! Executor, timer and join-handle behaviour (sockets are covered by the integration tests).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::{block_on, reactor, sleep, sleep_until, spawn_local};

#[test]
fn block_on_returns_the_main_output() {
    assert_eq!(block_on(async { 6 * 7 }), 42);
}

#[test]
fn spawned_tasks_run_and_join_in_any_order() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let out = block_on({
        let log = log.clone();
        async move {
            let mut handles = Vec::new();
            for i in 0..5u64 {
                let log = log.clone();
                handles.push(spawn_local(async move {
                    sleep(Duration::from_millis(5 * (5 - i))).await;
                    log.borrow_mut().push(i);
                    i * 10
                }));
            }
            let mut sum = 0;
            for h in handles {
                sum += h.await;
            }
            sum
        }
    });
    assert_eq!(out, 100);
    assert_eq!(
        *log.borrow(),
        vec![4, 3, 2, 1, 0],
        "shorter sleeps finish first"
    );
}

#[test]
fn sleeps_never_end_early() {
    let start = Instant::now();
    block_on(async {
        sleep(Duration::from_millis(20)).await;
        sleep_until(start + Duration::from_millis(35)).await;
    });
    assert!(start.elapsed() >= Duration::from_millis(35));
}

#[test]
fn sub_millisecond_sleeps_never_end_early_with_either_wait() {
    for fine in [true, false] {
        reactor::with(|r| r.set_fine_waits(fine)).unwrap();
        block_on(async move {
            for us in [1, 50, 200, 999, 1500] {
                let start = Instant::now();
                sleep(Duration::from_micros(us)).await;
                let took = start.elapsed();
                assert!(
                    took >= Duration::from_micros(us),
                    "{us} µs took {took:?} ({fine})"
                );
            }
        });
    }
}

#[test]
fn an_aborted_task_never_completes_its_work() {
    let hit = Rc::new(RefCell::new(false));
    block_on({
        let hit = hit.clone();
        async move {
            let h = spawn_local(async move {
                sleep(Duration::from_millis(30)).await;
                *hit.borrow_mut() = true;
            });
            sleep(Duration::from_millis(5)).await;
            h.abort();
            sleep(Duration::from_millis(50)).await;
        }
    });
    assert!(!*hit.borrow());
}

#[test]
fn executors_can_run_one_after_another_on_a_thread() {
    for i in 0..3 {
        assert_eq!(
            block_on(async move {
                sleep(Duration::from_millis(1)).await;
                i
            }),
            i
        );
    }
}

/// A task that never waits for a socket but yields lets a due timer's task run: the ticker of
/// a client-only script.
#[test]
fn a_yielding_busy_task_lets_timers_fire() {
    block_on(async {
        let ticked = Rc::new(RefCell::new(false));
        let t = ticked.clone();
        let _ticker = spawn_local(async move {
            sleep(Duration::from_millis(20)).await;
            *t.borrow_mut() = true;
        });
        let start = Instant::now();
        while !*ticked.borrow() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the timer never fired"
            );
            super::yield_now().await;
        }
    });
}
