//! One recorded session replayed on its own connection: its items in order, each as soon as
//! the previous one is answered (a cancel is sent while the statement before it runs), with
//! pgreplay's counting of calls, results, errors and durations.

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use pgrig_wire::{Backend, Config, ConnArgs, Connection, Notices};
use tokio::sync::mpsc::UnboundedReceiver;

use super::capture;
use super::measure::{self, Measure};
use super::shared::{Msg, Shared, Slot};
use crate::error::Error;
use crate::item::ItemKind;

/// The connection parameters of one session (`-h -p -W -E` and the recorded user/database).
pub(super) fn config(
    shared: &Shared,
    user: &[u8],
    database: &[u8],
) -> Result<Config, pgrig_wire::Error> {
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
    slot: Rc<Slot>,
    mut rx: UnboundedReceiver<Msg>,
) {
    let mut state = connect(&shared, id, &user, &db).await;
    let mut rtt = Duration::ZERO;
    if let Some(State::Open(c, _)) = &mut state {
        slot.pid.set(c.backend_pid());
        shared.backends.borrow_mut().push(c.backend_pid());
        if shared.opts.measure {
            rtt = measure::round_trip(c).await;
            shared
                .round_trips
                .borrow_mut()
                .push(rtt.as_micros().min(u128::from(u64::MAX)) as u64);
        }
    }
    answered(&shared, &slot, None);
    shared.done();
    let Some(st) = state.as_mut() else { return };
    let mut pending: VecDeque<Msg> = VecDeque::new();
    // when the session's last answer arrived: lag before it is the server's
    let mut free_at = Instant::now();
    let mut measure = Measure::default();
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
        shared.consume(msg.due, msg.due_at, free_at.max(msg.ready_at));
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
        let kind = &msg.item.kind;
        let key = if shared.opts.measure {
            measure.key(&shared, kind)
        } else {
            None
        };
        if let Err(e) = statement(&shared, conn, (kind, key, rtt), &mut rx, &mut pending).await {
            shared.fail(e);
            return;
        }
        free_at = Instant::now();
        answered(&shared, &slot, Some(conn));
        shared.done();
    }
}

/// The session is free again (connected, or its statement answered): the dispatcher may
/// send its next item.
fn answered(shared: &Shared, slot: &Slot, conn: Option<&Connection>) {
    slot.busy.set(false);
    slot.running.set(None);
    slot.lock_wait.set(false);
    if let Some(c) = conn {
        slot.in_tx
            .set(c.transaction_status() != pgrig_wire::TransactionStatus::Idle);
    }
    shared.changed.notify_one();
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
    (kind, key, rtt): (&ItemKind, Option<u64>, Duration),
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
    let mut error = None;
    let outcome = {
        let first_error = key.is_some().then_some(&mut error);
        let fut = results(conn, prepare, readies, copy_sync, first_error);
        tokio::pin!(fut);
        loop {
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
        }
    };
    let (n, errors) = outcome.map_err(|e| Error(format!("Error reading from database: {e}")))?;
    let took = started.elapsed();
    if let Some(k) = key {
        measure::done(shared, k, took.saturating_sub(rtt), error.as_ref());
    }
    let mut s = shared.stats.borrow_mut();
    s.results += n;
    s.errors += errors;
    s.statement_done(took.max(Duration::ZERO));
    Ok(())
}

/// Reads up to the `readies`-th ReadyForQuery: (results as libpq counts them, of which
/// errors); the first error's SQLSTATE and message into `first_error` when given. COPY FROM
/// STDIN is refused with CopyFail (and, in the extended protocol, a Sync: `copy_sync`, standing
/// for the recorded one, which the server ignores during COPY).
async fn results(
    conn: &mut Connection,
    prepare: bool,
    mut readies: usize,
    copy_sync: bool,
    mut first_error: Option<&mut Option<(String, String)>>,
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
            Backend::Error(f) => {
                n += 1;
                errors += 1;
                if let Some(slot) = first_error.as_deref_mut().filter(|s| s.is_none()) {
                    *slot = Some((f.code().to_string(), f.message().to_string()));
                }
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
