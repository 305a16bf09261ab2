//! One measured execution of a query, on a session of its own (the study's [`Db`]: pgrig-wire
//! on a private current-thread runtime, driven here message by message): the client's wall time from sending the query to the server being
//! ready again, the rows it returned, or the EXPLAIN JSON when it ran under EXPLAIN, or the
//! server's error. The timeout is the session's `statement_timeout` (the server cancels the
//! statement and says so); a cancel request follows as a backstop when the server has not
//! answered a few seconds later, and at once on a stop request (Ctrl-C).

use std::time::{Duration, Instant};

use pgrig_engine::StopHandle;
use pgrig_wire::{Backend, CancelToken, Connection};

use crate::db::{lit, Db, Rows};
use crate::error::StudyError;

/// How long after the timeout the client sends its own cancel request.
const BACKSTOP: Duration = Duration::from_secs(3);
/// How long after its cancel request an execution that still gets no answer is abandoned
/// (its session is closed and a new one serves the next execution).
const ABANDON: Duration = Duration::from_secs(30);
/// How often a running execution looks at the stop request and the backstop.
const POLL: Duration = Duration::from_millis(100);

pub struct QuerySession {
    /// None once the connection is lost or closed.
    db: Option<Db>,
    cancel: Option<CancelToken>,
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
        let mut db = Db::connect(conninfo, label)?;
        let cancel = db.parts().map(|(_, c)| c.cancel_token());
        let mut s = QuerySession {
            db: Some(db),
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
        self.db.as_ref().map(Db::version).unwrap_or_default()
    }

    /// Whether the connection was lost (or closed).
    pub fn is_lost(&self) -> bool {
        self.db.is_none()
    }

    /// Ends the session (before the server restarts).
    pub fn close(&mut self) {
        self.db = None;
    }

    pub fn version_num(&self) -> i32 {
        self.db.as_ref().map_or(0, Db::version_num)
    }

    /// Rows of a statement of pgrig's own (settings, catalog lookups), as text.
    pub fn query(&mut self, sql: &str) -> Result<Rows, StudyError> {
        match self.db.as_mut() {
            Some(db) => db.query(sql),
            None => Err(StudyError::Other("the query session was lost".into())),
        }
    }

    /// `SET name = 'value'` for this session.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), StudyError> {
        self.query(&format!("SET {name} = {}", lit(value)))
            .map(drop)
    }

    /// Runs `sql` once (as it is, the caller adds any EXPLAIN) and measures it.
    pub fn execute(&mut self, sql: &str, explained: bool, stop: &StopHandle) -> Execution {
        let (Some((rt, conn)), Some(token)) =
            (self.db.as_mut().and_then(Db::parts), self.cancel.clone())
        else {
            return lost("the query session was lost earlier", 0.0);
        };
        let backstop = self.timeout.map(|t| t + BACKSTOP);
        let t0 = Instant::now();
        let (result, cancelled) = rt.block_on(async {
            let exchange = exchange(conn, sql, explained);
            tokio::pin!(exchange);
            let mut cancelled = None;
            let mut cancelled_at = Instant::now();
            loop {
                if let Ok(r) = tokio::time::timeout(POLL, &mut exchange).await {
                    return (r, cancelled);
                }
                if cancelled.is_some() && cancelled_at.elapsed() >= ABANDON {
                    // the server does not answer even a cancel request: leave the session
                    return (Err(pgrig_wire::Error::Closed), cancelled);
                }
                if cancelled.is_none() {
                    cancelled_at = Instant::now();
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
                self.db = None;
                lost(&format!("the connection failed: {e}"), client_ms)
            }
        }
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
