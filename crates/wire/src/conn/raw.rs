//! A connected socket driven by [`crate::rt`]: non-blocking `recv`/`send` on the raw
//! descriptor with readiness cached in the thread's reactor, and TLS (when the connection
//! negotiated it) with the same rustls session, moved over from the tokio adapter.
//!
//! Reads clear the cached readiness after a short read (the kernel buffer is empty then), so
//! a response costs one `recv`, and a wait for the next one goes straight to `epoll_wait`.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::task::Poll;

use crate::rt::reactor::{self, Dir};
use crate::rt::uring;

pub(crate) struct RawStream {
    /// `PGRIG_IO=uring` on a plain socket: its I/O goes through the thread's ring. Declared
    /// before `fd`: dropped first, it cancels what is in flight before the descriptor closes.
    ring: Option<uring::Io>,
    fd: OwnedFd,
    /// reactor slot, registered on first wait (on the thread that runs the connection)
    slot: Option<usize>,
    tls: Option<Box<rustls::ClientConnection>>,
    /// Whether to try `recvfrom` before waiting for readiness (a thread's only connection): a
    /// hit saves the `epoll_wait`,
    /// a miss costs one `recvfrom`, so it is done while recent attempts hit at least as often
    /// as they missed (`score >= 0`; hits +1, misses -1, within ±8); otherwise every
    /// [`PROBE_EVERY`]th wait probes again.
    score: i8,
    waits: u32,
}

/// `PGRIG_RT_SPECULATE=0` turns speculative reads off (for measurements: under valgrind the
/// client is so slow that every speculative read hits).
fn speculation_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var_os("PGRIG_RT_SPECULATE").is_none_or(|v| v != "0"))
}

/// How often a socket whose speculative reads mostly missed tries one again.
const PROBE_EVERY: u32 = 8;

/// `Read`/`Write` on the descriptor without blocking, for rustls's `read_tls`/`write_tls`.
struct Fd(RawFd);

impl Read for Fd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        sys_recv(self.0, buf)
    }
}

impl Write for Fd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        sys_send(self.0, buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn sys_recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // Direct system call: glibc's wrapper adds pthread cancellation bookkeeping per call.
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes; null address arguments.
        let n = unsafe {
            libc::syscall(
                libc::SYS_recvfrom,
                fd,
                buf.as_mut_ptr(),
                buf.len(),
                libc::MSG_DONTWAIT,
                std::ptr::null_mut::<libc::sockaddr>(),
                std::ptr::null_mut::<libc::socklen_t>(),
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn sys_send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes; null address arguments.
        let n = unsafe {
            libc::syscall(
                libc::SYS_sendto,
                fd,
                buf.as_ptr(),
                buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                std::ptr::null::<libc::sockaddr>(),
                0 as libc::socklen_t,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl RawStream {
    pub(crate) fn new(fd: OwnedFd, tls: Option<rustls::ClientConnection>) -> RawStream {
        RawStream {
            ring: (tls.is_none() && uring::enabled()).then(uring::Io::default),
            fd,
            slot: None,
            tls: tls.map(Box::new),
            score: 0,
            waits: 0,
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    #[inline]
    fn slot(&mut self) -> io::Result<usize> {
        match self.slot {
            Some(s) => Ok(s),
            None => self.register(),
        }
    }

    /// Registers the socket with this thread's reactor (its first wait).
    #[cold]
    fn register(&mut self) -> io::Result<usize> {
        let fd = self.fd.as_raw_fd();
        let s = reactor::with(|r| r.register(fd))??;
        self.slot = Some(s);
        Ok(s)
    }

    /// Waits until the socket may be ready in `dir` (returns at once if readiness is cached).
    async fn ready(&mut self, dir: Dir) -> io::Result<()> {
        let slot = self.slot()?;
        poll_fn(|cx| {
            if reactor::ready_or_wait(slot, dir, cx.waker()) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        Ok(())
    }

    #[inline]
    fn not_ready(&mut self, dir: Dir) {
        if let Some(slot) = self.slot {
            reactor::clear(slot, dir);
        }
    }

    /// Reads whatever is available (at least one byte unless at end of stream).
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.tls.is_some() {
            return self.read_tls(buf).await;
        }
        let fd = self.fd.as_raw_fd();
        if let Some(ring) = self.ring.as_mut() {
            return ring.read(fd, buf).await;
        }
        if let Some(slot) = self.slot {
            // Only a thread's sole connection speculates, and not when a timer is due: a task
            // that finds its response without waiting never yields, which is fair only when
            // nobody else waits (progress ticks, the other clients).
            if speculation_allowed()
                && !reactor::ready(slot, Dir::Read)
                && reactor::sockets() == 1
                && !reactor::timer_due()
            {
                self.waits = self.waits.wrapping_add(1);
                if self.score >= 0 || self.waits.is_multiple_of(PROBE_EVERY) {
                    match sys_recv(fd, buf) {
                        Ok(n) => {
                            self.score = (self.score + 1).min(8);
                            return Ok(n);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            self.score = (self.score - 1).max(-8);
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        loop {
            if self.slot.is_some() {
                self.ready(Dir::Read).await?;
            }
            match sys_recv(fd, buf) {
                Ok(n) => {
                    if n < buf.len() {
                        self.not_ready(Dir::Read);
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.slot()?;
                    self.not_ready(Dir::Read);
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn read_tls(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.fd.as_raw_fd();
        loop {
            let tls = self.tls.as_mut().expect("tls stream");
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match tls.read_tls(&mut Fd(fd)) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        // Send the alert rustls queued, then report the failure.
                        let _ = tls.write_tls(&mut Fd(fd));
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.slot()?;
                    self.not_ready(Dir::Read);
                    self.ready(Dir::Read).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes all of `buf`.
    pub(crate) async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        if let Some(tls) = self.tls.as_mut() {
            tls.writer().write_all(buf)?;
            return self.flush_tls().await;
        }
        let fd = self.fd.as_raw_fd();
        if let Some(ring) = self.ring.as_mut() {
            return ring.write_all(fd, buf).await;
        }
        while !buf.is_empty() {
            match sys_send(fd, buf) {
                Ok(n) => buf = &buf[n..],
                Err(e) => self.blocked_write(e).await?,
            }
        }
        Ok(())
    }

    /// After a failed send: waits for write readiness if it would have blocked, else fails.
    async fn blocked_write(&mut self, e: io::Error) -> io::Result<()> {
        if e.kind() != io::ErrorKind::WouldBlock {
            return Err(e);
        }
        self.slot()?;
        self.not_ready(Dir::Write);
        self.ready(Dir::Write).await
    }

    async fn flush_tls(&mut self) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        while self.tls.as_ref().is_some_and(|t| t.wants_write()) {
            let tls = self.tls.as_mut().expect("checked");
            if let Err(e) = tls.write_tls(&mut Fd(fd)) {
                self.blocked_write(e).await?;
            }
        }
        Ok(())
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        if let Some(tls) = self.tls.as_mut() {
            tls.send_close_notify();
            let _ = self.flush_tls().await;
        }
        if let Some(ring) = self.ring.as_mut() {
            ring.flush().await?;
        }
        // SAFETY: plain system call on our descriptor.
        unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) };
        Ok(())
    }
}

impl Drop for RawStream {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            let fd = self.fd.as_raw_fd();
            let _ = reactor::with(|r| r.deregister(fd, slot));
        }
    }
}
