//! One measured execution of a query, on a session of its own (pgrig-wire on a private
//! current-thread runtime): the client's wall time from sending the query to the server being
//! ready again, the rows it returned, or the EXPLAIN JSON when it ran under EXPLAIN, or the
//! server's error. The timeout is the session's `statement_timeout` (the server cancels the
//! statement and says so); a cancel request follows as a backstop when the server has not
//! answered a few seconds later, and at once on a stop request (Ctrl-C).

use std::time::{Duration, Instant};

use pgrig_engine::StopHandle;
use pgrig_wire::{Backend, CancelToken, Config, Connection};

use crate::db::lit;
use crate::error::StudyError;

/// How long after the timeout the client sends its own cancel request.
const BACKSTOP: Duration = Duration::from_secs(3);
/// How often a running execution looks at the stop request and the backstop.
const POLL: Duration = Duration::from_millis(100);

pub struct QuerySession {
    rt: tokio::runtime::Runtime,
    conn: Option<Connection>,
    cancel: CancelToken,
    timeout: Option<Duration>,
}

/// Why an execution failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// SQLSTATE of the server's error (none when the connection failed).
    pub sqlstate: Option<String>,
    /// The server's message in libpq's layout (`ERROR:  …`), or the client's.
    pub message: String,
    /// The timeout ended it.
    pub timed_out: bool,
}

/// What one execution gave.
#[derive(Debug, Clone)]
pub struct Execution {
    pub client_ms: f64,
    pub rows: u64,
    /// The EXPLAIN JSON text, when the query ran under EXPLAIN.
    pub explain: Option<String>,
    pub failure: Option<Failure>,
}

/// Why the client cancelled.
#[derive(Clone, Copy, PartialEq)]
enum Cancelled {
    Timeout,
    Stop,
}

impl QuerySession {
    /// Connects; `timeout` becomes the session's statement_timeout.
    pub fn connect(
        conninfo: &str,
        label: &str,
        timeout: Option<Duration>,
    ) -> Result<QuerySession, StudyError> {
        let context = || format!("connecting to {label}");
        let cfg = Config::parse(conninfo).map_err(|e| StudyError::sql(context(), e))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StudyError::Other(format!("could not start a runtime: {e}")))?;
        let conn = rt
            .block_on(Connection::connect(&cfg))
            .map_err(|e| StudyError::sql(context(), e))?;
        let cancel = conn.cancel_token();
        let mut s = QuerySession {
            rt,
            conn: Some(conn),
            cancel,
            timeout,
        };
        if let Some(t) = timeout {
            s.set("statement_timeout", &t.as_millis().to_string())?;
        }
        Ok(s)
    }

    /// `server_version` as the server reports it.
    pub fn server_version(&self) -> String {
        self.conn
            .as_ref()
            .map(|c| c.server_version().to_string())
            .unwrap_or_default()
    }

    /// Whether the connection was lost (or closed).
    pub fn is_lost(&self) -> bool {
        self.conn.is_none()
    }

    /// Ends the session (before the server restarts).
    pub fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            self.rt.block_on(c.close());
        }
    }

    pub fn version_num(&self) -> i32 {
        self.conn.as_ref().map_or(0, Connection::server_version_num)
    }

    /// Rows of a statement of pgrig's own (settings, catalog lookups), as text.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, StudyError> {
        let conn = self
            .conn
            .as_mut()
            .ok_or(StudyError::Other("the query session was lost".into()))?;
        let results = self
            .rt
            .block_on(conn.simple_query(sql))
            .map_err(|e| StudyError::sql("query session", e))?;
        Ok(results
            .into_iter()
            .rev()
            .find(|r| !r.columns.is_empty())
            .map(|r| r.rows.into_iter().map(|row| row.0).collect())
            .unwrap_or_default())
    }

    /// `SET name = 'value'` for this session.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), StudyError> {
        self.query(&format!("SET {name} = {}", lit(value)))
            .map(drop)
    }

    /// Runs `sql` once (as it is, the caller adds any EXPLAIN) and measures it.
    pub fn execute(&mut self, sql: &str, explained: bool, stop: &StopHandle) -> Execution {
        let Some(conn) = self.conn.as_mut() else {
            return lost("the query session was lost earlier", 0.0);
        };
        let backstop = self.timeout.map(|t| t + BACKSTOP);
        let token = self.cancel.clone();
        let t0 = Instant::now();
        let (result, cancelled) = self.rt.block_on(async {
            let exchange = exchange(conn, sql, explained);
            tokio::pin!(exchange);
            let mut cancelled = None;
            loop {
                if let Ok(r) = tokio::time::timeout(POLL, &mut exchange).await {
                    return (r, cancelled);
                }
                if cancelled.is_none() {
                    cancelled = match (stop.requested(), backstop) {
                        (true, _) => Some(Cancelled::Stop),
                        (false, Some(b)) if t0.elapsed() >= b => Some(Cancelled::Timeout),
                        _ => None,
                    };
                    if cancelled.is_some() {
                        let _ = token.cancel().await;
                    }
                }
            }
        });
        let client_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok(r) => Execution {
                client_ms,
                rows: r.rows,
                explain: r.first,
                failure: r.error.map(|e| Failure {
                    timed_out: e.code == "57014"
                        && (cancelled == Some(Cancelled::Timeout)
                            || e.message.contains("statement timeout")),
                    sqlstate: Some(e.code.clone()),
                    message: e.to_string(),
                }),
            },
            Err(e) => {
                self.conn = None;
                lost(&format!("the connection failed: {e}"), client_ms)
            }
        }
    }
}

impl Drop for QuerySession {
    fn drop(&mut self) {
        self.close();
    }
}

fn lost(message: &str, client_ms: f64) -> Execution {
    Execution {
        client_ms,
        rows: 0,
        explain: None,
        failure: Some(Failure {
            sqlstate: None,
            message: message.to_string(),
            timed_out: false,
        }),
    }
}

/// What came back for one query.
struct Response {
    rows: u64,
    /// The first column of the first row (the EXPLAIN JSON), when asked for.
    first: Option<String>,
    error: Option<pgrig_wire::DbError>,
}

/// Sends `sql` with the simple protocol and reads up to ReadyForQuery; rows are counted, not
/// kept (only the first value when `keep_first`).
async fn exchange(
    conn: &mut Connection,
    sql: &str,
    keep_first: bool,
) -> Result<Response, pgrig_wire::Error> {
    conn.query(sql.as_bytes());
    conn.send().await?;
    let mut r = Response {
        rows: 0,
        first: None,
        error: None,
    };
    loop {
        match conn.recv().await? {
            Backend::DataRow(row) => {
                if keep_first && r.first.is_none() {
                    r.first = row
                        .iter()
                        .next()
                        .flatten()
                        .map(|b| String::from_utf8_lossy(b).into_owned());
                }
                r.rows += 1;
            }
            Backend::Error(e) => {
                r.error
                    .get_or_insert_with(|| e.to_db_error().with_query(sql));
            }
            Backend::CopyInResponse => {
                conn.copy_fail("COPY FROM STDIN cannot be measured as a query");
                conn.send().await?;
            }
            Backend::ReadyForQuery(_) => return Ok(r),
            _ => {}
        }
    }
}
