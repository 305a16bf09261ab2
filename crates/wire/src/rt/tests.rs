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

/// The ticker's far timer leaves the wait without a timeout (a kernel timer per wait), to the
/// alarm; a near one is the wait's timeout; with none there is no timeout either.
#[test]
fn far_timers_leave_the_wait_untimed_and_still_fire() {
    block_on(async {
        let (none, far) = reactor::with(|r| {
            let none = r.wait_timeout(true);
            let w = futures_noop_waker();
            r.add_timer(Instant::now() + Duration::from_secs(5), w);
            (none, r.wait_timeout(true))
        })
        .unwrap();
        assert_eq!(none, None, "no timer: no timeout");
        assert_eq!(far, None, "a timer 5 s away is the alarm's");
        let near = reactor::with(|r| {
            r.add_timer(
                Instant::now() + Duration::from_millis(2),
                futures_noop_waker(),
            );
            r.wait_timeout(true)
        })
        .unwrap();
        assert!(
            near.is_some_and(|t| t <= Duration::from_millis(2)),
            "a timer 2 ms away is the wait's timeout: {near:?}"
        );
        assert_eq!(
            reactor::with(|r| r.wait_timeout(false)).unwrap(),
            Some(Duration::ZERO)
        );
    });
    // A sleep far enough for the alarm ends when due, never early and not much late, twice
    // on one alarm (it is re-armed after going off).
    block_on(async {
        for ms in [40u64, 25] {
            let start = Instant::now();
            sleep(Duration::from_millis(ms)).await;
            let took = start.elapsed();
            assert!(took >= Duration::from_millis(ms), "{ms} ms took {took:?}");
            assert!(
                took < Duration::from_millis(ms + 500),
                "{ms} ms took {took:?}"
            );
        }
    });
}

fn futures_noop_waker() -> std::task::Waker {
    std::task::Waker::noop().clone()
}

/// Executors take their generations in blocks per thread (no shared write per `block_on`), and
/// still no two executors, on any threads, share one; 0 ("no executor") is never given.
#[test]
fn executor_generations_are_unique_across_threads() {
    let take = || {
        (0..3000)
            .map(|_| super::executor::next_generation())
            .collect::<Vec<u32>>()
    };
    let other = std::thread::spawn(take);
    let mut all = take();
    all.extend(other.join().unwrap());
    assert!(!all.contains(&0));
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "a generation was given twice");
}
