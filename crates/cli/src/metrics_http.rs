//! The HTTP side of `--metrics-addr`: a listener thread accepting connections and one thread per
//! connection, at most [`MAX_CONNECTIONS`] at once (more are closed at once, unanswered). Each
//! request must arrive within [`DEADLINE`] and its answer is written within it again (one
//! response, then close), so a slow or idle client holds one connection slot for a bounded time
//! and never delays another scrape. Stopping joins the listener thread only: a connection thread
//! ends on its own deadline and nobody waits for it, so the end of a run never waits for a
//! scraper.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Connections served at once; further ones are closed as soon as they are accepted.
pub const MAX_CONNECTIONS: usize = 16;
/// Time for a client to send its request, and again for its answer to be written.
pub const DEADLINE: Duration = Duration::from_secs(2);
/// Longest request head read.
const MAX_REQUEST: usize = 16 * 1024;

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

    /// Stops accepting (connections being answered finish on their own deadline).
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

/// Frees a connection slot when its thread ends (or could not start).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn accept_loop(
    listener: &TcpListener,
    what: &Arc<dyn Exposition>,
    stop: &AtomicBool,
    final_served: &Arc<AtomicBool>,
) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        let conn = match listener.accept() {
            Ok((conn, _)) => conn,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::SeqCst);
            continue; // closed unanswered: the slots are taken
        }
        let slot = Slot(active.clone());
        let (what, served) = (what.clone(), final_served.clone());
        let _ = std::thread::Builder::new()
            .name("pgrig-metrics-conn".into())
            .spawn(move || {
                let _slot = slot;
                if answer(conn, what.as_ref()) {
                    served.store(true, Ordering::SeqCst);
                }
            });
    }
}

/// The request head, read until its blank line, [`MAX_REQUEST`] bytes or the deadline; `None`
/// when the deadline passed first.
fn read_head(conn: &mut TcpStream) -> Option<Vec<u8>> {
    let until = Instant::now() + DEADLINE;
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < MAX_REQUEST {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return None;
        }
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => req.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(req)
}

/// Answers one request (one response, then close); whether the final figures were served.
fn answer(mut conn: TcpStream, what: &dyn Exposition) -> bool {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_write_timeout(Some(DEADLINE));
    let Some(req) = read_head(&mut conn) else {
        let _ = conn.write_all(&response("408 Request Timeout", "text/plain", "too slow\n"));
        return false;
    };
    let line = String::from_utf8_lossy(&req);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, ctype, body, last) = if method != "GET" {
        (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".into(),
            false,
        )
    } else if path == "/metrics" || path == "/" {
        let ct = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        let (body, last) = what.exposition();
        ("200 OK", ct, body, last)
    } else {
        (
            "404 Not Found",
            "text/plain",
            "see /metrics\n".into(),
            false,
        )
    };
    conn.write_all(&response(status, ctype, &body)).is_ok() && last
}

fn response(status: &str, ctype: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
