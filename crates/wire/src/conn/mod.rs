//! The tokio adapter: a single-task connection object driving the sans-IO protocol core.
//!
//! Hot path: encode messages into the outgoing buffer (`query`, `parse`, `bind`, `execute`,
//! `sync`, ...; encoding errors are held back and returned by the next [`Connection::send`]),
//! one `write` per [`Connection::send`], and [`Connection::recv`] hands out messages borrowed
//! from the read buffer, reading only when no complete message is buffered. Nothing allocates
//! in steady state. ParameterStatus, ReadyForQuery's transaction status and notices are
//! handled internally (notices: dropped, collected, returned, or given to a handler as libpq's
//! notice processor does).

mod cancel;
mod connect;
mod raw;
mod simple;
mod stream;
mod tls;

use bytes::BytesMut;

pub use cancel::CancelToken;
pub use simple::{CopyIn, QueryResult, SimpleRow};
pub use stream::Addr;

use crate::config::Config;
use crate::error::Error;
use crate::proto::backend::{parse, Backend, TransactionStatus};
use crate::proto::frontend::{self, ParamWriter};
use crate::proto::{DbError, ReadBuf, Session};
use stream::Stream;

/// What [`Connection::recv`] does with NoticeResponse messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notices {
    /// Drop them.
    Ignore,
    /// Keep them (up to [`MAX_COLLECTED_NOTICES`]) for [`Connection::take_notices`].
    Collect,
    /// Return them from `recv` as [`Backend::Notice`].
    Return,
}

/// libpq's notice processor: called with every NoticeResponse (and nothing else) as it is
/// read, whatever [`Notices`] mode is set. pgbench's default prints `NOTICE:  text` to stderr.
pub type NoticeHandler = std::sync::Arc<dyn Fn(&crate::proto::ErrorFields<'_>) + Send + Sync>;

/// Bound on collected notices, so a chatty server cannot grow memory without limit.
pub const MAX_COLLECTED_NOTICES: usize = 1000;

const WRITE_CAPACITY: usize = 1024;

/// One PostgreSQL session. Not `Sync`-shared: owned by a single task.
pub struct Connection {
    stream: Stream,
    rbuf: ReadBuf,
    wbuf: BytesMut,
    session: Session,
    pending_error: Option<Error>,
    notices: Notices,
    notice_handler: Option<NoticeHandler>,
    collected: Vec<DbError>,
    addr: Addr,
    /// length of the message [`Connection::next_tag`] announced (0: none), so that
    /// [`Connection::skip_message`] need not frame it again
    announced: usize,
    /// libpq's `PQhost`/`PQport`: the configured host (socket directory, name or `hostaddr`)
    /// and port of the target this session reached
    host: String,
    port: u16,
}

impl Connection {
    fn new(stream: Stream, addr: Addr) -> Connection {
        Connection {
            stream,
            rbuf: ReadBuf::default(),
            wbuf: BytesMut::with_capacity(WRITE_CAPACITY),
            session: Session::default(),
            pending_error: None,
            notices: Notices::Collect,
            notice_handler: None,
            collected: Vec::new(),
            addr,
            announced: 0,
            host: String::new(),
            port: 0,
        }
    }

    /// Connects and authenticates, trying each configured host in turn (like libpq).
    pub async fn connect(config: &Config) -> Result<Connection, Error> {
        connect::connect(config).await
    }

    /// Moves the connection off tokio, onto [`crate::rt`] (the benchmark hot path): afterwards
    /// it must be used inside [`crate::rt::block_on`] on one thread. Call it inside the tokio
    /// runtime that connected it.
    pub fn into_rt(mut self) -> Result<Connection, Error> {
        self.stream = self.stream.into_raw()?;
        Ok(self)
    }

    /// Connects (blocking the calling thread, like libpq's `PQconnectdb`) and returns a
    /// connection for [`crate::rt`]. Usable from inside [`crate::rt::block_on`].
    pub fn connect_rt(config: &Config) -> Result<Connection, Error> {
        thread_local! {
            static TOKIO: std::cell::OnceCell<tokio::runtime::Runtime> = const { std::cell::OnceCell::new() };
        }
        TOKIO.with(|rt| {
            let rt = match rt.get() {
                Some(rt) => rt,
                None => {
                    let built = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(Error::from)?;
                    rt.get_or_init(|| built)
                }
            };
            rt.block_on(async { Connection::connect(config).await?.into_rt() })
        })
    }

    // ----- encoding (no I/O) -----

    #[inline]
    fn encode(&mut self, f: impl FnOnce(&mut BytesMut) -> Result<(), Error>) {
        if let Err(e) = f(&mut self.wbuf) {
            self.pending_error.get_or_insert(e);
        }
    }

    /// Queues a simple-protocol Query.
    #[inline]
    pub fn query(&mut self, sql: &[u8]) {
        self.encode(|b| frontend::query(b, sql));
    }

    /// Queues Parse of `sql` as statement `name` (`""`: unnamed) with `param_count` parameters
    /// of unspecified type.
    #[inline]
    pub fn parse(&mut self, name: impl AsRef<[u8]>, sql: impl AsRef<[u8]>, param_count: u16) {
        self.encode(|b| frontend::parse(b, name.as_ref(), sql.as_ref(), param_count));
    }

    /// Queues Bind of statement `stmt` to `portal` with text parameters (`None` is NULL).
    #[inline]
    pub fn bind<'p, I>(&mut self, portal: impl AsRef<[u8]>, stmt: impl AsRef<[u8]>, params: I)
    where
        I: IntoIterator<Item = Option<&'p [u8]>>,
    {
        self.encode(|b| frontend::bind(b, portal.as_ref(), stmt.as_ref(), params));
    }

    /// Queues Bind whose parameters `write` renders straight into the outgoing buffer.
    #[inline]
    pub fn bind_with<F>(&mut self, portal: impl AsRef<[u8]>, stmt: impl AsRef<[u8]>, write: F)
    where
        F: FnOnce(&mut ParamWriter<'_>),
    {
        self.encode(|b| frontend::bind_with(b, portal.as_ref(), stmt.as_ref(), write));
    }

    /// Queues Describe of a portal.
    #[inline]
    pub fn describe_portal(&mut self, portal: impl AsRef<[u8]>) {
        self.encode(|b| frontend::describe(b, b'P', portal.as_ref()));
    }

    /// Queues Describe of a prepared statement.
    #[inline]
    pub fn describe_statement(&mut self, stmt: impl AsRef<[u8]>) {
        self.encode(|b| frontend::describe(b, b'S', stmt.as_ref()));
    }

    /// Queues Execute of `portal`; `max_rows` 0 fetches all rows.
    #[inline]
    pub fn execute(&mut self, portal: impl AsRef<[u8]>, max_rows: u32) {
        self.encode(|b| frontend::execute(b, portal.as_ref(), max_rows));
    }

    /// Queues Sync (ends an extended-protocol batch; the server answers ReadyForQuery).
    #[inline]
    pub fn sync(&mut self) {
        frontend::sync(&mut self.wbuf);
    }

    /// Queues the protocol's Flush message.
    #[inline]
    pub fn flush_msg(&mut self) {
        frontend::flush(&mut self.wbuf);
    }

    /// Queues Close of a prepared statement.
    pub fn close_statement(&mut self, stmt: impl AsRef<[u8]>) {
        self.encode(|b| frontend::close(b, b'S', stmt.as_ref()));
    }

    /// Queues Close of a portal.
    pub fn close_portal(&mut self, portal: impl AsRef<[u8]>) {
        self.encode(|b| frontend::close(b, b'P', portal.as_ref()));
    }

    /// Queues CopyData.
    #[inline]
    pub fn copy_data(&mut self, data: &[u8]) {
        self.encode(|b| frontend::copy_data(b, data));
    }

    /// Queues CopyDone.
    pub fn copy_done(&mut self) {
        frontend::copy_done(&mut self.wbuf);
    }

    /// Queues CopyFail (aborts a COPY FROM STDIN with `reason`).
    pub fn copy_fail(&mut self, reason: &str) {
        self.encode(|b| frontend::copy_fail(b, reason));
    }

    /// The outgoing buffer, for callers that encode messages themselves.
    pub fn write_buffer(&mut self) -> &mut BytesMut {
        &mut self.wbuf
    }

    /// Bytes queued and not yet sent.
    pub fn pending_bytes(&self) -> usize {
        self.wbuf.len()
    }

    // ----- I/O -----

    /// Writes everything queued, in one write when possible. If an encoding call failed since
    /// the last send, nothing is sent, the queue is discarded and that error is returned.
    #[inline]
    pub async fn send(&mut self) -> Result<(), Error> {
        if let Some(e) = self.pending_error.take() {
            self.wbuf.clear();
            return Err(e);
        }
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let r = self.stream.write_all(&self.wbuf).await;
        self.wbuf.clear();
        r.map_err(Error::from)
    }

    /// Reads more bytes from the server into the read buffer.
    #[inline]
    async fn fill(&mut self) -> Result<(), Error> {
        let n = self.stream.read(self.rbuf.spare()).await?;
        if n == 0 {
            return Err(Error::Closed);
        }
        self.rbuf.filled(n);
        Ok(())
    }

    /// Length of the next message to hand out, if one is buffered complete: ParameterStatus
    /// and (unless returned) notices in front of it are absorbed on the way.
    #[inline]
    fn next_deliverable(&mut self) -> Result<Option<usize>, Error> {
        self.announced = 0;
        loop {
            let Some(n) = self.rbuf.next_frame()? else {
                return Ok(None);
            };
            match self.rbuf.data()[0] {
                b'S' => {
                    if let Backend::ParameterStatus { name, value } = parse(self.rbuf.consume(n))? {
                        self.session.set_parameter(name, value);
                    }
                }
                b'N' if self.notices != Notices::Return || self.notice_handler.is_some() => {
                    if let Backend::Notice(fields) = parse(self.rbuf.consume(n))? {
                        if let Some(handle) = &self.notice_handler {
                            handle(&fields);
                        } else if self.notices == Notices::Collect
                            && self.collected.len() < MAX_COLLECTED_NOTICES
                        {
                            self.collected.push(fields.to_db_error());
                        }
                    }
                }
                b'Z' => {
                    let status = *self.rbuf.data().get(5).unwrap_or(&0);
                    self.session.tx_status = TransactionStatus::from_byte(status)?;
                    return Ok(Some(n));
                }
                _ => return Ok(Some(n)),
            }
        }
    }

    /// The next backend message if one is already buffered (no I/O): the hot path reads a
    /// whole response with one [`read_more`](Self::read_more) and then takes its messages
    /// out synchronously. Same handling as [`recv`](Self::recv).
    #[inline]
    pub fn try_recv(&mut self) -> Result<Option<Backend<'_>>, Error> {
        match self.next_deliverable()? {
            Some(n) => parse(self.rbuf.consume(n)).map(Some),
            None => Ok(None),
        }
    }

    /// Type byte of the next buffered message (after the same absorbing as
    /// [`try_recv`](Self::try_recv); ReadyForQuery's status is recorded), or `None` when more
    /// must be read. With [`skip_message`](Self::skip_message), the hot path passes over
    /// messages it has no use for without parsing them.
    #[inline]
    pub fn next_tag(&mut self) -> Result<Option<u8>, Error> {
        let Some(n) = self.next_deliverable()? else {
            return Ok(None);
        };
        self.announced = n;
        Ok(Some(self.rbuf.data()[0]))
    }

    /// Drops the buffered message [`next_tag`](Self::next_tag) announced, unparsed.
    #[inline]
    pub fn skip_message(&mut self) -> Result<(), Error> {
        let n = std::mem::take(&mut self.announced);
        if n != 0 {
            // framed by `next_tag` (reads only append behind it)
            self.rbuf.consume(n);
            return Ok(());
        }
        if let Some(n) = self.rbuf.next_frame()? {
            self.rbuf.consume(n);
        }
        Ok(())
    }

    /// Size of the next complete message (no absorbing), reading as needed. Startup only.
    async fn next_frame(&mut self) -> Result<usize, Error> {
        loop {
            if let Some(n) = self.rbuf.next_frame()? {
                return Ok(n);
            }
            self.fill().await?;
        }
    }

    /// Reads whatever the server has sent (waiting for at least one byte).
    #[inline]
    pub async fn read_more(&mut self) -> Result<(), Error> {
        self.fill().await
    }

    /// The next backend message, borrowed from the read buffer until the next call.
    ///
    /// ParameterStatus is absorbed (see [`parameter`](Self::parameter)); ReadyForQuery also
    /// updates [`transaction_status`](Self::transaction_status); notices follow
    /// [`set_notices`](Self::set_notices).
    pub async fn recv(&mut self) -> Result<Backend<'_>, Error> {
        loop {
            if let Some(n) = self.next_deliverable()? {
                return parse(self.rbuf.consume(n));
            }
            self.fill().await?;
        }
    }

    /// Reads and discards messages up to and including the next ReadyForQuery; returns the
    /// first server error seen on the way, if any.
    pub async fn skip_until_ready(&mut self) -> Result<Option<DbError>, Error> {
        let mut first = None;
        loop {
            match self.recv().await? {
                Backend::ReadyForQuery(_) => return Ok(first),
                Backend::Error(e) if first.is_none() => first = Some(e.to_db_error()),
                _ => {}
            }
        }
    }

    /// Sends Terminate and closes the socket; errors are irrelevant at that point.
    pub async fn close(mut self) {
        self.wbuf.clear();
        frontend::terminate(&mut self.wbuf);
        let _ = self.stream.write_all(&self.wbuf).await;
        let _ = self.stream.shutdown().await;
    }

    // ----- session state -----

    /// How notices are handled (default: [`Notices::Collect`]).
    pub fn set_notices(&mut self, mode: Notices) {
        self.notices = mode;
    }

    /// Hands every notice to `handler` as it arrives (libpq's notice processor) instead of
    /// the [`Notices`] mode; `None` goes back to the mode. Costs nothing on other messages.
    pub fn set_notice_handler(&mut self, handler: Option<NoticeHandler>) {
        self.notice_handler = handler;
    }

    /// Notices collected so far (emptied).
    pub fn take_notices(&mut self) -> Vec<DbError> {
        std::mem::take(&mut self.collected)
    }

    /// A run-time parameter reported by the server (`server_version`, `client_encoding`, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.session.parameter(name)
    }

    /// The server's `server_version` string.
    pub fn server_version(&self) -> &str {
        self.session.server_version()
    }

    /// `server_version` as a number like libpq's `PQserverVersion` (e.g. 150004).
    pub fn server_version_num(&self) -> i32 {
        self.session.server_version_num()
    }

    /// Transaction status from the last ReadyForQuery.
    pub fn transaction_status(&self) -> TransactionStatus {
        self.session.tx_status
    }

    /// The backend's process id (0 if the server sent none).
    pub fn backend_pid(&self) -> i32 {
        self.session.key.map_or(0, |(pid, _)| pid)
    }

    /// The host as configured for the target this session reached (libpq's `PQhost`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port of the target this session reached (libpq's `PQport`).
    pub fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn set_target(&mut self, host: String, port: u16) {
        self.host = host;
        self.port = port;
    }

    /// The server address this connection uses.
    pub fn addr(&self) -> &Addr {
        &self.addr
    }

    /// True if the session is encrypted.
    pub fn is_tls(&self) -> bool {
        self.stream.is_tls()
    }

    /// A token that can cancel this session's running query from elsewhere.
    pub fn cancel_token(&self) -> CancelToken {
        let (pid, key) = self.session.key.unwrap_or((0, 0));
        CancelToken::new(self.addr.clone(), pid, key)
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.addr)
            .field("tls", &self.is_tls())
            .field("pid", &self.backend_pid())
            .finish()
    }
}
