//! The server of `--metrics-addr` ([`Server`]: the figures of `crate::live` over `crate::http`),
//! the tap that feeds it each second of a benchmark ([`MetricsTap`]), and [`Metrics`]: both
//! around one benchmark, finished from the run's result.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, SecondReport, Sink, Tap, Tapped};

use crate::http::{Exposition, HttpServer};
use crate::live::{render, Figures, Live, RunState};

/// The server of `--metrics-addr` (`crate::http`): `GET /metrics` (or `/`) answers the
/// figures.
pub struct Server {
    pub live: Arc<Live>,
    pub addr: SocketAddr,
    http: HttpServer,
}

impl Exposition for Live {
    fn exposition(&self) -> (String, bool) {
        let f = self.snapshot();
        let ended = !matches!(f.state, RunState::Starting | RunState::Running);
        (render(&f), ended)
    }
}

impl Server {
    /// Listens on `addr` (`HOST:PORT`; port 0: any free port) and serves `live`.
    pub fn start(addr: &str, live: Arc<Live>) -> Result<Server, String> {
        let http = HttpServer::start(addr, live.clone())?;
        Ok(Server {
            live,
            addr: http.addr,
            http,
        })
    }

    /// The run is over: the final figures stay served until one scrape has read them or
    /// `linger` has passed, then the server stops (without waiting for any client).
    pub fn finish(mut self, linger: Duration) {
        let state = self.live.snapshot().state;
        if matches!(state, RunState::Starting | RunState::Running) {
            self.live.update(|f| f.state = RunState::Finished);
        }
        self.http.forget_final();
        let until = Instant::now() + linger;
        while Instant::now() < until && !self.http.final_served() {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.http.stop();
    }
}

/// Adds each second of the benchmark (its counts and latency histogram, [`Sink::second`]) to
/// the figures; the tap of the engine's sink when metrics are served.
pub struct MetricsTap {
    pub live: Arc<Live>,
}

impl Tap for MetricsTap {
    fn second(&self, s: &SecondReport<'_>) {
        let c = &s.delta.counts;
        self.live.update(|f| {
            f.state = RunState::Running;
            f.ok += c.ok;
            f.failed += c.failed();
            f.skipped += c.skipped;
            f.retried += c.retried;
            f.retries += c.retries;
            f.latency_sum_s += s.delta.latency.sum / 1e6;
            f.add_histogram(s.histogram);
        });
    }
    fn measuring(&self) {
        self.live.update(|f| f.state = RunState::Running);
    }
}

/// `--metrics-addr` around one benchmark: the server, and the sink the engine reports to.
pub struct Metrics {
    pub server: Server,
    pub linger: Duration,
}

impl Metrics {
    /// With `opts` (`--metrics-addr`'s address and `--metrics-linger`'s seconds): starts serving
    /// and returns the sink for the engine (else `inner` as it is).
    pub fn around(
        opts: Option<(&str, u32)>,
        inner: Arc<dyn Sink>,
    ) -> Result<(Option<Metrics>, Arc<dyn Sink>), String> {
        match opts {
            None => Ok((None, inner)),
            Some((addr, linger_s)) => {
                Metrics::start(addr, linger_s, inner).map(|(m, s)| (Some(m), s))
            }
        }
    }

    /// Starts serving at `addr` and says where through `inner`'s messages; the final figures
    /// wait `linger_s` seconds for a scrape.
    pub fn start(
        addr: &str,
        linger_s: u32,
        inner: Arc<dyn Sink>,
    ) -> Result<(Metrics, Arc<dyn Sink>), String> {
        let live = Arc::new(Live::default());
        let server = Server::start(addr, live.clone())?;
        inner.message(
            Level::Info,
            &format!("serving OpenMetrics on http://{}/metrics", server.addr),
        );
        let sink = Arc::new(Tapped {
            inner,
            tap: MetricsTap { live },
        });
        let m = Metrics {
            server,
            linger: Duration::from_secs(u64::from(linger_s)),
        };
        Ok((m, sink))
    }

    /// The run is over: its final figures from the result, served until scraped or lingered.
    pub fn finish(self, r: Option<&RunResult>) {
        if let Some(r) = r {
            let state = if r.interrupted {
                RunState::Interrupted
            } else if r.aborted_clients > 0 {
                RunState::Incomplete
            } else {
                RunState::Finished
            };
            let f = Figures::of_result(r, state);
            self.server.live.update(|g| *g = f);
        }
        let linger = self.linger;
        self.server.finish(linger);
    }
}
