//! The thread's readiness source: one edge-triggered epoll instance, a slot per registered
//! socket holding its cached readiness and the wakers of the task waiting on it, and the
//! thread's timers. [`Reactor::turn`] waits for events (or the next timer) and wakes whoever they concern.
//!
//! Timers further away than [`alarm::NEAR`] (the ticker's next second) are left to a timerfd
//! in the epoll set ([`alarm`]), so the wait itself has no timeout: a timeout costs a kernel
//! timer per wait. Near timers are as fine as pgbench's: the wait for the next one is given to the kernel to the
//! nanosecond with `epoll_pwait2` (Linux 5.11+), so a `\sleep 200 us` or a `-R` schedule slot
//! ends when due (plus the kernel's timer slack, 50 µs by default, as for pgbench's own wait).
//! Where `epoll_pwait2` is missing, `epoll_wait` waits the whole milliseconds and the last
//! fraction is spun through (never late by a rounded-up millisecond).
//!
//! Readiness is cached the way tokio caches it: a socket is assumed ready until a system call
//! reports `EAGAIN` (or a read comes back short), and only then does a task wait for an event.
//! With edge triggering, every arrival after that produces an event, so no wake-up is lost.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::RawFd;
use std::task::Waker;
use std::time::{Duration, Instant};

use super::alarm::{self, Alarm};

/// Direction of interest.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    Read,
    Write,
}

#[derive(Default)]
struct Slot {
    in_use: bool,
    readable: bool,
    writable: bool,
    /// peer closed / error: stays ready in both directions (no further edge will come)
    closed: bool,
    fd: RawFd,
    /// EPOLLOUT is only asked for once a write would block: otherwise every drained send
    /// buffer would wake the thread for nothing
    out_armed: bool,
    read_waker: Option<Waker>,
    write_waker: Option<Waker>,
}

struct Timer {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Timer {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timer {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

pub(crate) struct Reactor {
    epfd: RawFd,
    slots: Vec<Slot>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<Timer>>,
    timer_seq: u64,
    events: Vec<libc::epoll_event>,
    /// `epoll_pwait2` works here (cleared when the kernel refuses it).
    pwait2: bool,
    /// far timers' wake-up
    alarm: Alarm,
}

/// Interest every socket is registered with (edge-triggered); EPOLLOUT is added on demand.
const READ_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

thread_local! {
    static REACTOR: RefCell<Option<Reactor>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's reactor, creating it on first use.
///
/// Small enough to be inlined where it is called (the creation is out of line): every socket
/// read and wait of the hot path goes through here.
/// (`LocalKey::try_with` rather than `with`: std marks only the former `#[inline]`, and
/// `with` called across codegen units stays an out-of-line call through the key's accessor.)
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&mut Reactor) -> R) -> io::Result<R> {
    REACTOR
        .try_with(|r| {
            let mut r = r.borrow_mut();
            match r.as_mut() {
                Some(r) => Ok(f(r)),
                None => Ok(f(create(&mut r)?)),
            }
        })
        .unwrap_or_else(|_| Err(gone()))
}

/// The error of a reactor asked for while the thread's locals are torn down.
#[cold]
fn gone() -> io::Error {
    io::Error::other("the thread's reactor is gone")
}

/// The thread's first use of its reactor.
#[cold]
#[inline(never)]
fn create(slot: &mut Option<Reactor>) -> io::Result<&mut Reactor> {
    Ok(slot.insert(Reactor::new()?))
}

impl Reactor {
    fn new() -> io::Result<Reactor> {
        // SAFETY: plain system call; the descriptor is owned by the reactor and closed on drop.
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Reactor {
            epfd,
            slots: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            timer_seq: 0,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
            pwait2: true,
            alarm: Alarm::default(),
        })
    }

    /// Registers `fd` for both directions (edge-triggered); returns its slot.
    pub fn register(&mut self, fd: RawFd) -> io::Result<usize> {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Slot::default());
            self.slots.len() - 1
        });
        self.slots[slot] = Slot {
            in_use: true,
            readable: true,
            writable: true,
            closed: false,
            fd,
            out_armed: false,
            read_waker: None,
            write_waker: None,
        };
        let mut ev = libc::epoll_event {
            events: READ_EVENTS,
            u64: slot as u64,
        };
        // SAFETY: valid epoll and socket descriptors, `ev` outlives the call.
        if unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            self.slots[slot].in_use = false;
            self.free.push(slot);
            return Err(io::Error::last_os_error());
        }
        Ok(slot)
    }

    /// Forgets `fd` (before it is closed).
    pub fn deregister(&mut self, fd: RawFd, slot: usize) {
        // SAFETY: plain system call; failure (already closed) is irrelevant here.
        unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Slot::default();
            self.free.push(slot);
        }
    }

    /// The epoll descriptor (polled through the ring by [`super::uring`]).
    pub(crate) fn epfd(&self) -> RawFd {
        self.epfd
    }

    #[inline]
    pub fn is_ready(&self, slot: usize, dir: Dir) -> bool {
        let s = &self.slots[slot];
        s.closed
            || match dir {
                Dir::Read => s.readable,
                Dir::Write => s.writable,
            }
    }

    /// Marks the slot not ready (after `EAGAIN` or a short read); the first time a write would
    /// block, asks epoll for write readiness too.
    #[inline]
    pub fn clear(&mut self, slot: usize, dir: Dir) {
        match dir {
            Dir::Read => self.slots[slot].readable = false,
            Dir::Write => self.clear_write(slot),
        }
    }

    fn clear_write(&mut self, slot: usize) {
        let epfd = self.epfd;
        let s = &mut self.slots[slot];
        s.writable = false;
        if !s.out_armed {
            let mut ev = libc::epoll_event {
                events: READ_EVENTS | libc::EPOLLOUT as u32,
                u64: slot as u64,
            };
            // SAFETY: valid descriptors; `ev` outlives the call. Modifying re-checks
            // readiness, so a buffer that drained meanwhile still reports EPOLLOUT.
            if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_MOD, s.fd, &mut ev) } == 0 {
                s.out_armed = true;
            } else {
                // Cannot wait for it: treat as ready and let the write retry.
                s.writable = true;
            }
        }
    }

    /// Parks `waker` until the slot becomes ready in `dir`.
    #[inline]
    pub fn wait(&mut self, slot: usize, dir: Dir, waker: &Waker) {
        let s = &mut self.slots[slot];
        let w = match dir {
            Dir::Read => &mut s.read_waker,
            Dir::Write => &mut s.write_waker,
        };
        match w {
            Some(old) if old.will_wake(waker) => {}
            _ => *w = Some(waker.clone()),
        }
    }

    pub fn add_timer(&mut self, at: Instant, waker: Waker) {
        self.timer_seq += 1;
        self.timers.push(Reverse(Timer {
            at,
            seq: self.timer_seq,
            waker,
        }));
    }

    /// Wakes the timers that are due; returns how many.
    pub fn fire_timers(&mut self, now: Instant) -> usize {
        let mut n = 0;
        while let Some(Reverse(t)) = self.timers.peek() {
            if t.at > now {
                break;
            }
            let Reverse(t) = self.timers.pop().expect("peeked");
            t.waker.wake();
            n += 1;
        }
        n
    }

    pub fn clear_timers(&mut self) {
        self.timers.clear();
    }

    pub fn has_timers(&self) -> bool {
        !self.timers.is_empty()
    }

    /// How long [`Self::turn`] may wait: not at all when `block` is false or a timer is due,
    /// until the next timer, or (`None`) until an event.
    pub(crate) fn timeout(&self, block: bool) -> Option<Duration> {
        if !block {
            return Some(Duration::ZERO);
        }
        let Reverse(t) = self.timers.peek()?;
        Some(t.at.saturating_duration_since(Instant::now()))
    }

    /// The timeout [`Self::turn`] waits with: [`Self::timeout`], except that a timer at least
    /// [`alarm::NEAR`] away is left to the alarm (armed for it) and the wait has none.
    ///
    /// While the alarm is armed for the next timer (or earlier) and has not gone off, the wait
    /// needs no timeout whatever the time is, so the clock is not read: the usual case of a
    /// benchmark thread, whose only timer is its ticker's next second.
    pub(crate) fn wait_timeout(&mut self, block: bool) -> Option<Duration> {
        if !block {
            return Some(Duration::ZERO);
        }
        let Reverse(next) = self.timers.peek()?;
        if self.alarm.covers(next.at) {
            return None;
        }
        let now = Instant::now();
        let t = next.at.saturating_duration_since(now);
        if t < alarm::NEAR {
            return Some(t);
        }
        match self.alarm.arm(self.epfd, next.at, now) {
            Ok(()) => None,
            // no timerfd (out of descriptors): the wait's own timeout, as before
            Err(_) => Some(t),
        }
    }

    /// One wait for events of at most `timeout` (`None`: no limit); returns how many arrived.
    fn wait_events(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let (events, len) = (self.events.as_mut_ptr(), self.events.len() as libc::c_int);
        let n = if self.pwait2 {
            let ts = timeout.map(|d| libc::timespec {
                tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            });
            let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            // Direct system call (no cancellation-point wrapper, no glibc version needed);
            // a null signal mask makes it epoll_wait with a nanosecond timeout.
            // SAFETY: the events buffer is valid for `len` entries and `ts` outlives the call.
            unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.epfd,
                    events,
                    len,
                    ts_ptr,
                    std::ptr::null::<libc::sigset_t>(),
                    8 as libc::size_t,
                )
            }
        } else {
            // Whole milliseconds, rounded down: the executor comes back for the rest.
            let ms = timeout.map_or(-1, |d| d.as_millis().min(i32::MAX as u128) as libc::c_int);
            // SAFETY: as above.
            unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait,
                    self.epfd,
                    events,
                    len,
                    ms,
                    std::ptr::null::<libc::sigset_t>(),
                    8 as libc::size_t,
                )
            }
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => Ok(0),
            // An older kernel (or a sandbox that filters it): millisecond waits from now on.
            Some(libc::ENOSYS | libc::EPERM) if self.pwait2 => {
                self.pwait2 = false;
                Ok(0)
            }
            _ => Err(e),
        }
    }

    /// Chooses the wait: `epoll_pwait2` (`fine`) or the millisecond fallback (tests).
    #[cfg(test)]
    pub fn set_fine_waits(&mut self, fine: bool) {
        self.pwait2 = fine;
    }

    /// Waits for socket events, at most until the next timer (to the nanosecond) or not at
    /// all when `block` is false; wakes the waiting tasks and the timers that are due.
    ///
    /// Timers can only have come due when the wait had a timeout (a near timer, or none to
    /// wait for) or the alarm went off: otherwise the clock is not read. A far timer that came
    /// due while the socket events were being returned is fired at the next turn, whose wait
    /// returns at once with the alarm's event.
    pub fn turn(&mut self, block: bool) -> io::Result<()> {
        let timeout = self.wait_timeout(block);
        let n = self.wait_events(timeout)?;
        let mut alarm_went_off = false;
        for i in 0..n {
            let ev = self.events[i];
            if ev.u64 == alarm::TAG {
                self.alarm.went_off();
                alarm_went_off = true;
                continue;
            }
            let (bits, slot) = (ev.events as i32, ev.u64 as usize);
            let Some(s) = self.slots.get_mut(slot).filter(|s| s.in_use) else {
                continue;
            };
            if bits & (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) != 0 {
                // End of stream or error: a short read must not clear this, or the task that
                // waits for the rest would wait forever.
                s.closed = true;
            }
            if bits & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) != 0 {
                s.readable = true;
                if let Some(w) = s.read_waker.take() {
                    w.wake();
                }
            }
            if bits & (libc::EPOLLOUT | libc::EPOLLHUP | libc::EPOLLERR) != 0 {
                s.writable = true;
                if let Some(w) = s.write_waker.take() {
                    w.wake();
                }
            }
        }
        if self.has_timers() && (timeout.is_some() || alarm_went_off) {
            self.fire_timers(Instant::now());
        }
        Ok(())
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        // SAFETY: the reactor owns its epoll descriptor.
        unsafe { libc::close(self.epfd) };
    }
}

/// Not-ready bookkeeping shared by sockets: the cached readiness of `slot` in `dir`.
#[inline]
pub(crate) fn ready(slot: usize, dir: Dir) -> bool {
    with(|r| r.is_ready(slot, dir)).unwrap_or(true)
}

/// Whether a timer of this thread is due (its task must get to run).
#[inline]
pub(crate) fn timer_due() -> bool {
    with(|r| {
        r.timers
            .peek()
            .is_some_and(|Reverse(t)| t.at <= Instant::now())
    })
    .unwrap_or(false)
}

/// Sockets registered on this thread's reactor.
#[inline]
pub(crate) fn sockets() -> usize {
    with(|r| r.slots.len() - r.free.len()).unwrap_or(0)
}

#[inline]
pub(crate) fn clear(slot: usize, dir: Dir) {
    let _ = with(|r| r.clear(slot, dir));
}

/// Whether `slot` may be ready in `dir` (as [`ready`]); if not, parks `waker` until it is: one
/// visit to the reactor where a task's poll would make two.
#[inline]
pub(crate) fn ready_or_wait(slot: usize, dir: Dir, waker: &Waker) -> bool {
    with(|r| {
        let ready = r.is_ready(slot, dir);
        if !ready {
            r.wait(slot, dir, waker);
        }
        ready
    })
    .unwrap_or(true)
}
