//! One recorded session replayed on its own connection: its items in order, each as soon as
//! the previous one is answered (a cancel is sent while the statement before it runs), with
//! pgreplay's counting of calls, results, errors and durations.

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use pgrig_wire::{Backend, Config, ConnArgs, Connection, Notices};
use tokio::sync::mpsc::UnboundedReceiver;

use super::capture;
use super::shared::{Msg, Shared};
use crate::error::Error;
use crate::item::ItemKind;

/// The connection parameters of one session (`-h -p -W -E` and the recorded user/database).
fn config(shared: &Shared, user: &[u8], database: &[u8]) -> Result<Config, pgrig_wire::Error> {
    let o = &shared.opts;
    let args = ConnArgs {
        host: o.host.clone(),
        port: o.port.map(|p| p.to_string()),
        user: Some(String::from_utf8_lossy(user).into_owned()),
        dbname: None,
    };
    let mut c = Config::from_args(&args, "pgreplay")?;
    c.dbname = String::from_utf8_lossy(database).into_owned();
    if let Some(p) = &o.password {
        c.password = Some(pgrig_wire::config::Password::new(p.clone()));
    }
    if let Some(e) = &o.encoding {
        c.client_encoding = Some(e.clone());
    }
    Ok(c)
}

enum State {
    Open(Box<Connection>, Instant),
    /// The server refused the connection with FATAL (as it did when recorded, probably).
    Closed(String),
}

/// Runs one session from its Connect (already consumed) to its Disconnect.
pub async fn run(
    shared: Rc<Shared>,
    id: u64,
    user: Vec<u8>,
    db: Vec<u8>,
    mut rx: UnboundedReceiver<Msg>,
) {
    let mut state = connect(&shared, id, &user, &db).await;
    shared.done();
    let Some(st) = state.as_mut() else { return };
    let mut pending: VecDeque<Msg> = VecDeque::new();
    // when the session's last answer arrived: lag before it is the server's
    let mut free_at = Instant::now();
    loop {
        let msg = match pending.pop_front() {
            Some(m) => m,
            None => match rx.recv().await {
                Some(m) => m,
                None => break,
            },
        };
        if shared.stopping() {
            return;
        }
        shared.consume(msg.due, msg.due_at, free_at);
        match &msg.item.kind {
            ItemKind::Disconnect => {
                if let State::Open(conn, since) =
                    std::mem::replace(st, State::Closed(String::new()))
                {
                    {
                        let mut s = shared.stats.borrow_mut();
                        s.session_time += since.elapsed();
                        s.sessions_now -= 1;
                    }
                    conn.close().await;
                }
                shared.done();
                return;
            }
            ItemKind::Cancel => {
                if let State::Open(conn, _) = st {
                    let _ = conn.cancel_token().cancel().await;
                }
                shared.done();
                continue;
            }
            _ => {}
        }
        let conn = match st {
            State::Open(c, _) => c,
            State::Closed(m) => {
                shared.fail(Error(format!(
                    "Connection 0x{id:x} failed with FATAL error: {m}"
                )));
                return;
            }
        };
        if let Err(e) = statement(&shared, conn, &msg.item.kind, &mut rx, &mut pending).await {
            shared.fail(e);
            return;
        }
        free_at = Instant::now();
        shared.done();
    }
}

async fn connect(shared: &Shared, id: u64, user: &[u8], db: &[u8]) -> Option<State> {
    let conn = match config(shared, user, db) {
        Ok(c) => Connection::connect(&c).await,
        Err(e) => Err(e),
    };
    match conn {
        Ok(mut c) => {
            c.set_notices(Notices::Ignore);
            let mut s = shared.stats.borrow_mut();
            s.sessions_total += 1;
            s.sessions_now += 1;
            s.sessions_max = s.sessions_max.max(s.sessions_now);
            Some(State::Open(Box::new(c), Instant::now()))
        }
        Err(e) => match e.db_error().filter(|d| d.severity == "FATAL") {
            Some(d) => Some(State::Closed(d.message.clone())),
            None => {
                shared.fail(Error(format!(
                    "Connection for session 0x{id:x} failed: {e}"
                )));
                None
            }
        },
    }
}

/// Sends one statement and reads its results; a Cancel arriving meanwhile is sent at once,
/// anything else waits in `pending`.
async fn statement(
    shared: &Shared,
    conn: &mut Connection,
    kind: &ItemKind,
    rx: &mut UnboundedReceiver<Msg>,
    pending: &mut VecDeque<Msg>,
) -> Result<(), Error> {
    let prepare = matches!(kind, ItemKind::Prepare { .. });
    let mut readies = 1;
    match kind {
        ItemKind::Wire { messages } => {
            readies = capture::queue(conn, messages);
            if readies == 0 {
                // a batch without Sync (Flush, or a pipeline's start): answers come later
                return conn
                    .send()
                    .await
                    .map_err(|e| Error(format!("Error sending to database: {e}")));
            }
        }
        ItemKind::Execute { statement } => conn.query(statement),
        ItemKind::Prepare { name, statement } => {
            conn.parse(name, statement, 0);
            conn.sync();
        }
        ItemKind::ExecPrepared { name, values } => {
            conn.bind(b"", name, values.iter().map(|v| v.as_deref()));
            conn.execute(b"", 0);
            conn.sync();
        }
        _ => unreachable!("only statements are sent here"),
    }
    let token = conn.cancel_token();
    {
        let mut s = shared.stats.borrow_mut();
        s.statements_now += 1;
        s.statements_max = s.statements_max.max(s.statements_now);
        if prepare {
            s.prepares += 1;
        }
    }
    let started = Instant::now();
    let copy_sync =
        matches!(kind, ItemKind::Wire { messages } if !crate::capture_msg::has_query(messages));
    let fut = results(conn, prepare, readies, copy_sync);
    tokio::pin!(fut);
    let outcome = loop {
        tokio::select! {
            r = &mut fut => break r,
            m = rx.recv(), if pending.is_empty() => match m {
                Some(m) if matches!(m.item.kind, ItemKind::Cancel) => {
                    shared.consume(m.due, m.due_at, m.due_at);
                    let _ = token.cancel().await;
                    shared.done();
                }
                Some(m) => pending.push_back(m),
                None => {}
            },
        }
    };
    let (n, errors) = outcome.map_err(|e| Error(format!("Error reading from database: {e}")))?;
    let mut s = shared.stats.borrow_mut();
    s.results += n;
    s.errors += errors;
    s.statement_done(started.elapsed().max(Duration::ZERO));
    Ok(())
}

/// Reads up to the `readies`-th ReadyForQuery: (results as libpq counts them, of which
/// errors). COPY FROM STDIN is refused with CopyFail (and, in the extended protocol, a Sync:
/// `copy_sync`, standing for the recorded one, which the server ignores during COPY).
async fn results(
    conn: &mut Connection,
    prepare: bool,
    mut readies: usize,
    copy_sync: bool,
) -> Result<(u64, u64), pgrig_wire::Error> {
    conn.send().await?;
    let (mut n, mut errors) = (0u64, 0u64);
    loop {
        match conn.recv().await? {
            Backend::ReadyForQuery(_) => {
                readies -= 1;
                if readies == 0 {
                    break;
                }
            }
            Backend::CommandComplete(_) | Backend::EmptyQueryResponse => n += 1,
            Backend::ParseComplete if prepare => n += 1,
            Backend::Error(_) => {
                n += 1;
                errors += 1;
            }
            Backend::CopyInResponse => {
                conn.copy_fail("COPY is not replayed");
                if copy_sync {
                    // stands for the recorded Sync, which the server ignored while in COPY
                    conn.sync();
                }
                conn.send().await?;
            }
            _ => {}
        }
    }
    Ok((n, errors))
}
