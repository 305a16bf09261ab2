//! pgrig's own single-threaded runtime for the benchmark hot path: an executor whose wakers
//! are task ids ([`executor`]), an edge-triggered epoll reactor with cached readiness and the
//! thread's timers ([`reactor`]), sleeps and yields. One per worker thread; a thread's clients are
//! tasks on it, and one `epoll_wait` serves every socket that became ready together.
//!
//! Connections run on it after [`crate::Connection::into_rt`] (or
//! [`crate::Connection::connect_rt`]); elsewhere (setup, init, cancel requests) the tokio
//! adapter is used.

mod alarm;
mod executor;
pub(crate) mod reactor;
pub(crate) mod uring;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub use executor::{block_on, spawn_local, turns, JoinHandle};

/// Whether this thread's connections run on io_uring (`PGRIG_IO=uring`, once one was used):
/// a thread's sends and receives then go to the kernel together in one `io_uring_enter`.
pub fn io_uring_in_use() -> bool {
    uring::active()
}

/// Completes at `at` (never early; as late as the kernel's timer slack, see [`reactor`]).
pub fn sleep_until(at: Instant) -> Sleep {
    Sleep { at, armed: false }
}

/// Completes after `d`.
pub fn sleep(d: Duration) -> Sleep {
    sleep_until(Instant::now() + d)
}

/// Future of [`sleep_until`].
pub struct Sleep {
    at: Instant,
    armed: bool,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        if !self.armed {
            let at = self.at;
            let w = cx.waker().clone();
            if reactor::with(|r| r.add_timer(at, w)).is_err() {
                // No reactor (out of descriptors): fall back to polling at the next turn.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.armed = true;
        }
        Poll::Pending
    }
}

/// Lets the thread's due timers and other tasks run, then continues: a task that never waits
/// for a socket (a client-only script) would otherwise keep the thread and starve them.
pub fn yield_now() -> YieldNow {
    YieldNow { armed: false }
}

/// Future of [`yield_now`]: pending once, on a timer that is already due, so the executor
/// turns the reactor (which fires due timers) before polling it again.
pub struct YieldNow {
    armed: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.armed {
            return Poll::Ready(());
        }
        self.armed = true;
        let w = cx.waker().clone();
        if reactor::with(|r| r.add_timer(Instant::now(), w)).is_err() {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
