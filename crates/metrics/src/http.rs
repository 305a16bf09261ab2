//! The HTTP side of `--metrics-addr`: one thread serving every connection from a `poll(2)` loop
//! over non-blocking sockets, so a connection costs a few KB and no thread, and up to
//! [`MAX_CONNECTIONS`] are held at once. A connection must send its request head within
//! [`DEADLINE`] (else it gets `408` and is closed) and its answer is written within it again
//! (one response, then close). When every place is taken, a new connection takes the place of
//! the oldest one still waiting for its request, so a crowd of slow or idle clients cannot keep
//! out a scraper that sends its request at once; a complete request is answered in the loop turn
//! it arrives in. Stopping ends the loop (connections still open are closed), so the end of a
//! run never waits for a scraper.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Connections held at once; past it a new one replaces the oldest still waiting for its
/// request.
pub const MAX_CONNECTIONS: usize = 512;
/// Time for a client to send its request head, and again for its answer to be written.
pub const DEADLINE: Duration = Duration::from_secs(2);
/// Longest request head read.
const MAX_REQUEST: usize = 16 * 1024;
/// How often the loop looks at the stop flag and the deadlines when nothing happens.
const TICK_MS: i32 = 50;

/// What `GET /metrics` answers: the body, and whether it holds the run's final figures.
pub trait Exposition: Send + Sync + 'static {
    fn exposition(&self) -> (String, bool);
}

/// A running server; stopped when dropped.
pub struct HttpServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// a response holding the final figures was written in full
    final_served: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Listens on `addr` (`HOST:PORT`; port 0: any free port) and serves `what`.
    pub fn start(addr: &str, what: Arc<dyn Exposition>) -> Result<HttpServer, String> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| format!("--metrics-addr {addr}: could not listen: {}", strerror(&e)))?;
        let bound = listener.local_addr().map_err(|e| strerror(&e))?;
        listener.set_nonblocking(true).map_err(|e| strerror(&e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let final_served = Arc::new(AtomicBool::new(false));
        let (s, f) = (stop.clone(), final_served.clone());
        let thread = std::thread::Builder::new()
            .name("pgrig-metrics".into())
            .spawn(move || accept_loop(&listener, &what, &s, &f))
            .map_err(|e| format!("could not start the metrics server: {e}"))?;
        Ok(HttpServer {
            addr: bound,
            stop,
            final_served,
            thread: Some(thread),
        })
    }

    /// Whether a response with the final figures went out since [`HttpServer::forget_final`].
    pub fn final_served(&self) -> bool {
        self.final_served.load(Ordering::SeqCst)
    }

    pub fn forget_final(&self) {
        self.final_served.store(false, Ordering::SeqCst)
    }

    /// Stops serving: the loop ends and the connections still open are closed.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn strerror(e: &std::io::Error) -> String {
    pgrig_wire::strerror(e)
}

/// A connection: reading its request head, then writing its answer.
struct Conn {
    stream: TcpStream,
    head: Vec<u8>,
    /// when the current phase (reading, writing) began
    since: Instant,
    reply: Option<Reply>,
}

struct Reply {
    bytes: Vec<u8>,
    sent: usize,
    /// the answer holds the run's final figures
    last: bool,
}

fn accept_loop(
    listener: &TcpListener,
    what: &Arc<dyn Exposition>,
    stop: &AtomicBool,
    final_served: &Arc<AtomicBool>,
) {
    let mut conns: Vec<Conn> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let mut fds = Vec::with_capacity(conns.len() + 1);
        fds.push(pollfd(listener.as_raw_fd(), libc::POLLIN));
        for c in &conns {
            let ev = if c.reply.is_some() {
                libc::POLLOUT
            } else {
                libc::POLLIN
            };
            fds.push(pollfd(c.stream.as_raw_fd(), ev));
        }
        let nfds = libc::nfds_t::try_from(fds.len()).unwrap_or(libc::nfds_t::MAX);
        // SAFETY: `fds` is a valid, writable array of `nfds` pollfd entries.
        unsafe { libc::poll(fds.as_mut_ptr(), nfds, TICK_MS) };
        let now = Instant::now();
        let mut ready = fds[1..].iter().map(|p| p.revents != 0);
        conns.retain_mut(|c| {
            let r = ready.next().unwrap_or(false);
            step(c, r, now, what.as_ref(), final_served)
        });
        if fds[0].revents != 0 {
            accept_all(listener, &mut conns, now);
        }
    }
}

fn pollfd(fd: i32, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// Takes every pending connection; when all places are taken, the oldest connection still
/// waiting for its request gives its place up (none: the new one is closed).
fn accept_all(listener: &TcpListener, conns: &mut Vec<Conn>, now: Instant) {
    while let Ok((stream, _)) = listener.accept() {
        if stream.set_nonblocking(true).is_err() {
            continue;
        }
        if conns.len() >= MAX_CONNECTIONS {
            let oldest = (conns.iter().enumerate())
                .filter(|(_, c)| c.reply.is_none())
                .min_by_key(|(_, c)| c.since)
                .map(|(i, _)| i);
            match oldest {
                Some(i) => drop(conns.swap_remove(i)),
                None => continue,
            }
        }
        conns.push(Conn {
            stream,
            head: Vec::new(),
            since: now,
            reply: None,
        });
    }
}

/// Moves one connection on (`ready`: poll said it can); whether to keep it.
fn step(
    c: &mut Conn,
    ready: bool,
    now: Instant,
    what: &dyn Exposition,
    final_served: &AtomicBool,
) -> bool {
    if c.reply.is_none() {
        let complete = ready && read_more(c);
        if complete {
            let (bytes, last) = answer(&c.head, what);
            c.reply = Some(Reply {
                bytes,
                sent: 0,
                last,
            });
            c.since = now;
        } else if now.duration_since(c.since) > DEADLINE {
            let _ = c
                .stream
                .write(&response("408 Request Timeout", "text/plain", "too slow\n"));
            return false;
        } else {
            return true;
        }
    }
    let Some(r) = c.reply.as_mut() else {
        return false;
    };
    loop {
        match c.stream.write(&r.bytes[r.sent..]) {
            Ok(0) => return false,
            Ok(n) => {
                r.sent += n;
                if r.sent == r.bytes.len() {
                    if r.last {
                        final_served.store(true, Ordering::SeqCst);
                    }
                    return false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return now.duration_since(c.since) <= DEADLINE;
            }
            Err(_) => return false,
        }
    }
}

/// Reads what has arrived; whether the request head is complete (its blank line, the end of
/// the stream or [`MAX_REQUEST`] bytes).
fn read_more(c: &mut Conn) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) => {
                c.head.extend_from_slice(&buf[..n]);
                if c.head.windows(4).any(|w| w == b"\r\n\r\n") || c.head.len() >= MAX_REQUEST {
                    return true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// The response to request head `req`, and whether it holds the final figures.
fn answer(req: &[u8], what: &dyn Exposition) -> (Vec<u8>, bool) {
    let line = String::from_utf8_lossy(req);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    if method != "GET" {
        return (
            response("405 Method Not Allowed", "text/plain", "GET only\n"),
            false,
        );
    }
    if path == "/metrics" || path == "/" {
        let ct = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        let (body, last) = what.exposition();
        return (response("200 OK", ct, &body), last);
    }
    (
        response("404 Not Found", "text/plain", "see /metrics\n"),
        false,
    )
}

fn response(status: &str, ctype: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Answers `body` and says the figures are final from the `final_after`th request on.
    struct Fixed {
        served: AtomicU32,
        final_after: u32,
    }

    impl Exposition for Fixed {
        fn exposition(&self) -> (String, bool) {
            let n = self.served.fetch_add(1, Ordering::SeqCst) + 1;
            ("a 1\n# EOF\n".into(), n >= self.final_after)
        }
    }

    fn fixed(final_after: u32) -> Arc<Fixed> {
        Arc::new(Fixed {
            served: AtomicU32::new(0),
            final_after,
        })
    }

    fn ask(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(request.as_bytes()).expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        out
    }

    #[test]
    fn get_metrics_answers_the_exposition() {
        let (bytes, last) = answer(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n", fixed(1).as_ref());
        let text = String::from_utf8(bytes).expect("utf-8");
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; \
             charset=utf-8\r\nContent-Length: 10\r\nConnection: close\r\n\r\na 1\n# EOF\n"
        );
        assert!(last);
        let (root, _) = answer(b"GET / HTTP/1.0\r\n\r\n", fixed(1).as_ref());
        assert!(root.starts_with(b"HTTP/1.1 200 OK\r\n"));
    }

    #[test]
    fn other_methods_and_paths_are_refused() {
        let what = fixed(1);
        let (post, last) = answer(b"POST /metrics HTTP/1.1\r\n\r\n", what.as_ref());
        assert!(post.starts_with(b"HTTP/1.1 405 Method Not Allowed\r\n"));
        assert!(!last);
        let (other, last) = answer(b"GET /other HTTP/1.1\r\n\r\n", what.as_ref());
        assert!(other.starts_with(b"HTTP/1.1 404 Not Found\r\n"));
        assert!(!last);
        let (empty, _) = answer(b"", what.as_ref());
        assert!(empty.starts_with(b"HTTP/1.1 405 "));
        assert_eq!(what.served.load(Ordering::SeqCst), 0, "never exposed");
    }

    #[test]
    fn a_served_final_answer_is_noticed() {
        let mut server = HttpServer::start("127.0.0.1:0", fixed(2)).expect("listen");
        let first = ask(server.addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(first.ends_with("\r\n\r\na 1\n# EOF\n"), "{first}");
        assert!(!server.final_served());
        ask(server.addr, "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(server.final_served());
        server.forget_final();
        assert!(!server.final_served());
        server.stop();
        assert!(TcpStream::connect(server.addr).is_err(), "stopped");
    }

    #[test]
    fn a_silent_client_gets_408_and_does_not_block_others() {
        let server = HttpServer::start("127.0.0.1:0", fixed(1)).expect("listen");
        let mut idle = TcpStream::connect(server.addr).expect("connect");
        let answered = ask(server.addr, "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(answered.starts_with("HTTP/1.1 200 OK\r\n"), "{answered}");
        let mut out = String::new();
        idle.read_to_string(&mut out).expect("read");
        assert!(out.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{out}");
    }

    #[test]
    fn an_address_in_use_names_the_option() {
        let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = taken.local_addr().expect("addr").to_string();
        let e = HttpServer::start(&addr, fixed(1)).err().expect("refused");
        assert_eq!(
            e,
            format!("--metrics-addr {addr}: could not listen: Address already in use")
        );
    }
}
