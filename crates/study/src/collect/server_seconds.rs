//! The server's figures per second of a run — checkpoints done, WAL written, CPU of its processes —
//! sampled on a connection of its own while the run goes on. The engine says when each second of
//! the run is complete (`Sink::second`); [`SecondsSink`] then asks the sampler's thread for a
//! reading (`pg_current_wal_insert_lsn()`, the checkpointer's count of checkpoints, and, when the
//! server runs on this host, its processes' CPU time from /proc). A reading is also taken when the
//! clients are about to connect (the clients wait for it, and it waits for the run's set-up
//! sessions to leave the database) and after the run; [`Readings::fill`] puts the differences
//! into the run document's `series` (the last second also holds what follows it until the run's
//! end, so the seconds add up to the whole run).
//!
//! Each reading also takes the run database's `xact_commit + xact_rollback` and `numbackends`
//! from `pg_stat_database`, for TPC-C's PostgreSQL TPM ([`Readings::server_xacts`]): the
//! counter's move between two readings less pgrig's own readings in between (each reading is one
//! transaction of this session, and on PostgreSQL 15+ it asks `pg_stat_force_next_flush()`, so
//! its count reaches the counter as it ends). After the run the sampler reads again until the
//! database has no more backends than before the clients connected (their counts are flushed
//! when they exit), at most [`SETTLE_TRIES`] × 100 ms.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pgrig_engine::config::ConnArgs;
use pgrig_engine::document::{RunDocument, ServerXacts};
use pgrig_engine::sink::{SecondReport, Sink, Tap, Tapped};

use crate::collect::local_server::{postmaster_of, server_cpu_s};

/// `application_name` of the sampling session (the wait-event sampler leaves it out).
pub const APPLICATION_NAME: &str = "pgrig-server-seconds";

/// The server's cumulative figures at one moment (`None`: not available there).
#[derive(Debug, Clone, Copy)]
struct Reading {
    at: Instant,
    wall: SystemTime,
    wal: Option<u64>,
    checkpoints: Option<u64>,
    cpu_s: Option<f64>,
    /// the run database's `xact_commit + xact_rollback`
    xacts: Option<u64>,
    /// the run database's `numbackends`
    backends: Option<u64>,
}

/// What the thread is asked: a reading for second N (0 = before the run, [`FINAL`] = after it),
/// with a reply when the caller waits.
type Request = (u64, Option<Sender<()>>);
const FINAL: u64 = u64::MAX;
/// A reading after [`FINAL`] while the clients' backends exit.
const SETTLE: u64 = u64::MAX - 1;
/// The reading taken when the sampler connects.
const CONNECTED: u64 = u64::MAX - 2;
/// A reading before the first while the run's set-up sessions exit.
const PRE: u64 = u64::MAX - 3;
/// The most readings taken before the first (5 ms apart).
const PRE_TRIES: usize = 40;
/// The most readings taken after the run for the clients' backends to exit (100 ms apart).
pub const SETTLE_TRIES: usize = 30;

/// The sampler: its thread, and the readings taken so far by second.
pub struct ServerSeconds {
    requests: Mutex<Sender<Request>>,
    readings: Arc<Mutex<Vec<(u64, Reading)>>>,
}

/// The statement of one reading, for the server's version.
fn reading_sql(version: u32) -> String {
    let checkpoints = match version {
        180000.. => "(SELECT num_done FROM pg_stat_checkpointer)",
        170000.. => "(SELECT num_timed + num_requested FROM pg_stat_checkpointer)",
        _ => "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)",
    };
    // PostgreSQL 15+: this reading's own transaction reaches the counters as it ends
    let flush = if version >= 150000 {
        ", pg_stat_force_next_flush()"
    } else {
        ""
    };
    format!(
        "SELECT CASE WHEN pg_is_in_recovery() THEN NULL \
         ELSE pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint END, {checkpoints}::bigint, \
         d.numbackends::bigint, (d.xact_commit + d.xact_rollback)::bigint{flush} \
         FROM pg_stat_database d WHERE d.datname = current_database()"
    )
}

type Conn = pgrig_wire::Connection;

fn query(c: &mut Conn, sql: &str) -> Option<Vec<Option<String>>> {
    let r = pgrig_wire::rt::block_on(c.simple_query(sql)).ok()?;
    Some(r.first()?.rows.first()?.0.clone())
}

/// The server's version and, when it runs on this host, its postmaster.
fn identify(c: &mut Conn) -> Option<(u32, Option<u32>)> {
    let row = query(
        c,
        "SELECT current_setting('server_version_num'), pg_backend_pid(), \
         extract(epoch FROM pg_postmaster_start_time())",
    )?;
    let field = |i: usize| row.get(i).cloned().flatten();
    let version = field(0)?.parse().ok()?;
    let backend: Option<u32> = field(1).and_then(|v| v.parse().ok());
    let started: Option<f64> = field(2).and_then(|v| v.parse().ok());
    Some((version, postmaster_of(backend?, started?)))
}

fn read(c: &mut Conn, sql: &str, pm: Option<u32>) -> Reading {
    let row = query(c, sql).unwrap_or_default();
    let n = |i: usize| row.get(i).cloned().flatten().and_then(|v| v.parse().ok());
    Reading {
        at: Instant::now(),
        wall: SystemTime::now(),
        wal: n(0),
        checkpoints: n(1),
        cpu_s: pm.and_then(server_cpu_s),
        backends: n(2),
        xacts: n(3),
    }
}

/// The reading when the clients are about to connect, once the run's set-up sessions have left
/// the database (no more backends than when the sampler connected, at most [`PRE_TRIES`] × 5
/// ms): a session reports its counts as it exits, and the set-up's must not fall after it.
/// The readings taken while waiting are kept as [`PRE`] (each one transaction, before the
/// window).
fn first_reading(
    c: &mut Conn,
    sql: &str,
    pm: Option<u32>,
    baseline: Option<u64>,
    kept: &Mutex<Vec<(u64, Reading)>>,
) -> Reading {
    let mut r = read(c, sql, pm);
    for _ in 0..PRE_TRIES {
        match (baseline, r.backends) {
            (Some(b), Some(n)) if n > b => {}
            _ => break,
        }
        if let Ok(mut v) = kept.lock() {
            v.push((PRE, r));
        }
        std::thread::sleep(Duration::from_millis(5));
        r = read(c, sql, pm);
    }
    r
}

impl ServerSeconds {
    /// Connects to the run's target; `None` when it cannot (the series then has no server
    /// figures).
    pub fn connect(conn: &ConnArgs) -> Option<Arc<ServerSeconds>> {
        let mut config = pgrig_wire::Config::from_args(conn, APPLICATION_NAME).ok()?;
        config.application_name = Some(APPLICATION_NAME.into());
        let (tx, rx) = channel::<Request>();
        let (ready_tx, ready_rx) = channel();
        let readings = Arc::new(Mutex::new(Vec::new()));
        let kept = readings.clone();
        std::thread::Builder::new()
            .name("pgrig-server-seconds".into())
            .spawn(move || {
                let Some((mut c, (version, pm))) = pgrig_wire::Connection::connect_rt(&config)
                    .ok()
                    .and_then(|mut c| identify(&mut c).map(|v| (c, v)))
                else {
                    let _ = ready_tx.send(false);
                    return;
                };
                let sql = reading_sql(version);
                // before the run: the database's backends then (and this session's counts so
                // far reach the counters now, not inside a window)
                let r = read(&mut c, &sql, pm);
                let baseline = r.backends;
                if let Ok(mut v) = kept.lock() {
                    v.push((CONNECTED, r));
                }
                let _ = ready_tx.send(true);
                for (second, reply) in rx {
                    let r = if second == 0 {
                        first_reading(&mut c, &sql, pm, baseline, &kept)
                    } else {
                        read(&mut c, &sql, pm)
                    };
                    if let Ok(mut v) = kept.lock() {
                        v.push((second, r));
                    }
                    if let Some(reply) = reply {
                        let _ = reply.send(());
                    }
                }
            })
            .ok()?;
        ready_rx.recv().ok().filter(|ok| *ok)?;
        Some(Arc::new(ServerSeconds {
            requests: Mutex::new(tx),
            readings,
        }))
    }

    fn ask(&self, second: u64, reply: Option<Sender<()>>) {
        if let Ok(tx) = self.requests.lock() {
            let _ = tx.send((second, reply));
        }
    }

    /// Asks for a reading and waits for it (at most `wait`).
    fn ask_wait(&self, second: u64, wait: Duration) {
        let (tx, rx) = channel();
        self.ask(second, Some(tx));
        let _ = rx.recv_timeout(wait);
    }

    fn taken(&self) -> Vec<(u64, Reading)> {
        self.readings.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// After the run: the last reading, then readings until the clients' backends have left
    /// the database (see the module's header); every reading taken.
    pub fn finish(&self) -> Readings {
        self.ask_wait(FINAL, Duration::from_secs(10));
        let before = self
            .taken()
            .iter()
            .find(|r| r.0 == CONNECTED)
            .and_then(|r| r.1.backends);
        for _ in 0..SETTLE_TRIES {
            let now = self.taken().last().and_then(|r| r.1.backends);
            match (before, now) {
                (Some(b), Some(n)) if n > b => {}
                _ => break,
            }
            std::thread::sleep(Duration::from_millis(100));
            self.ask_wait(SETTLE, Duration::from_secs(10));
        }
        Readings(self.taken())
    }
}

/// The readings of one run, by second.
#[derive(Debug, Clone, Default)]
pub struct Readings(Vec<(u64, Reading)>);

impl Readings {
    /// The run database's transactions from the reading that closed second `from_second` (0:
    /// when the clients were about to connect) to the last reading after the run, less pgrig's
    /// own readings in between; the times are seconds after `started_unix_s` (the end: the
    /// reading when the run ended). `None` without both readings or their counters.
    pub fn server_xacts(&self, from_second: u64, started_unix_s: f64) -> Option<ServerXacts> {
        let r = &self.0;
        let first = r.iter().position(|x| x.0 == from_second)?;
        let end = r.iter().position(|x| x.0 == FINAL)?;
        let last = r.len() - 1;
        let counted = r[last].1.xacts?.checked_sub(r[first].1.xacts?)?;
        // readings first..last-1 each committed one transaction inside the window
        let own = (last - first) as u64;
        let unix = |t: SystemTime| t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs_f64());
        Some(ServerXacts {
            from_s: (unix(r[first].1.wall)? - started_unix_s).max(0.0),
            to_s: unix(r[end].1.wall)? - started_unix_s,
            transactions: counted.saturating_sub(own),
            server_counted: Some(counted),
            pgrig_readings: Some(own),
        })
    }

    /// Each second's figures into `doc.series`.
    pub fn fill(&self, doc: &mut RunDocument) {
        let readings = &self.0;
        let n = doc.series.len() as u64;
        // the reading that closes second s (the last second: the one after the run)
        let at = |s: u64| {
            let want = if s == n { FINAL } else { s };
            readings.iter().find(|r| r.0 == want).map(|r| r.1)
        };
        for (i, second) in doc.series.iter_mut().enumerate() {
            let s = i as u64 + 1;
            if let (Some(a), Some(b)) = (at(s - 1), at(s)) {
                set(second, &a, &b);
            }
        }
    }
}

/// One second's figures: the differences between the readings around it.
fn set(s: &mut pgrig_engine::document::Second, a: &Reading, b: &Reading) {
    let diff = |x: Option<u64>, y: Option<u64>| Some(y?.saturating_sub(x?));
    s.wal_bytes = diff(a.wal, b.wal);
    s.checkpoints = diff(a.checkpoints, b.checkpoints);
    let wall = b.at.duration_since(a.at).as_secs_f64();
    s.server_cpu = match (a.cpu_s, b.cpu_s) {
        (Some(x), Some(y)) if wall > 0.0 => Some(((y - x) / wall).max(0.0)),
        _ => None,
    };
}

/// A sink that asks the sampler for a reading when the clients are about to connect and when
/// each second of the run completes, and passes everything on.
pub struct SecondsSink(Arc<ServerSeconds>);

impl SecondsSink {
    /// `inner` with the sampler's requests, or `inner` itself without a sampler.
    pub fn around(inner: Arc<dyn Sink>, sampler: Option<&Arc<ServerSeconds>>) -> Arc<dyn Sink> {
        match sampler {
            Some(s) => Arc::new(Tapped {
                inner,
                tap: SecondsSink(s.clone()),
            }),
            None => inner,
        }
    }
}

impl Tap for SecondsSink {
    fn measuring(&self) {
        // waits for the first reading: the clients connect after it
        self.0.ask_wait(0, Duration::from_secs(2));
    }
    fn second(&self, s: &SecondReport<'_>) {
        self.0.ask(s.second, None);
    }
}
