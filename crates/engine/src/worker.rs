//! One worker thread (`-j`): its own `pgrig_wire::rt` executor, its clients as local tasks,
//! thread-local statistics, and a once-a-second snapshot sent to the coordinator.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use pgrig_script::Prng;

use crate::client::{run_client, ClientEnd};
use crate::client_state::Client;
use crate::cpu::thread_reading;
use crate::log::TxLog;
use crate::result::{ClientTally, ThreadCpu, TypeSecond};
use crate::shared::{RunShared, ThreadCtx};
use crate::sink::Level;
use crate::stats::{Snapshot, ThreadStats};

/// Messages from workers to the coordinator.
// One `Tick` per worker thread per second, moved through a channel: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Report {
    /// cumulative snapshot at the end of second `sec` (1-based) of the benchmark
    Tick {
        tid: usize,
        sec: u64,
        snap: Snapshot,
        /// latency histogram of the thread's successful transactions since its last tick
        histogram: Box<hdrhistogram::Histogram<u64>>,
        /// cumulative, per script / transaction type (native workloads; empty otherwise)
        by_type: Vec<TypeSecond>,
        /// the thread's CPU time and run-queue wait since its benchmark start
        cpu: ThreadCpu,
    },
    Done {
        tid: usize,
    },
}

pub(crate) struct WorkerOut {
    pub stats: ThreadStats,
    pub cpu: ThreadCpu,
    pub aborted: u32,
    pub clients: Vec<ClientTally>,
    /// the native programs' own counters, summed over the thread's clients
    pub counters: BTreeMap<String, u64>,
    /// what stopped the thread before the run: an initial connection failure or a log file that
    /// cannot be opened (pgbench exits 1)
    pub connect_error: Option<String>,
}

pub(crate) struct WorkerRngs {
    pub choose: Prng,
    pub throttle: Prng,
    pub sample: Prng,
}

pub(crate) fn run_worker(
    sh: Arc<RunShared>,
    tid: usize,
    mut clients: Vec<Client>,
    rngs: WorkerRngs,
    barrier: Arc<Barrier>,
    connect_failed: Arc<std::sync::atomic::AtomicBool>,
    tx: Sender<Report>,
) -> WorkerOut {
    let counts: Vec<usize> = match &sh.native {
        Some(n) => n.command_counts(),
        None => sh.scripts.iter().map(|s| s.commands.len()).collect(),
    };
    // CPUs that cannot be used, or a log file that cannot be opened, end the run before it
    // starts (exit 1), as in pgbench.
    let pin_error =
        (sh.cfg.client_cpus.as_deref()).and_then(|cpus| crate::cpu::pin_thread(cpus).err());
    let (log, log_error) = match (sh.cfg.log, pin_error) {
        (_, Some(e)) => (None, Some(e)),
        (false, None) => (None, None),
        (true, None) => match TxLog::open(&sh.cfg, sh.start_wall, tid, rngs.sample) {
            Ok(l) => (Some(RefCell::new(l)), None),
            Err(e) => (None, Some(e)),
        },
    };
    let th = Rc::new(ThreadCtx {
        stats: RefCell::new(ThreadStats::new(&counts)),
        choose_rng: RefCell::new(rngs.choose),
        throttle_rng: RefCell::new(rngs.throttle),
        throttle_trigger: Cell::new(0),
        log,
        second_histogram: RefCell::new(crate::stats::new_histogram()),
    });
    pgrig_wire::rt::block_on(async move {
        // Initial connections (not under -C), before everyone starts together.
        let mut connect_error = log_error;
        if !sh.cfg.connect_per_tx && connect_error.is_none() {
            connect_error = connect_all(&sh, &mut clients);
        }
        if connect_error.is_some() {
            connect_failed.store(true, Ordering::SeqCst);
        }
        barrier.wait();
        if connect_failed.load(Ordering::SeqCst) {
            let _ = tx.send(Report::Done { tid });
            return WorkerOut {
                stats: th.stats.replace(ThreadStats::new(&[])),
                cpu: ThreadCpu::default(),
                aborted: 0,
                clients: Vec::new(),
                counters: BTreeMap::new(),
                connect_error,
            };
        }
        let start = sh.mark_bench_start();
        let my_start = Instant::now();
        let cpu0 = thread_reading(my_start);
        th.throttle_trigger.set(sh.now_us());
        let ticker = spawn_ticker(&th, &tx, tid, start, sh.native.is_some(), (my_start, cpu0));
        let forced_end = (sh.cfg.forced_end_s).map(|s| start + std::time::Duration::from_secs(s));
        let (aborted, tallies, counters) = run_clients(&sh, &th, clients, forced_end).await;
        ticker.abort();
        let cpu = thread_reading(my_start).since(&cpu0);
        if let Some(log) = &th.log {
            log.borrow_mut().finish();
        }
        let _ = tx.send(Report::Done { tid });
        WorkerOut {
            stats: th.stats.replace(ThreadStats::new(&[])),
            cpu,
            aborted,
            clients: tallies,
            counters,
            connect_error: None,
        }
    })
}

/// Connects every client; on the first failure, the message and pgbench's error.
fn connect_all(sh: &RunShared, clients: &mut [Client]) -> Option<String> {
    for c in clients.iter_mut() {
        match sh.connect() {
            Ok(conn) => {
                sh.register_cancel(c.id, &conn);
                c.conn = Some(conn)
            }
            Err(e) => {
                sh.msg(Level::Error, &e.to_string());
                return Some(format!("could not create connection for client {}", c.id));
            }
        }
    }
    None
}

/// Once-a-second snapshots for progress lines and the per-second series.
fn spawn_ticker(
    th: &Rc<ThreadCtx>,
    tx: &Sender<Report>,
    tid: usize,
    start: Instant,
    sh_native: bool,
    (my_start, cpu0): (Instant, ThreadCpu),
) -> pgrig_wire::rt::JoinHandle<()> {
    let th = th.clone();
    let tx = tx.clone();
    let native = sh_native;
    pgrig_wire::rt::spawn_local(async move {
        let mut sec = 1u64;
        loop {
            let at = start + std::time::Duration::from_secs(sec);
            pgrig_wire::rt::sleep_until(at).await;
            let snap = th.stats.borrow().total();
            let by_type = if native {
                (th.stats.borrow().scripts.iter())
                    .map(|s| TypeSecond {
                        ok: s.snap.counts.ok,
                        rollbacks: s.snap.counts.rollbacks,
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let histogram = {
                let mut h = th.second_histogram.borrow_mut();
                let out = Box::new(h.clone());
                h.reset();
                out
            };
            let tick = Report::Tick {
                tid,
                sec,
                snap,
                histogram,
                by_type,
                cpu: thread_reading(my_start).since(&cpu0),
            };
            if tx.send(tick).is_err() {
                return;
            }
            sec += 1;
        }
    })
}

/// `fut`'s output, or `None` when `at` comes first (`fut` is then dropped where it stands).
async fn before<F: Future>(fut: F, at: Option<Instant>) -> Option<F::Output> {
    let Some(at) = at else {
        return Some(fut.await);
    };
    let mut fut = std::pin::pin!(fut);
    let mut alarm = std::pin::pin!(pgrig_wire::rt::sleep_until(at));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(v));
        }
        alarm.as_mut().poll(cx).map(|_| None)
    })
    .await
}

/// Runs the thread's clients as local tasks to their ends (or to `forced_end`, sysbench's
/// forced shutdown, which cuts them off where they stand); returns how many aborted, each
/// client's share, and the native programs' counters summed.
async fn run_clients(
    sh: &Arc<RunShared>,
    th: &Rc<ThreadCtx>,
    clients: Vec<Client>,
    forced_end: Option<Instant>,
) -> (u32, Vec<ClientTally>, BTreeMap<String, u64>) {
    let mut handles = Vec::with_capacity(clients.len());
    for mut c in clients {
        let sh = sh.clone();
        let th = th.clone();
        handles.push(pgrig_wire::rt::spawn_local(async move {
            let ended = before(run_client(&sh, &th, &mut c), forced_end).await;
            let (end, unfinished_s) = match ended {
                Some(end) => (end, None),
                None => {
                    sh.forced.store(true, Ordering::SeqCst);
                    // the connection is dropped mid-transaction, as sysbench's exit drops it
                    drop(c.conn.take());
                    let at = c.tx_begin_us.map(|b| (sh.now_us() - b) as f64 / 1e6);
                    (ClientEnd::Finished, at)
                }
            };
            if end == ClientEnd::Aborted && sh.cfg.exit_on_abort {
                sh.stop.store(true, Ordering::SeqCst);
            }
            if let Some(conn) = c.conn.take() {
                conn.close().await;
            }
            let tally = ClientTally {
                id: c.id,
                transactions: c.cnt,
                busy_s: c.busy_us / 1e6,
                unfinished_s,
            };
            let counters = c.program.as_ref().map(|p| p.counters()).unwrap_or_default();
            (end, tally, counters)
        }));
    }
    let mut aborted = 0;
    let mut tallies = Vec::with_capacity(handles.len());
    let mut counters = BTreeMap::new();
    for h in handles {
        let (end, tally, own) = h.await;
        if end != ClientEnd::Finished {
            aborted += 1;
        }
        tallies.push(tally);
        for (name, n) in own {
            *counters.entry(name.to_string()).or_insert(0) += n;
        }
    }
    (aborted, tallies, counters)
}
