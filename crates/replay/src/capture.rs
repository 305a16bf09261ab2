//! `pgrig capture`'s recording proxy: clients connect to a listener (a unix socket in a private
//! directory, or loopback TCP), each session is relayed byte for byte to the upstream server
//! (authentication included, never recorded), and what every client sends — its startup user
//! and database, its Query/Parse/Bind/Execute/Describe/Close/Sync/Flush messages as sent,
//! cancel requests, its end — is written to a capture file ([`crate::capture_file`]) with µs
//! offsets and a session id. CopyData is relayed and counted, not recorded. A TCP client that
//! is not a process of the user's own (`capture_peer`) is closed unanswered. The kernel names
//! the owner of that one socket (`sock_diag`: a netlink round trip whose cost does not grow with
//! the sockets on the machine); where netlink is refused, the socket table is read off the
//! accept loop (on the blocking pool, at most [`MAX_CHECKING`] at once, each within
//! [`CHECK_DEADLINE`]). Either way a flood of connections delays neither the sessions already
//! relayed nor the owner's next connection. One thread; Ctrl-C or SIGTERM ends every session and flushes the file.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pgrig_wire::config::{Host, Target};
use pgrig_wire::proto::ReadBuf;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

use crate::capture_file::{connect_payload, Counts, Kind, Writer};
use crate::capture_msg::is_recorded;
use crate::capture_peer;
use crate::error::Error;

/// Where clients connect.
#[derive(Debug, Clone)]
pub enum Listen {
    /// The socket file (`DIR/.s.PGSQL.PORT`; the directory checked private by the caller).
    Unix(PathBuf),
    /// A loopback address.
    Tcp(std::net::SocketAddr),
}

/// What the proxy needs.
pub struct CaptureOptions {
    pub listen: Listen,
    /// The upstream server's addresses, tried in order.
    pub upstream: Vec<Target>,
}

/// What a capture recorded, and how many TCP clients of other users it closed.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub counts: Counts,
    pub refused: u64,
}

const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;
const CANCEL_REQUEST: u32 = 80_877_102;
/// A startup packet larger than this is refused (PostgreSQL's own limit is 10 000 bytes).
const MAX_STARTUP: usize = 10_000;

/// TCP connections whose owner is being checked at once; more are closed unanswered.
pub const MAX_CHECKING: usize = 64;
/// Time for the owner check of one connection; past it the connection is closed.
pub const CHECK_DEADLINE: Duration = Duration::from_secs(2);

struct Shared {
    opts: CaptureOptions,
    start: Instant,
    out: RefCell<Writer<Box<dyn Write>>>,
    counts: Cell<Counts>,
    refused: Cell<u64>,
    /// TCP connections whose owner check is under way.
    checking: Cell<usize>,
    /// Sessions whose Connect is written and whose Disconnect is not.
    open: RefCell<BTreeSet<u64>>,
    /// Cancel keys (backend pid and secret) of the open sessions.
    keys: RefCell<HashMap<Vec<u8>, u64>>,
    next_id: Cell<u64>,
    stopped: Cell<bool>,
    failure: RefCell<Option<String>>,
    stop: tokio::sync::Notify,
}

impl Shared {
    fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn record(&self, at: u64, session: u64, kind: Kind, payload: &[u8]) {
        if self.stopped.get() {
            return;
        }
        if let Err(e) = self.out.borrow_mut().record(at, session, kind, payload) {
            self.fail(format!("cannot write the capture file: {e}"));
        }
    }

    fn fail(&self, msg: String) {
        self.failure.borrow_mut().get_or_insert(msg);
        self.stop.notify_one();
    }

    fn count(&self, f: impl FnOnce(&mut Counts)) {
        let mut c = self.counts.get();
        f(&mut c);
        self.counts.set(c);
    }

    fn disconnect(&self, id: u64) {
        if self.open.borrow_mut().remove(&id) {
            self.keys.borrow_mut().retain(|_, s| *s != id);
            self.record(self.now_us(), id, Kind::Disconnect, b"");
        }
    }
}

/// Runs the proxy until Ctrl-C or SIGTERM; `ready` is called once the listener accepts.
pub fn run(
    opts: CaptureOptions,
    out: Box<dyn Write>,
    ready: impl FnOnce(),
) -> Result<Summary, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error(format!("pgrig capture: cannot start the runtime: {e}")))?;
    let start_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let writer = Writer::new(out, start_unix)
        .map_err(|e| Error(format!("pgrig capture: cannot write the capture file: {e}")))?;
    let shared = Rc::new(Shared {
        opts,
        start: Instant::now(),
        out: RefCell::new(writer),
        counts: Cell::new(Counts::default()),
        refused: Cell::new(0),
        checking: Cell::new(0),
        open: RefCell::new(BTreeSet::new()),
        keys: RefCell::new(HashMap::new()),
        next_id: Cell::new(1),
        stopped: Cell::new(false),
        failure: RefCell::new(None),
        stop: tokio::sync::Notify::new(),
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, serve(shared.clone(), ready))?;
    // every session still open ends now, as at the end of a log
    let ids: Vec<u64> = shared.open.borrow().iter().copied().collect();
    for id in ids {
        shared.disconnect(id);
    }
    let counts = shared.counts.get();
    let end = {
        let mut w = shared.out.borrow_mut();
        w.end(shared.now_us(), counts).and_then(|()| w.flush())
    };
    shared.stopped.set(true);
    drop(local);
    if let Some(f) = shared.failure.borrow_mut().take() {
        return Err(Error(format!("pgrig capture: {f}")));
    }
    end.map_err(|e| Error(format!("pgrig capture: cannot write the capture file: {e}")))?;
    Ok(Summary {
        counts,
        refused: shared.refused.get(),
    })
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

async fn serve(shared: Rc<Shared>, ready: impl FnOnce()) -> Result<(), Error> {
    let listener = match &shared.opts.listen {
        Listen::Unix(path) => UnixListener::bind(path).map(Listener::Unix),
        Listen::Tcp(addr) => TcpListener::bind(addr).await.map(Listener::Tcp),
    }
    .map_err(|e| {
        Error(format!(
            "pgrig capture: cannot listen: {}",
            pgrig_wire::strerror(&e)
        ))
    })?;
    ready();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| Error(format!("pgrig capture: {e}")))?;
    let mut flush = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = shared.stop.notified() => break,
            _ = flush.tick() => {
                if let Err(e) = shared.out.borrow_mut().flush() {
                    shared.fail(format!("cannot write the capture file: {e}"));
                }
            }
            c = accept(&listener) => match c {
                Ok(Accepted::Unix(s)) => {
                    tokio::task::spawn_local(client(shared.clone(), s));
                }
                Ok(Accepted::Tcp(s)) => {
                    // the kernel names the owner of this one socket at once (sock_diag)
                    let quick = match (s.peer_addr(), s.local_addr()) {
                        (Ok(peer), Ok(local)) => capture_peer::is_own_quick(&peer, &local),
                        _ => Some(false),
                    };
                    if let Some(own) = quick {
                        if own {
                            let _ = s.set_nodelay(true);
                            tokio::task::spawn_local(client(shared.clone(), s));
                        } else {
                            shared.refused.set(shared.refused.get() + 1);
                        }
                    } else if shared.checking.get() >= MAX_CHECKING {
                        shared.refused.set(shared.refused.get() + 1);
                    } else {
                        shared.checking.set(shared.checking.get() + 1);
                        tokio::task::spawn_local(admit(shared.clone(), s));
                    }
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    Ok(())
}

/// Serves a TCP connection if a process of the user's own made it (others are closed
/// unanswered), the socket table read on the blocking pool, within [`CHECK_DEADLINE`] (where
/// `sock_diag` cannot be asked).
async fn admit(shared: Rc<Shared>, s: TcpStream) {
    let own = match (s.peer_addr(), s.local_addr()) {
        (Ok(peer), Ok(local)) => {
            let check = tokio::task::spawn_blocking(move || capture_peer::is_own(&peer, &local));
            matches!(
                tokio::time::timeout(CHECK_DEADLINE, check).await,
                Ok(Ok(true))
            )
        }
        _ => false,
    };
    shared.checking.set(shared.checking.get().saturating_sub(1));
    if own {
        let _ = s.set_nodelay(true);
        client(shared, s).await;
    } else {
        shared.refused.set(shared.refused.get() + 1);
    }
}

enum Accepted {
    Unix(UnixStream),
    Tcp(TcpStream),
}

async fn accept(l: &Listener) -> std::io::Result<Accepted> {
    match l {
        Listener::Unix(l) => l.accept().await.map(|(s, _)| Accepted::Unix(s)),
        Listener::Tcp(l) => l.accept().await.map(|(s, _)| Accepted::Tcp(s)),
    }
}

/// Reads one startup-phase packet (length-prefixed, no type byte): its body.
async fn read_packet<C: AsyncRead + Unpin>(c: &mut C) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    c.read_exact(&mut len).await.ok()?;
    let len = u32::from_be_bytes(len) as usize;
    if !(8..=MAX_STARTUP).contains(&len) {
        return None;
    }
    let mut body = vec![0u8; len - 4];
    c.read_exact(&mut body).await.ok()?;
    Some(body)
}

fn packet(body: &[u8]) -> Vec<u8> {
    let mut p = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    p.extend_from_slice(body);
    p
}

/// The startup parameters of a StartupMessage body (after its version), `None` if malformed.
fn startup_params(body: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let rest = body.get(4..)?;
    let rest = rest.strip_suffix(b"\0")?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let rest = rest.strip_suffix(b"\0")?;
    let parts: Vec<&[u8]> = rest.split(|&b| b == 0).collect();
    if !parts.len().is_multiple_of(2) {
        return None;
    }
    Some(
        parts
            .chunks(2)
            .map(|c| (c[0].to_vec(), c[1].to_vec()))
            .collect(),
    )
}

/// One client connection: SSL/GSS requests declined, a cancel request recorded and passed on,
/// a startup relayed to the upstream server and the session recorded.
async fn client<C: AsyncRead + AsyncWrite + Unpin>(shared: Rc<Shared>, mut c: C) {
    let body = loop {
        let Some(body) = read_packet(&mut c).await else {
            return;
        };
        let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        match code {
            SSL_REQUEST | GSSENC_REQUEST => {
                if c.write_all(b"N").await.is_err() {
                    return;
                }
            }
            CANCEL_REQUEST => return cancel(&shared, &body).await,
            v if v >> 16 == 3 => break body,
            _ => return,
        }
    };
    let Some(params) = startup_params(&body) else {
        return;
    };
    // user and database first, then the other parameters as sent
    let mut ordered: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for key in [&b"user"[..], b"database"] {
        if let Some(p) = params.iter().find(|(k, _)| k == key) {
            ordered.push(p.clone());
        }
    }
    ordered.extend(
        params
            .iter()
            .filter(|(k, _)| k != b"user" && k != b"database")
            .cloned(),
    );
    match upstream(&shared).await {
        Ok(Upstream::Unix(u)) => session(shared, c, u, &body, ordered).await,
        Ok(Upstream::Tcp(u)) => session(shared, c, u, &body, ordered).await,
        Err(msg) => {
            let _ = c.write_all(&fatal(&msg)).await;
        }
    }
}

/// An ErrorResponse (FATAL, 08006) for the client.
fn fatal(msg: &str) -> Vec<u8> {
    let mut b = Vec::new();
    for (t, v) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "08006"),
        (b'M', msg),
    ] {
        b.push(t);
        b.extend_from_slice(v.as_bytes());
        b.push(0);
    }
    b.push(0);
    let mut m = vec![b'E'];
    m.extend_from_slice(&((b.len() + 4) as u32).to_be_bytes());
    m.extend_from_slice(&b);
    m
}

enum Upstream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

/// A plain connection to the first upstream address that answers.
async fn upstream(shared: &Shared) -> Result<Upstream, String> {
    let mut last = String::from("no upstream address");
    for t in &shared.opts.upstream {
        let r = match (&t.host, t.socket_path()) {
            (_, Some(path)) => UnixStream::connect(&path).await.map(Upstream::Unix),
            (Host::Tcp(h), None) => {
                let host = t
                    .hostaddr
                    .map(|a| a.to_string())
                    .unwrap_or_else(|| h.clone());
                match TcpStream::connect((host.as_str(), t.port)).await {
                    Ok(s) => {
                        let _ = s.set_nodelay(true);
                        Ok(Upstream::Tcp(s))
                    }
                    Err(e) => Err(e),
                }
            }
            (Host::Unix(_), None) => continue,
        };
        match r {
            Ok(u) => return Ok(u),
            Err(e) => {
                last = format!(
                    "pgrig capture: cannot reach the upstream server {}: {}",
                    t.host_str(),
                    pgrig_wire::strerror(&e)
                )
            }
        }
    }
    Err(last)
}

/// A cancel request: recorded for the session whose key it carries, and passed on to the
/// upstream server (an unknown key is dropped).
async fn cancel(shared: &Shared, body: &[u8]) {
    let key = body[4..].to_vec();
    let Some(&id) = shared.keys.borrow().get(&key) else {
        return;
    };
    shared.count(|c| c.cancels += 1);
    shared.record(shared.now_us(), id, Kind::Cancel, b"");
    let p = packet(body);
    match upstream(shared).await {
        Ok(Upstream::Unix(mut u)) => {
            let _ = u.write_all(&p).await;
        }
        Ok(Upstream::Tcp(mut u)) => {
            let _ = u.write_all(&p).await;
        }
        Err(_) => {}
    }
}

/// Relays a session: the startup exchange until the server's first ReadyForQuery (nothing
/// recorded but the Connect), then both directions, recording the client's messages.
async fn session<C, U>(
    shared: Rc<Shared>,
    c: C,
    mut u: U,
    startup: &[u8],
    params: Vec<(Vec<u8>, Vec<u8>)>,
) where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    if u.write_all(&packet(startup)).await.is_err() {
        return;
    }
    let (mut cr, mut cw) = tokio::io::split(c);
    let (mut ur, mut uw) = tokio::io::split(u);
    let id = shared.next_id.get();
    shared.next_id.set(id + 1);
    let mut crb = ReadBuf::default();
    let Some(key) = startup_phase(&mut cr, &mut cw, &mut ur, &mut uw, &mut crb).await else {
        return;
    };
    shared.open.borrow_mut().insert(id);
    if let Some(k) = key {
        shared.keys.borrow_mut().insert(k, id);
    }
    shared.count(|c| c.sessions += 1);
    shared.record(
        shared.now_us(),
        id,
        Kind::Connect,
        &connect_payload(&params),
    );
    let up = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match ur.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
    };
    tokio::select! {
        _ = up => {}
        _ = client_to_server(&shared, id, &mut cr, &mut uw, crb) => {}
    }
    shared.disconnect(id);
}

/// The startup exchange: client bytes (authentication) relayed as they come, server messages
/// relayed whole until ReadyForQuery (then `Some(the cancel key, if sent)`) or an error.
async fn startup_phase<CR, CW, UR, UW>(
    cr: &mut CR,
    cw: &mut CW,
    ur: &mut UR,
    uw: &mut UW,
    crb: &mut ReadBuf,
) -> Option<Option<Vec<u8>>>
where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
    UR: AsyncRead + Unpin,
    UW: AsyncWrite + Unpin,
{
    let mut srb = ReadBuf::default();
    let mut key = None;
    loop {
        tokio::select! {
            n = cr.read(crb.spare()) => {
                let n = n.ok().filter(|&n| n > 0)?;
                crb.filled(n);
                let data = crb.data().to_vec();
                crb.consume(data.len());
                uw.write_all(&data).await.ok()?;
            }
            n = ur.read(srb.spare()) => {
                let n = n.ok().filter(|&n| n > 0)?;
                srb.filled(n);
                let mut out = Vec::new();
                let mut ready = false;
                while let Some(len) = srb.next_frame().ok()? {
                    let f = srb.consume(len);
                    out.extend_from_slice(f);
                    match f[0] {
                        b'K' => key = Some(f[5..].to_vec()),
                        b'Z' => ready = true,
                        _ => {}
                    }
                    if ready {
                        break;
                    }
                }
                let rest = srb.data().to_vec();
                out.extend_from_slice(&rest);
                cw.write_all(&out).await.ok()?;
                if ready {
                    return Some(key);
                }
                // an error ends the startup; the server closes the connection
            }
        }
    }
}

/// The client's side after startup: every read relayed at once, its whole messages recorded
/// as one batch (CopyData counted, password messages and anything else not recorded).
async fn client_to_server<CR, UW>(
    shared: &Shared,
    id: u64,
    cr: &mut CR,
    uw: &mut UW,
    mut rb: ReadBuf,
) where
    CR: AsyncRead + Unpin,
    UW: AsyncWrite + Unpin,
{
    let mut out = Vec::with_capacity(8 * 1024);
    let mut batch = Vec::with_capacity(8 * 1024);
    loop {
        let n = match cr.read(rb.spare()).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let at = shared.now_us();
        rb.filled(n);
        out.clear();
        batch.clear();
        let mut terminate = false;
        let mut copies = 0;
        loop {
            let len = match rb.next_frame() {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(_) => return,
            };
            let f = rb.consume(len);
            out.extend_from_slice(f);
            match f[0] {
                b'X' => terminate = true,
                b'd' | b'c' | b'f' => copies += 1,
                t if is_recorded(t) => batch.extend_from_slice(f),
                _ => {}
            }
        }
        if !out.is_empty() && uw.write_all(&out).await.is_err() {
            return;
        }
        if copies > 0 {
            shared.count(|c| c.copy_skipped += copies);
        }
        if !batch.is_empty() {
            shared.count(|c| c.batches += 1);
            shared.record(at, id, Kind::Messages, &batch);
        }
        if terminate {
            shared.disconnect(id);
            return;
        }
    }
}
