//! The reactor's alarm for far timers: a `timerfd` in the thread's epoll set, armed for the
//! earliest timer when that is further away than [`NEAR`], so the wait for events itself needs
//! no timeout.
//!
//! Why: a wait with a timeout makes the kernel start and cancel a high-resolution timer on every
//! call, and on a virtual machine that costs about 1 µs of system time per wait (measured with a
//! ping-pong over a unix socket: 5.4–5.9 µs against 4.6–4.7 µs per round trip without one). A
//! benchmark thread waits once per statement, and its once-a-second ticker was such a timeout on
//! every wait; libpq's `poll` (sysbench, pgbench) waits without one. The timerfd is set once per
//! far deadline (one `timerfd_settime` a second for the ticker) and fires as an event. Timers
//! closer than [`NEAR`] (`\sleep`, `-R` schedules) still go to the wait as its timeout, to the
//! nanosecond: they change at nearly every wait, where setting a timerfd would add a call.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Timers at least this far away are left to the alarm.
pub(crate) const NEAR: Duration = Duration::from_millis(10);

/// The alarm's tag in epoll events (socket slots are small indexes).
pub(crate) const TAG: u64 = u64::MAX;

#[derive(Default)]
pub(crate) struct Alarm {
    /// the timerfd, created on first use and registered in the epoll set
    fd: Option<OwnedFd>,
    /// when it is set to go off (`None`: not armed, or it went off)
    armed: Option<Instant>,
}

impl Alarm {
    /// Whether the alarm is armed for `at` or earlier and its event has not been taken yet:
    /// then it wakes the wait no later than `at` (an expiry not yet seen is an event still to
    /// come, since [`Self::went_off`] is what disarms it).
    #[inline]
    pub fn covers(&self, at: Instant) -> bool {
        self.armed.is_some_and(|a| a <= at)
    }

    /// Makes sure the alarm goes off no later than `at` (a far deadline; `now` is the time).
    /// Setting it again is skipped while it is armed for `at` or earlier and has not gone off
    /// yet.
    pub fn arm(&mut self, epfd: RawFd, at: Instant, now: Instant) -> io::Result<()> {
        if self.armed.is_some_and(|a| a <= at && a > now) {
            return Ok(());
        }
        let fd = self.fd(epfd)?;
        let d = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a timerfd we own; `spec` outlives the call; the old value is not wanted.
        if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }

    /// The alarm went off (its event arrived): drains its count so the next expiry is a new edge.
    pub fn went_off(&mut self) {
        self.armed = None;
        if let Some(fd) = &self.fd {
            let mut n = [0u8; 8];
            // SAFETY: reads 8 bytes into `n`; non-blocking (EAGAIN when re-armed meanwhile).
            unsafe { libc::read(fd.as_raw_fd(), n.as_mut_ptr().cast(), n.len()) };
        }
    }

    /// The timerfd, created and registered in `epfd` on first use.
    fn fd(&mut self, epfd: RawFd) -> io::Result<RawFd> {
        if let Some(fd) = &self.fd {
            return Ok(fd.as_raw_fd());
        }
        let flags = libc::TFD_NONBLOCK | libc::TFD_CLOEXEC;
        // SAFETY: plain system call; the descriptor is owned below.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: TAG,
        };
        // SAFETY: valid epoll and timer descriptors; `ev` outlives the call.
        if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, raw, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.fd = Some(fd);
        Ok(raw)
    }
}
