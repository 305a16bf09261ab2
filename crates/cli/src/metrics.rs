//! Live OpenMetrics (`--metrics-addr HOST:PORT` of `bench`, `run` and the coordinator of a
//! segmented run): the run's figures so far ([`Live`]: transactions ok/failed/skipped/retried,
//! retries, the latency histogram in fixed buckets, client CPU per host, the run's state),
//! rendered as OpenMetrics text ([`Live::render`]) and served over HTTP ([`Server`], on
//! `crate::metrics_http`: connections served concurrently, each within a deadline). A
//! single-host run feeds it from the engine's progress through [`MetricsTap`]; the coordinator
//! feeds it the merged segments. The final figures come from the run's result, so the last
//! scrape agrees with the report.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, SecondReport, Sink, Tap, Tapped};

use crate::metrics_http::{Exposition, HttpServer};

/// Upper bounds of the latency histogram's buckets, seconds (`+Inf` follows).
pub const BOUNDS_S: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// `--metrics-linger`'s default, seconds: one scrape interval of a Prometheus left at its default
/// (`scrape_interval: 1m`), so the final figures are scraped once before the endpoint goes away.
/// The endpoint stops as soon as they have been served, so a scraped run does not wait this long.
pub const DEFAULT_LINGER_S: u32 = 60;

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// connecting, setting up, waiting for segments
    Starting,
    Running,
    Finished,
    Interrupted,
    /// a segment stopped reporting or clients aborted: the figures are not the whole run
    Incomplete,
}

const STATES: [(RunState, &str); 5] = [
    (RunState::Starting, "starting"),
    (RunState::Running, "running"),
    (RunState::Finished, "finished"),
    (RunState::Interrupted, "interrupted"),
    (RunState::Incomplete, "incomplete"),
];

/// The figures of a run so far (cumulative).
#[derive(Clone, Debug)]
pub struct Figures {
    pub state: RunState,
    pub ok: u64,
    pub failed: u64,
    pub skipped: u64,
    /// transactions retried at least once
    pub retried: u64,
    pub retries: u64,
    /// per bucket of [`BOUNDS_S`] and `+Inf`, not cumulative
    pub buckets: [u64; BOUNDS_S.len() + 1],
    pub latency_sum_s: f64,
    /// client CPU per client host
    pub cpu: Vec<HostCpu>,
}

/// One client host's CPU seconds (user + system): `host` is its host name (as it registered, on
/// the coordinator, with its `segment`); `secs` `None` for this process: read when rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCpu {
    pub host: String,
    pub segment: Option<u32>,
    pub secs: Option<f64>,
}

impl Default for Figures {
    fn default() -> Self {
        Figures {
            state: RunState::Starting,
            ok: 0,
            failed: 0,
            skipped: 0,
            retried: 0,
            retries: 0,
            buckets: [0; BOUNDS_S.len() + 1],
            latency_sum_s: 0.0,
            cpu: vec![HostCpu {
                host: host_name(),
                segment: None,
                secs: None,
            }],
        }
    }
}

impl Figures {
    /// Adds the latencies of `h` (µs) to the buckets; the sum is the caller's (exact moments).
    pub fn add_histogram(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            let s = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e6;
            let i = BOUNDS_S
                .iter()
                .position(|&b| s <= b)
                .unwrap_or(BOUNDS_S.len());
            self.buckets[i] = self.buckets[i].saturating_add(v.count_at_value());
        }
    }

    /// The final figures of a finished run (its merged statistics).
    pub fn of_result(r: &RunResult, state: RunState) -> Figures {
        let total = r.stats.total();
        let mut f = Figures {
            state,
            ok: total.counts.ok,
            failed: total.counts.failed(),
            skipped: total.counts.skipped,
            retried: total.counts.retried,
            retries: total.counts.retries,
            latency_sum_s: total.latency.sum / 1e6,
            ..Figures::default()
        };
        f.add_histogram(&r.stats.histogram());
        f
    }
}

/// Keeps every counter of `next` at least where it was in `prev` (OpenMetrics counters never go
/// down for the life of an endpoint): when the final figures of an incomplete run cover fewer
/// segments than were seen live, the counters stay at what was seen.
fn monotonic(prev: &Figures, next: &mut Figures) {
    for (n, p) in [
        (&mut next.ok, prev.ok),
        (&mut next.failed, prev.failed),
        (&mut next.skipped, prev.skipped),
        (&mut next.retried, prev.retried),
        (&mut next.retries, prev.retries),
    ] {
        *n = (*n).max(p);
    }
    for (n, p) in next.buckets.iter_mut().zip(prev.buckets) {
        *n = (*n).max(p);
    }
    next.latency_sum_s = next.latency_sum_s.max(prev.latency_sum_s);
    for p in &prev.cpu {
        let same = |c: &&mut HostCpu| c.host == p.host && c.segment == p.segment;
        match next.cpu.iter_mut().find(same) {
            Some(c) => c.secs = c.secs.zip(p.secs).map(|(a, b)| a.max(b)).or(c.secs),
            None => next.cpu.push(p.clone()),
        }
    }
}

/// The figures shared between the run and the server.
#[derive(Default)]
pub struct Live {
    figures: Mutex<Figures>,
}

impl Live {
    /// Figures starting from `f` (the coordinator's: no client host of its own).
    pub fn new(f: Figures) -> Live {
        Live {
            figures: Mutex::new(f),
        }
    }

    /// Changes the figures; counters never go down ([`monotonic`]).
    pub fn update(&self, f: impl FnOnce(&mut Figures)) {
        if let Ok(mut g) = self.figures.lock() {
            let prev = g.clone();
            f(&mut g);
            monotonic(&prev, &mut g);
        }
    }

    pub fn snapshot(&self) -> Figures {
        self.figures.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// The OpenMetrics text exposition of the figures, ending in `# EOF`.
    pub fn render(&self) -> String {
        render(&self.snapshot())
    }
}

fn render(f: &Figures) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# TYPE pgrig_run_state stateset");
    let _ = writeln!(o, "# HELP pgrig_run_state Where the run is.");
    for (s, name) in STATES {
        let v = u8::from(f.state == s);
        let _ = writeln!(o, "pgrig_run_state{{pgrig_run_state=\"{name}\"}} {v}");
    }
    let _ = writeln!(o, "# TYPE pgrig_transactions counter");
    let _ = writeln!(o, "# HELP pgrig_transactions Transactions by outcome.");
    for (outcome, n) in [("ok", f.ok), ("failed", f.failed), ("skipped", f.skipped)] {
        let _ = writeln!(o, "pgrig_transactions_total{{outcome=\"{outcome}\"}} {n}");
    }
    counter(
        &mut o,
        "pgrig_transactions_retried",
        "Transactions retried at least once.",
        f.retried,
    );
    counter(
        &mut o,
        "pgrig_retries",
        "Retries of transactions.",
        f.retries,
    );
    let name = "pgrig_latency_seconds";
    let _ = writeln!(o, "# TYPE {name} histogram");
    let _ = writeln!(o, "# UNIT {name} seconds");
    let _ = writeln!(o, "# HELP {name} Latency of successful transactions.");
    let mut cum = 0u64;
    for (i, n) in f.buckets.iter().enumerate() {
        cum = cum.saturating_add(*n);
        let le = BOUNDS_S
            .get(i)
            .map_or("+Inf".to_string(), |b| canonical(*b));
        let _ = writeln!(o, "{name}_bucket{{le=\"{le}\"}} {cum}");
    }
    let _ = writeln!(o, "{name}_count {cum}");
    let _ = writeln!(o, "{name}_sum {}", f.latency_sum_s);
    let cpu = "pgrig_client_cpu_seconds";
    let _ = writeln!(o, "# TYPE {cpu} counter");
    let _ = writeln!(o, "# UNIT {cpu} seconds");
    let _ = writeln!(
        o,
        "# HELP {cpu} Client CPU time (user and system) per client host."
    );
    for c in &f.cpu {
        let secs = c.secs.unwrap_or_else(process_cpu_seconds);
        let host = c.host.replace('\\', "\\\\").replace('"', "\\\"");
        let segment = c
            .segment
            .map_or(String::new(), |s| format!(",segment=\"{s}\""));
        let _ = writeln!(o, "{cpu}_total{{host=\"{host}\"{segment}}} {secs}");
    }
    o.push_str("# EOF\n");
    o
}

/// A bucket edge in OpenMetrics' canonical form: a float always shows a fraction (`1.0`, `10.0`,
/// `0.25`), as the reference clients print it, so `le` label values match other exporters'.
pub fn canonical(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

fn counter(o: &mut String, name: &str, help: &str, v: u64) {
    let _ = writeln!(o, "# TYPE {name} counter");
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "{name}_total {v}");
}

/// This process's CPU time (user + system), seconds.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// This host's name (`/proc/sys/kernel/hostname`), `localhost` when unknown.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The server of `--metrics-addr` (`crate::metrics_http`): `GET /metrics` (or `/`) answers the
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
    /// With `opts`: starts serving and returns the sink for the engine (else `inner` as it is).
    pub fn around(
        opts: Option<&crate::args::MetricsOptions>,
        inner: Arc<dyn Sink>,
    ) -> Result<(Option<Metrics>, Arc<dyn Sink>), String> {
        match opts {
            None => Ok((None, inner)),
            Some(o) => Metrics::start(o, inner).map(|(m, s)| (Some(m), s)),
        }
    }

    /// Starts serving at `addr` and says where on stderr.
    pub fn start(
        opts: &crate::args::MetricsOptions,
        inner: Arc<dyn Sink>,
    ) -> Result<(Metrics, Arc<dyn Sink>), String> {
        let live = Arc::new(Live::default());
        let server = Server::start(&opts.addr, live.clone())?;
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
            linger: Duration::from_secs(opts.linger_s as u64),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `le` values as OpenMetrics' canonical numbers: `1.0`, not `1`.
    #[test]
    fn bucket_edges_are_canonical_numbers() {
        let body = render(&Figures::default());
        for le in [
            "0.0001", "0.00025", "0.5", "1.0", "2.5", "5.0", "10.0", "+Inf",
        ] {
            let line = format!("pgrig_latency_seconds_bucket{{le=\"{le}\"}}");
            assert!(body.contains(&line), "{line} missing in\n{body}");
        }
        assert!(!body.contains("le=\"1\""), "{body}");
        assert!(!body.contains("le=\"10\""), "{body}");
    }

    /// Figures replaced by smaller ones (an incomplete run's merge) keep their counters.
    #[test]
    fn counters_never_go_down() {
        let live = Live::new(Figures {
            cpu: vec![HostCpu {
                host: "a".into(),
                segment: Some(1),
                secs: Some(2.0),
            }],
            ..Default::default()
        });
        live.update(|f| {
            f.ok = 34_977;
            f.buckets[3] = 10;
            f.latency_sum_s = 5.0;
        });
        live.update(|f| {
            *f = Figures {
                ok: 33_084,
                state: RunState::Incomplete,
                cpu: Vec::new(),
                ..Default::default()
            }
        });
        let f = live.snapshot();
        assert_eq!((f.ok, f.buckets[3], f.latency_sum_s), (34_977, 10, 5.0));
        assert_eq!(f.state, RunState::Incomplete);
        assert!(f.cpu.iter().any(|c| c.host == "a" && c.secs == Some(2.0)));
    }
}
