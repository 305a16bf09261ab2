//! The replayer: items dispatched in log order at their recorded offsets (divided by the speed
//! factor; with `-j`, time during which every session is idle is skipped), each when the order
//! lets it go ([`order`]), to one task per recorded session, all on one thread of a tokio
//! runtime, so thousands of sessions cost a few kilobytes each and no thread.

mod capture;
mod locks;
mod measure;
mod order;
mod session;
mod shared;
pub mod stats;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::Notify;

use crate::error::Error;
use crate::item::{Item, ItemKind};
use crate::tally::Tallies;
use shared::{Msg, Shared};
pub use shared::{OrderMode, ReplayOptions, Say};
pub use stats::ReplayStats;

/// What ended a replay: its statistics, and the failure that stopped it, if any.
pub struct Outcome {
    pub stats: ReplayStats,
    pub failure: Option<Error>,
    /// Sessions still open at the end (pgreplay: "not all database connections closed").
    pub left_open: usize,
    /// Stopped by Ctrl-C: the statistics cover what ran until then.
    pub interrupted: bool,
    /// `measure`: each normalised statement's replayed latency (less its connection's round
    /// trip) and errors
    pub measured: Option<Tallies>,
    /// the server process ids of the replay's connections
    pub backends: Vec<i32>,
    /// when the replay started
    pub started: SystemTime,
    /// `measure`: the median of the connections' round trips taken out of the latencies, µs
    pub round_trip_us: Option<u64>,
}

/// How far a replay got, for a progress display.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// items consumed (pgreplay's "calls to the server")
    pub items: u64,
    /// how late the latest item was sent
    pub lag: Duration,
}

/// Called about every 200 ms while a replay runs.
pub type Tick = Box<dyn FnMut(Progress)>;

/// How often [`Tick`] is called.
const TICK: Duration = Duration::from_millis(200);

/// Replays the items `next` yields. `say` prints a line on standard output (the
/// behind-schedule notices).
pub fn replay(
    opts: ReplayOptions,
    next: &mut dyn FnMut() -> Result<Option<Item>, Error>,
    say: shared::Say,
) -> Result<Outcome, Error> {
    replay_with_progress(opts, next, say, None)
}

/// [`replay`], with `tick` told the progress every 200 ms.
pub fn replay_with_progress(
    opts: ReplayOptions,
    next: &mut dyn FnMut() -> Result<Option<Item>, Error>,
    say: shared::Say,
    tick: Option<Tick>,
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
        measured: RefCell::new(Tallies::default()),
        busy: Cell::new(0),
        idle: Notify::new(),
        failure: RefCell::new(None),
        interrupted: Cell::new(false),
        failed: Notify::new(),
        say: RefCell::new(say),
        last_late: Cell::new(Duration::ZERO),
        changed: Notify::new(),
        backends: RefCell::new(Vec::new()),
        round_trips: RefCell::new(Vec::new()),
    });
    let started_wall = SystemTime::now();
    let local = tokio::task::LocalSet::new();
    let started = Instant::now();
    let ticker = tick.map(|mut tick| {
        let shared = shared.clone();
        local.spawn_local(async move {
            loop {
                tokio::time::sleep(TICK).await;
                let items = shared.stats.borrow().actions;
                tick(Progress {
                    items,
                    lag: shared.last_late.get(),
                });
            }
        })
    });
    let left_open = local.block_on(&rt, dispatch(shared.clone(), next, speed));
    if let Some(t) = ticker {
        t.abort();
    }
    rt.block_on(local);
    let mut stats = shared.stats.borrow().clone();
    stats.run_time = started.elapsed();
    let failure = shared.failure.borrow_mut().take();
    let measured = shared
        .opts
        .measure
        .then(|| std::mem::take(&mut *shared.measured.borrow_mut()));
    let mut rtts = shared.round_trips.borrow().clone();
    rtts.sort_unstable();
    let backends = shared.backends.borrow().clone();
    Ok(Outcome {
        stats,
        failure,
        left_open,
        interrupted: shared.interrupted.get(),
        measured,
        backends,
        started: started_wall,
        round_trip_us: rtts.get(rtts.len() / 2).copied(),
    })
}

/// How far the dispatcher reads ahead for the next item of a session holding a lock.
const LOOKAHEAD: usize = 100_000;

/// The dispatcher's reading of the log: items read ahead (still in log order) and the
/// recorded time of the first item.
struct Log<'a> {
    next: &'a mut dyn FnMut() -> Result<Option<Item>, Error>,
    ahead: VecDeque<Item>,
    first: Option<i64>,
}

impl Log<'_> {
    fn pop(&mut self) -> Result<Option<Item>, Error> {
        match self.ahead.pop_front() {
            Some(i) => Ok(Some(i)),
            None => (self.next)(),
        }
    }

    /// Takes the next item of session `id` out of the log (reading ahead as far as
    /// [`LOOKAHEAD`] items).
    fn take(&mut self, id: u64) -> Result<Option<Item>, Error> {
        if let Some(p) = self.ahead.iter().position(|i| i.session == id) {
            return Ok(self.ahead.remove(p));
        }
        while self.ahead.len() < LOOKAHEAD {
            match (self.next)()? {
                Some(i) if i.session == id => return Ok(Some(i)),
                Some(i) => self.ahead.push_back(i),
                None => break,
            }
        }
        Ok(None)
    }
}

/// When an item is due: its recorded offset from the first item, divided by the speed, less
/// the time skipped.
fn due_offset(log: &mut Log, item: &Item, speed: f64, skipped: Duration) -> Duration {
    let t0 = *log.first.get_or_insert(item.time.micros());
    let offset = Duration::from_secs_f64(((item.time.micros() - t0).max(0) as f64 / 1e6) / speed);
    offset.saturating_sub(skipped)
}

/// Sends each item to its session when it is due and the order lets it go; returns the
/// sessions left open.
async fn dispatch(
    shared: Rc<Shared>,
    next: &mut dyn FnMut() -> Result<Option<Item>, Error>,
    speed: f64,
) -> usize {
    let start = Instant::now();
    let start_wall = SystemTime::now();
    let mut log = Log {
        next,
        ahead: VecDeque::new(),
        first: None,
    };
    let mut skipped = Duration::ZERO;
    let mut sessions: HashMap<u64, UnboundedSender<Msg>> = HashMap::new();
    let mut order = order::Order::default();
    let mut tasks = Vec::new();
    let watcher = {
        let shared = shared.clone();
        tokio::task::spawn_local(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                shared.interrupt();
            }
        })
    };
    let mut out = Out {
        shared: &shared,
        sessions: &mut sessions,
        tasks: &mut tasks,
        order: &mut order,
    };
    'items: loop {
        if shared.stopping() {
            break;
        }
        let item = match log.pop() {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(e) => {
                shared.fail(e);
                break;
            }
        };
        let offset = due_offset(&mut log, &item, speed, skipped);
        let due = start + offset;
        let jumped = wait_until(&shared, due).await;
        skipped += jumped;
        let due_at = if jumped > Duration::ZERO {
            Instant::now()
        } else {
            due
        };
        if ordered(&item.kind) && shared.opts.order != OrderMode::Sessions {
            loop {
                let gate = out
                    .order
                    .wait(&shared, item.session, item.time.micros(), speed)
                    .await;
                match gate {
                    order::Gate::Go => break,
                    order::Gate::Stop => break 'items,
                    order::Gate::Release(ids) => {
                        for id in ids {
                            let early = match log.take(id) {
                                Ok(Some(i)) => i,
                                Ok(None) => continue,
                                Err(e) => {
                                    shared.fail(e);
                                    break 'items;
                                }
                            };
                            let o = due_offset(&mut log, &early, speed, skipped);
                            let now = Instant::now();
                            if let Err(e) = out.route(early, start_wall + o, now.min(start + o)) {
                                shared.fail(e);
                                break 'items;
                            }
                        }
                    }
                }
            }
        }
        if let Err(e) = out.route(item, start_wall + offset, due_at) {
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

/// Items the order holds back until their session is free: statements and disconnections
/// (a connection is opened at once, a cancel is sent while the statement runs).
fn ordered(kind: &ItemKind) -> bool {
    !matches!(kind, ItemKind::Connect { .. } | ItemKind::Cancel)
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

/// Where the dispatcher's items go: the sessions' tasks, and the order's view of them.
struct Out<'a> {
    shared: &'a Rc<Shared>,
    sessions: &'a mut HashMap<u64, UnboundedSender<Msg>>,
    tasks: &'a mut Vec<tokio::task::JoinHandle<()>>,
    order: &'a mut order::Order,
}

impl Out<'_> {
    fn route(&mut self, item: Item, due: SystemTime, due_at: Instant) -> Result<(), Error> {
        let shared = self.shared;
        let id = item.session;
        shared.busy.set(shared.busy.get() + 1);
        if let ItemKind::Connect { user, database } = item.kind {
            if self.sessions.contains_key(&id) {
                return Err(Error(format!(
                    "Error: connection for session 0x{id:x} already exists"
                )));
            }
            shared.consume(due, due_at, due_at);
            let (tx, rx) = unbounded_channel();
            self.sessions.insert(id, tx);
            let slot = self.order.open(id, &user, &database);
            self.tasks.push(tokio::task::spawn_local(session::run(
                shared.clone(),
                id,
                user,
                database,
                slot,
                rx,
            )));
            return Ok(());
        }
        let Some(tx) = self.sessions.get(&id) else {
            return Err(Error(format!(
                "Error: no connection found for session 0x{id:x}"
            )));
        };
        match item.kind {
            ItemKind::Cancel => {}
            ItemKind::Disconnect => self.order.sent(id, None),
            _ => self.order.sent(id, Some(item.time.micros())),
        }
        let disconnect = matches!(item.kind, ItemKind::Disconnect);
        let ready_at = Instant::now();
        let _ = tx.send(Msg {
            item,
            due,
            due_at,
            ready_at,
        });
        if disconnect {
            self.sessions.remove(&id);
            self.order.close(id);
        }
        Ok(())
    }
}
