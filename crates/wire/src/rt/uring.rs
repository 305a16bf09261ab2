//! The io_uring variant of the thread's I/O (`PGRIG_IO=uring`): instead of a readiness wait
//! plus a `send` and a `recv` per round trip, a plain socket's sends and receives are queued as
//! submission entries and every connection of the thread goes to the kernel in ONE
//! `io_uring_enter`, which also waits for the completions (and for the next timer, to the
//! nanosecond, through its extended argument).
//!
//! Buffers belong to the ring's slot, never to a caller's future: a send copies the bytes into
//! the slot (one send in flight per socket keeps them in order; bytes written meanwhile wait
//! in a second buffer), a receive lands in the slot's buffer and is copied out by
//! [`Io::read`]. A dropped connection cancels what it has in flight, and its slot (buffers
//! included) is reused only after the last completion came back, so the kernel never writes
//! into freed memory. TLS streams stay on the epoll [`super::reactor`]; when a thread has any,
//! the epoll descriptor itself is polled through the ring.
//!
//! The ring is set up single-issuer with deferred task work where the kernel supports it
//! (completions are processed only inside our own `io_uring_enter`).

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::io;
use std::os::fd::RawFd;
use std::task::{Poll, Waker};
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};

use super::reactor;

/// Receive buffer per socket (a response of sysbench's range queries is about 12 kB).
const RECV_BUF: usize = 16 * 1024;
/// Bytes queued behind an in-flight send beyond which a writer waits.
const SEND_BACKLOG: usize = 256 * 1024;
const RING_ENTRIES: u32 = 256;
/// Longest wait for more than one completion (see [`Uring::turn`]).
const SAFETY_WAIT: Duration = Duration::from_millis(10);
/// `IORING_ENTER_GETEVENTS` of the kernel's ABI (the crate keeps its constants private).
const ENTER_GETEVENTS: u32 = 1;

/// Operation tags in the low bits of `user_data`; the slot is above them.
const OP_SEND: u64 = 0;
const OP_RECV: u64 = 1;
const OP_CANCEL: u64 = 2;
const OP_EPOLL: u64 = 3;
const EPOLL_USER_DATA: u64 = OP_EPOLL; // slot 0, never a socket's tag (tag 3)

/// Whether `PGRIG_IO=uring` asks for this variant (read once per process).
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PGRIG_IO").is_some_and(|v| v == "uring"))
}

#[derive(Default)]
struct Slot {
    in_use: bool,
    /// dropped by its stream, waiting for its last completions before reuse
    closing: bool,
    fd: RawFd,
    /// completions still to come (a send, a receive, a cancel)
    inflight: u32,
    /// bytes of the send in flight (`flight[sent..]` not yet acknowledged)
    flight: Vec<u8>,
    sent: usize,
    sending: bool,
    /// bytes written while a send is in flight
    next: Vec<u8>,
    send_err: Option<io::Error>,
    write_waker: Option<Waker>,
    recv: Box<[u8]>,
    got: (usize, usize),
    receiving: bool,
    eof: bool,
    recv_err: Option<io::Error>,
    read_waker: Option<Waker>,
}

pub(crate) struct Uring {
    ring: IoUring,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// the epoll descriptor's poll is armed in the ring
    epoll_armed: bool,
    /// operations whose completion is still to come (all slots, and the epoll poll)
    inflight: u32,
    /// sends queued since the last wait: they complete during the submission itself, so a
    /// wait for "something" must wait for one completion more than these
    batch_sends: u32,
    /// a writer waits for a send's completion (backlog, flush): the next wait is for any
    writer_waiting: bool,
    /// the kernel completed a send short (no `MSG_WAITALL` for sends): waits are for any
    /// completion from then on
    short_sends: bool,
    epoll_fired: bool,
}

thread_local! {
    static URING: RefCell<Option<Uring>> = const { RefCell::new(None) };
    /// `URING` holds a ring: a plain flag (no destructor), since the executor asks at every
    /// turn
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

fn with<R>(f: impl FnOnce(&mut Uring) -> R) -> io::Result<R> {
    // `try_with`: a stream dropped while the thread's locals are torn down finds no ring.
    URING
        .try_with(|u| {
            let mut u = u.borrow_mut();
            if u.is_none() {
                *u = Some(Uring::new()?);
                ACTIVE.with(|a| a.set(true));
            }
            Ok(f(u.as_mut().expect("created above")))
        })
        .unwrap_or_else(|_| Err(io::Error::other("the thread's io_uring is gone")))
}

/// Whether this thread has a ring (then [`turn`] must be used instead of the epoll reactor's).
#[inline]
pub(crate) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

fn tag(slot: usize, op: u64) -> u64 {
    ((slot as u64 + 1) << 2) | op
}

impl Uring {
    fn new() -> io::Result<Uring> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(RING_ENTRIES)
            .or_else(|_| IoUring::new(RING_ENTRIES))?;
        Ok(Uring {
            ring,
            slots: Vec::new(),
            free: Vec::new(),
            epoll_armed: false,
            epoll_fired: false,
            inflight: 0,
            batch_sends: 0,
            writer_waiting: false,
            short_sends: false,
        })
    }

    fn register(&mut self, fd: RawFd) -> usize {
        let i = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Slot::default());
            self.slots.len() - 1
        });
        let s = &mut self.slots[i];
        let recv = std::mem::take(&mut s.recv);
        *s = Slot {
            in_use: true,
            fd,
            recv: if recv.len() == RECV_BUF {
                recv
            } else {
                vec![0; RECV_BUF].into_boxed_slice()
            },
            ..Slot::default()
        };
        i
    }

    /// Queues `e`, making room by submitting what is queued when the ring is full.
    fn push(&mut self, e: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: (for the callers' entries) every buffer an entry points into is owned by
            // a slot that is not reused or freed before the entry's completion (see
            // `deregister`).
            let pushed = unsafe { self.ring.submission().push(&e) };
            if pushed.is_ok() {
                break;
            }
            self.ring.submit()?;
        }
        Ok(())
    }

    fn queue_send(&mut self, i: usize) -> io::Result<()> {
        let s = &mut self.slots[i];
        let rest = &s.flight[s.sent..];
        let e = opcode::Send::new(types::Fd(s.fd), rest.as_ptr(), rest.len() as u32)
            // WAITALL: the kernel completes the send only when all of it went (a stream
            // socket's short send is retried inside io_uring), so one completion per send.
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .user_data(tag(i, OP_SEND));
        s.sending = true;
        s.inflight += 1;
        self.inflight += 1;
        self.batch_sends += 1;
        self.push(e)
    }

    fn queue_recv(&mut self, i: usize) -> io::Result<()> {
        let s = &mut self.slots[i];
        let e = opcode::Recv::new(types::Fd(s.fd), s.recv.as_mut_ptr(), s.recv.len() as u32)
            .build()
            .user_data(tag(i, OP_RECV));
        s.receiving = true;
        s.inflight += 1;
        self.inflight += 1;
        self.push(e)
    }

    /// Copies `buf` into the slot's send buffers and queues a send if none is in flight.
    /// `false`: too much is queued already, wait.
    fn write(&mut self, i: usize, buf: &[u8]) -> io::Result<bool> {
        let s = &mut self.slots[i];
        if let Some(e) = s.send_err.take() {
            return Err(e);
        }
        if s.sending {
            if s.next.len() >= SEND_BACKLOG {
                return Ok(false);
            }
            s.next.extend_from_slice(buf);
            return Ok(true);
        }
        s.flight.clear();
        s.flight.extend_from_slice(buf);
        s.sent = 0;
        self.queue_send(i)?;
        Ok(true)
    }

    fn on_send(&mut self, i: usize, res: i32) -> io::Result<()> {
        let s = &mut self.slots[i];
        s.sending = false;
        if s.closing {
            return Ok(());
        }
        if res < 0 {
            s.send_err = Some(io::Error::from_raw_os_error(-res));
            s.next.clear();
        } else {
            s.sent += res as usize;
            if s.sent < s.flight.len() {
                self.short_sends = true;
                return self.queue_send(i);
            }
            if !s.next.is_empty() {
                std::mem::swap(&mut s.flight, &mut s.next);
                s.next.clear();
                s.sent = 0;
                return self.queue_send(i);
            }
        }
        if let Some(w) = s.write_waker.take() {
            w.wake();
        }
        Ok(())
    }

    fn on_recv(&mut self, i: usize, res: i32) {
        let s = &mut self.slots[i];
        s.receiving = false;
        match res {
            0 => s.eof = true,
            n if n > 0 => s.got = (0, n as usize),
            e if -e == libc::ECANCELED && s.closing => {}
            e => s.recv_err = Some(io::Error::from_raw_os_error(-e)),
        }
        if let Some(w) = s.read_waker.take() {
            w.wake();
        }
    }

    fn complete(&mut self, user_data: u64, res: i32) -> io::Result<()> {
        self.inflight = self.inflight.saturating_sub(1);
        if user_data == EPOLL_USER_DATA {
            self.epoll_armed = false;
            self.epoll_fired = true;
            return Ok(());
        }
        let (i, op) = ((user_data >> 2) as usize - 1, user_data & 3);
        let Some(s) = self.slots.get_mut(i) else {
            return Ok(());
        };
        s.inflight = s.inflight.saturating_sub(1);
        match op {
            OP_SEND => self.on_send(i, res)?,
            OP_RECV => self.on_recv(i, res),
            _ => {}
        }
        let s = &mut self.slots[i];
        if s.closing && s.inflight == 0 {
            s.in_use = false;
            s.closing = false;
            self.free.push(i);
        }
        Ok(())
    }

    /// Forgets slot `i` (before its descriptor is closed): cancels what is in flight and keeps
    /// the slot, buffers included, until the kernel has returned every completion.
    fn deregister(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.read_waker = None;
        s.write_waker = None;
        if s.inflight == 0 {
            s.in_use = false;
            self.free.push(i);
            return;
        }
        s.closing = true;
        let targets = [(s.receiving, OP_RECV), (s.sending, OP_SEND)];
        for (busy, op) in targets {
            if busy {
                let e = opcode::AsyncCancel::new(tag(i, op))
                    .build()
                    .user_data(tag(i, OP_CANCEL));
                self.slots[i].inflight += 1;
                self.inflight += 1;
                let _ = self.push(e);
            }
        }
        // The cancels must reach the kernel before the descriptor is closed.
        let _ = self.ring.submit();
    }

    /// Arms a poll of the epoll reactor's descriptor when it has sockets (TLS streams).
    fn arm_epoll(&mut self) -> io::Result<()> {
        if self.epoll_armed || reactor::sockets() == 0 {
            return Ok(());
        }
        let Some(epfd) = reactor::with(|r| r.epfd()).ok() else {
            return Ok(());
        };
        let e = opcode::PollAdd::new(types::Fd(epfd), libc::POLLIN as u32)
            .build()
            .user_data(EPOLL_USER_DATA);
        self.epoll_armed = true;
        self.inflight += 1;
        self.push(e)
    }

    /// Submits everything queued and waits for at least one completion beyond those of the
    /// sends just queued (a send to a socket with room completes inside the submission: waiting
    /// for "one" would return at once, for nothing), at most `timeout` (`None`: no limit;
    /// zero: no wait); handles the completions that arrived.
    fn turn(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.arm_epoll()?;
        let mut want = (self.batch_sends as usize + 1).min(self.inflight.max(1) as usize);
        if self.writer_waiting || self.short_sends {
            want = 1;
        }
        self.batch_sends = 0;
        self.writer_waiting = false;
        // Waiting for more than one completion relies on sends completing whole: a safety net
        // of 10 ms, should one not (then `short_sends` switches this off).
        let timeout = match timeout {
            _ if want == 1 => timeout,
            None => Some(SAFETY_WAIT),
            Some(d) => Some(d.min(SAFETY_WAIT)),
        };
        let r = match timeout {
            Some(d) if d.is_zero() => {
                let n = self.ring.submission().len() as u32;
                // GETEVENTS with nothing to wait for: runs deferred task work, then returns.
                // SAFETY: plain enter without an argument.
                unsafe {
                    self.ring
                        .submitter()
                        .enter::<libc::sigset_t>(n, 0, ENTER_GETEVENTS, None)
                }
            }
            Some(d) => {
                let ts = types::Timespec::from(d);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submit_and_wait(want),
        };
        if let Err(e) = r {
            match e.raw_os_error() {
                Some(libc::ETIME | libc::EINTR | libc::EBUSY) => {}
                _ => return Err(e),
            }
        }
        loop {
            let next = self.ring.completion().next();
            let Some(c) = next else { break };
            self.complete(c.user_data(), c.result())?;
        }
        Ok(())
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // Buffers the kernel may still write into (the thread ends with operations in flight)
        // are leaked rather than freed under it.
        for s in &mut self.slots {
            if s.inflight > 0 {
                std::mem::forget(std::mem::take(&mut s.recv));
                std::mem::forget(std::mem::take(&mut s.flight));
            }
        }
    }
}

/// One turn of the thread's I/O with io_uring: submit, wait (not at all when `block` is false,
/// else at most until the epoll reactor's next timer), wake, fire due timers.
pub(crate) fn turn(block: bool) -> io::Result<()> {
    let timeout = reactor::with(|r| r.timeout(block))?;
    let fired = with(|u| {
        u.turn(timeout)?;
        Ok::<_, io::Error>(std::mem::take(&mut u.epoll_fired))
    })??;
    // Sockets of the epoll reactor (TLS) that became ready, and the timers that are due.
    reactor::with(|r| {
        if fired {
            r.turn(false)
        } else {
            r.fire_timers(std::time::Instant::now());
            Ok(())
        }
    })?
}

/// A plain socket's handle on the ring.
#[derive(Default)]
pub(crate) struct Io {
    slot: Option<usize>,
}

impl Io {
    fn slot(&mut self, fd: RawFd) -> io::Result<usize> {
        if let Some(s) = self.slot {
            return Ok(s);
        }
        let s = with(|u| u.register(fd))?;
        self.slot = Some(s);
        Ok(s)
    }

    /// Reads what has arrived (at least one byte unless at end of stream).
    pub(crate) async fn read(&mut self, fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
        let i = self.slot(fd)?;
        poll_fn(|cx| {
            with(|u| {
                let s = &mut u.slots[i];
                if s.got.0 < s.got.1 {
                    let n = buf.len().min(s.got.1 - s.got.0);
                    buf[..n].copy_from_slice(&s.recv[s.got.0..s.got.0 + n]);
                    s.got.0 += n;
                    return Poll::Ready(Ok(n));
                }
                if let Some(e) = s.recv_err.take() {
                    return Poll::Ready(Err(e));
                }
                if s.eof {
                    return Poll::Ready(Ok(0));
                }
                s.read_waker = Some(cx.waker().clone());
                if !s.receiving {
                    if let Err(e) = u.queue_recv(i) {
                        return Poll::Ready(Err(e));
                    }
                }
                Poll::Pending
            })?
        })
        .await
    }

    /// Queues all of `buf` for sending (it is copied); waits only when much is queued already.
    pub(crate) async fn write_all(&mut self, fd: RawFd, buf: &[u8]) -> io::Result<()> {
        let i = self.slot(fd)?;
        poll_fn(|cx| {
            with(|u| match u.write(i, buf) {
                Ok(true) => Poll::Ready(Ok(())),
                Ok(false) => {
                    u.slots[i].write_waker = Some(cx.waker().clone());
                    u.writer_waiting = true;
                    Poll::Pending
                }
                Err(e) => Poll::Ready(Err(e)),
            })?
        })
        .await
    }

    /// Waits until everything written has been sent (before a shutdown).
    pub(crate) async fn flush(&mut self) -> io::Result<()> {
        let Some(i) = self.slot else { return Ok(()) };
        poll_fn(|cx| {
            with(|u| {
                let s = &mut u.slots[i];
                if let Some(e) = s.send_err.take() {
                    return Poll::Ready(Err(e));
                }
                if !s.sending {
                    return Poll::Ready(Ok(()));
                }
                s.write_waker = Some(cx.waker().clone());
                u.writer_waiting = true;
                Poll::Pending
            })?
        })
        .await
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let _ = with(|u| u.deregister(i));
        }
    }
}
