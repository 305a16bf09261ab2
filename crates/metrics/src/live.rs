//! A run's live figures so far ([`Live`]: transactions ok/failed/skipped/retried, retries, the
//! latency histogram in fixed buckets, client CPU per host, the run's state) and their
//! OpenMetrics text exposition ([`Live::render`]), served by `crate::serve`. A single-host run
//! feeds them from the engine's progress (`crate::serve::MetricsTap`); the coordinator feeds
//! them the merged segments. The final figures come from the run's result, so the last scrape
//! agrees with the report.

use std::fmt::Write as _;
use std::sync::Mutex;

use hdrhistogram::Histogram;
use pgrig_engine::result::RunResult;

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

pub(crate) fn render(f: &Figures) -> String {
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
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(ru) => {
            let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            tv(ru.user_time()) + tv(ru.system_time())
        }
        Err(_) => 0.0,
    }
}

/// This host's name (`/proc/sys/kernel/hostname`), `localhost` when unknown.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
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

    /// The whole exposition of known figures, byte for byte (the cli's tests check it against
    /// prometheus_client's parser).
    #[test]
    fn exposition_of_known_figures() {
        let mut buckets = [0; BOUNDS_S.len() + 1];
        buckets[0] = 1;
        buckets[3] = 2;
        buckets[16] = 1;
        let f = Figures {
            state: RunState::Running,
            ok: 4,
            failed: 1,
            skipped: 2,
            retried: 1,
            retries: 3,
            buckets,
            latency_sum_s: 12.5,
            cpu: vec![HostCpu {
                host: "h\"x".into(),
                segment: Some(2),
                secs: Some(1.5),
            }],
        };
        let want = "\
# TYPE pgrig_run_state stateset
# HELP pgrig_run_state Where the run is.
pgrig_run_state{pgrig_run_state=\"starting\"} 0
pgrig_run_state{pgrig_run_state=\"running\"} 1
pgrig_run_state{pgrig_run_state=\"finished\"} 0
pgrig_run_state{pgrig_run_state=\"interrupted\"} 0
pgrig_run_state{pgrig_run_state=\"incomplete\"} 0
# TYPE pgrig_transactions counter
# HELP pgrig_transactions Transactions by outcome.
pgrig_transactions_total{outcome=\"ok\"} 4
pgrig_transactions_total{outcome=\"failed\"} 1
pgrig_transactions_total{outcome=\"skipped\"} 2
# TYPE pgrig_transactions_retried counter
# HELP pgrig_transactions_retried Transactions retried at least once.
pgrig_transactions_retried_total 1
# TYPE pgrig_retries counter
# HELP pgrig_retries Retries of transactions.
pgrig_retries_total 3
# TYPE pgrig_latency_seconds histogram
# UNIT pgrig_latency_seconds seconds
# HELP pgrig_latency_seconds Latency of successful transactions.
pgrig_latency_seconds_bucket{le=\"0.0001\"} 1
pgrig_latency_seconds_bucket{le=\"0.00025\"} 1
pgrig_latency_seconds_bucket{le=\"0.0005\"} 1
pgrig_latency_seconds_bucket{le=\"0.001\"} 3
pgrig_latency_seconds_bucket{le=\"0.0025\"} 3
pgrig_latency_seconds_bucket{le=\"0.005\"} 3
pgrig_latency_seconds_bucket{le=\"0.01\"} 3
pgrig_latency_seconds_bucket{le=\"0.025\"} 3
pgrig_latency_seconds_bucket{le=\"0.05\"} 3
pgrig_latency_seconds_bucket{le=\"0.1\"} 3
pgrig_latency_seconds_bucket{le=\"0.25\"} 3
pgrig_latency_seconds_bucket{le=\"0.5\"} 3
pgrig_latency_seconds_bucket{le=\"1.0\"} 3
pgrig_latency_seconds_bucket{le=\"2.5\"} 3
pgrig_latency_seconds_bucket{le=\"5.0\"} 3
pgrig_latency_seconds_bucket{le=\"10.0\"} 3
pgrig_latency_seconds_bucket{le=\"+Inf\"} 4
pgrig_latency_seconds_count 4
pgrig_latency_seconds_sum 12.5
# TYPE pgrig_client_cpu_seconds counter
# UNIT pgrig_client_cpu_seconds seconds
# HELP pgrig_client_cpu_seconds Client CPU time (user and system) per client host.
pgrig_client_cpu_seconds_total{host=\"h\\\"x\",segment=\"2\"} 1.5
# EOF
";
        assert_eq!(Live::new(f).render(), want);
    }

    /// Latencies land in the first bucket whose edge holds them (µs in, seconds out).
    #[test]
    fn histogram_fills_buckets_by_edge() {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for us in [50, 100, 900, 20_000_000] {
            h.record(us).expect("record");
        }
        let mut f = Figures::default();
        f.add_histogram(&h);
        assert_eq!(f.buckets[0], 2, "50 µs and 100 µs: <= 0.0001 s");
        assert_eq!(f.buckets[3], 1, "900 µs: <= 0.001 s");
        assert_eq!(f.buckets[16], 1, "20 s: +Inf");
    }
}
