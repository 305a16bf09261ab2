//! The replayer: items dispatched at their recorded offsets (divided by the speed factor;
//! with `-j`, time during which every session is idle is skipped) to one task per recorded
//! session, all on one thread of a tokio runtime, so thousands of sessions cost a few
//! kilobytes each and no thread.

mod capture;
mod session;
mod shared;
pub mod stats;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::Notify;

use crate::error::Error;
use crate::item::{Item, ItemKind};
use shared::{Msg, Shared};
pub use shared::{ReplayOptions, Say};
pub use stats::ReplayStats;

/// What ended a replay: its statistics, and the failure that stopped it, if any.
pub struct Outcome {
    pub stats: ReplayStats,
    pub failure: Option<Error>,
    /// Sessions still open at the end (pgreplay: "not all database connections closed").
    pub left_open: usize,
    /// Stopped by Ctrl-C: the statistics cover what ran until then.
    pub interrupted: bool,
}

/// Replays the items `next` yields. `say` prints a line on standard output (the
/// behind-schedule notices).
pub fn replay(
    opts: ReplayOptions,
    next: &mut dyn FnMut() -> Result<Option<Item>, Error>,
    say: shared::Say,
) -> Result<Outcome, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error(format!("Error: cannot start the replay runtime: {e}")))?;
    let speed = if opts.speed > 0.0 { opts.speed } else { 1.0 };
    let shared = Rc::new(Shared {
        opts,
        start: Instant::now(),
        stats: RefCell::new(ReplayStats {
            speed,
            ..ReplayStats::default()
        }),
        busy: Cell::new(0),
        idle: Notify::new(),
        failure: RefCell::new(None),
        interrupted: Cell::new(false),
        failed: Notify::new(),
        say: RefCell::new(say),
    });
    let local = tokio::task::LocalSet::new();
    let started = Instant::now();
    let left_open = local.block_on(&rt, dispatch(shared.clone(), next, speed));
    rt.block_on(local);
    let mut stats = shared.stats.borrow().clone();
    stats.run_time = started.elapsed();
    let failure = shared.failure.borrow_mut().take();
    Ok(Outcome {
        stats,
        failure,
        left_open,
        interrupted: shared.interrupted.get(),
    })
}

/// Sends each item to its session when it is due; returns the sessions left open.
async fn dispatch(
    shared: Rc<Shared>,
    next: &mut dyn FnMut() -> Result<Option<Item>, Error>,
    speed: f64,
) -> usize {
    let start = Instant::now();
    let start_wall = SystemTime::now();
    let mut first: Option<i64> = None;
    let mut skipped = Duration::ZERO;
    let mut sessions: HashMap<u64, UnboundedSender<Msg>> = HashMap::new();
    let mut tasks = Vec::new();
    let watcher = {
        let shared = shared.clone();
        tokio::task::spawn_local(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                shared.interrupt();
            }
        })
    };
    loop {
        if shared.stopping() {
            break;
        }
        let item = match next() {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(e) => {
                shared.fail(e);
                break;
            }
        };
        let t0 = *first.get_or_insert(item.time.micros());
        let offset =
            Duration::from_secs_f64(((item.time.micros() - t0).max(0) as f64 / 1e6) / speed);
        let offset = offset.saturating_sub(skipped);
        let due = start + offset;
        let jumped = wait_until(&shared, due).await;
        skipped += jumped;
        let due_at = if jumped > Duration::ZERO {
            Instant::now()
        } else {
            due
        };
        let due_wall = start_wall + offset;
        if let Err(e) = route(&shared, &mut sessions, &mut tasks, item, due_wall, due_at) {
            shared.fail(e);
            break;
        }
    }
    let open = sessions.len();
    drop(sessions);
    // after Ctrl-C, statements still running a second later are abandoned (their connections
    // closed: the server ends them)
    let grace = Instant::now() + Duration::from_secs(1);
    for mut t in tasks {
        if shared.interrupted.get() {
            if tokio::time::timeout_at(grace.into(), &mut t).await.is_err() {
                t.abort();
            }
        } else {
            let _ = t.await;
        }
    }
    watcher.abort();
    open
}

/// Waits for `due`; with `-j`, stops waiting when every session is idle and returns the time
/// skipped.
async fn wait_until(shared: &Shared, due: Instant) -> Duration {
    loop {
        let now = Instant::now();
        if due <= now || shared.stopping() {
            return Duration::ZERO;
        }
        if shared.opts.jump && shared.busy.get() == 0 {
            return due - now;
        }
        let sleep = tokio::time::sleep_until(due.into());
        if shared.opts.jump {
            tokio::select! {
                _ = sleep => {}
                _ = shared.idle.notified() => {}
                _ = shared.failed.notified() => {}
            }
        } else {
            tokio::select! {
                _ = sleep => {}
                _ = shared.failed.notified() => {}
            }
        }
    }
}

fn route(
    shared: &Rc<Shared>,
    sessions: &mut HashMap<u64, UnboundedSender<Msg>>,
    tasks: &mut Vec<tokio::task::JoinHandle<()>>,
    item: Item,
    due: SystemTime,
    due_at: Instant,
) -> Result<(), Error> {
    let id = item.session;
    shared.busy.set(shared.busy.get() + 1);
    if let ItemKind::Connect { user, database } = item.kind {
        if sessions.contains_key(&id) {
            return Err(Error(format!(
                "Error: connection for session 0x{id:x} already exists"
            )));
        }
        shared.consume(due, due_at, due_at);
        let (tx, rx) = unbounded_channel();
        sessions.insert(id, tx);
        tasks.push(tokio::task::spawn_local(session::run(
            shared.clone(),
            id,
            user,
            database,
            rx,
        )));
        return Ok(());
    }
    let disconnect = matches!(item.kind, ItemKind::Disconnect);
    let Some(tx) = sessions.get(&id) else {
        return Err(Error(format!(
            "Error: no connection found for session 0x{id:x}"
        )));
    };
    let _ = tx.send(Msg { item, due, due_at });
    if disconnect {
        sessions.remove(&id);
    }
    Ok(())
}
