//! The server's own count of transactions over a run's steady window, as HammerDB takes it:
//! `sum(xact_commit + xact_rollback)` of `pg_stat_database` (every database) sampled when the
//! ramp-up ends and again after the run (once the clients' backends have exited, so their
//! counts are flushed). Backends flush their counts at most once a second, so the first sample
//! may miss up to a second of transactions, which the window then counts. One connection on a
//! thread of its own; a sink wrapper takes the first sample when the ramp-up's last second
//! completes.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pgrig_engine::config::ConnArgs;
use pgrig_engine::document::ServerXacts;
use pgrig_engine::sink::{SecondReport, Tap};

const QUERY: &str = "select sum(xact_commit + xact_rollback)::bigint from pg_stat_database";

/// One sample: when, and the count (`None` when the query failed).
type Sample = (SystemTime, Option<u64>);

/// A connection on its own thread answering sample requests.
pub struct Sampler {
    requests: Mutex<Sender<Sender<Sample>>>,
    first: Mutex<Option<Sample>>,
    at_second: u64,
}

impl Sampler {
    /// Connects to the run's target; `None` when it cannot (the figure is then left out).
    pub fn connect(conn: &ConnArgs, at_second: u64) -> Option<Arc<Sampler>> {
        let config = pgrig_wire::Config::from_args(conn, "pgrig").ok()?;
        let (tx, rx) = channel::<Sender<Sample>>();
        let (ready_tx, ready_rx) = channel();
        std::thread::Builder::new()
            .name("pgrig-xacts".into())
            .spawn(move || {
                let Ok(mut c) = pgrig_wire::Connection::connect_rt(&config) else {
                    let _ = ready_tx.send(false);
                    return;
                };
                let _ = ready_tx.send(true);
                for reply in rx {
                    let value = pgrig_wire::rt::block_on(c.simple_query(QUERY))
                        .ok()
                        .and_then(|r| r.first()?.rows.first()?.get(0)?.parse().ok());
                    let _ = reply.send((SystemTime::now(), value));
                }
            })
            .ok()?;
        ready_rx.recv().ok().filter(|ok| *ok)?;
        Some(Arc::new(Sampler {
            requests: Mutex::new(tx),
            first: Mutex::new(None),
            at_second,
        }))
    }

    fn sample(&self) -> Option<Sample> {
        let (tx, rx) = channel();
        self.requests.lock().ok()?.send(tx).ok()?;
        rx.recv_timeout(Duration::from_secs(10)).ok()
    }

    fn take_first(&self) {
        let s = self.sample();
        if let Ok(mut first) = self.first.lock() {
            *first = s;
        }
    }

    /// After the run (started at `started_unix_s`): the second sample, taken once the count
    /// stops moving (the clients' backends have flushed it on exit), and the difference.
    pub fn finish(&self, started_unix_s: Option<f64>) -> Option<ServerXacts> {
        let (t0, v0) = (*self.first.lock().ok()?)?;
        let v0 = v0?;
        let mut last = self.sample()?;
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(100));
            let next = self.sample()?;
            let settled = next.1 == last.1;
            last = next;
            if settled {
                break;
            }
        }
        let (t1, v1) = (last.0, last.1?);
        let unix = |t: SystemTime| t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs_f64());
        let start = started_unix_s?;
        Some(ServerXacts {
            from_s: (unix(t0)? - start).max(0.0),
            to_s: unix(t1)? - start,
            // (this connection's own few sampling queries are in it, as in HammerDB's)
            transactions: v1.saturating_sub(v0),
        })
    }
}

/// Takes the sampler's first sample when second `at_second` of the run completes (at the start
/// when 0); used as the tap of a [`Tapped`](pgrig_engine::sink::Tapped) sink.
pub struct SampleFirst(pub Arc<Sampler>);

impl Tap for SampleFirst {
    fn measuring(&self) {
        if self.0.at_second == 0 {
            self.0.take_first();
        }
    }
    fn second(&self, s: &SecondReport<'_>) {
        if s.second == self.0.at_second {
            self.0.take_first();
        }
    }
}
