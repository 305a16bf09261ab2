//! pgrig's `--metrics-addr HOST:PORT` (and `--metrics-linger SECONDS`) of sysbench's command
//! line (a bundled test's run taps the engine's sink, `run.rs`); for a Lua script's run:
//! the live OpenMetrics endpoint of `bench` and `run` (`pgrig_metrics`), fed each second of the
//! script's run (its events, ignored errors and latencies) as the engine feeds it, and
//! finished when the run ends. The address line goes to standard error, as for `bench`.

use std::sync::Arc;

use pgrig_engine::sink::{Level, Progress, SecondReport, Sink};
use pgrig_engine::stats::{Counts, Moments, Snapshot};
use pgrig_lua::stats::{SecondCounts, SecondFn};

use super::cmdline::CmdLine;
use super::general::Exit;
use crate::metrics::{Metrics, DEFAULT_LINGER_S};

/// `--metrics-addr` and `--metrics-linger` (none without an address).
pub fn options(c: &CmdLine) -> Result<Option<crate::args::MetricsOptions>, Exit> {
    let Some(addr) = c.value("metrics-addr") else {
        return Ok(None);
    };
    let linger_s = match c.value("metrics-linger") {
        None => DEFAULT_LINGER_S,
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| Exit::fatal(format!("--metrics-linger: not a number of seconds: {v}")))?,
    };
    Ok(Some(crate::args::MetricsOptions {
        addr: addr.to_string(),
        linger_s,
    }))
}

/// The endpoint while a script runs.
pub struct Live {
    metrics: Metrics,
    sink: Arc<dyn Sink>,
}

/// Says the endpoint's address (and its errors) on standard error.
struct Stderr;

impl Sink for Stderr {
    fn message(&self, _: Level, text: &str) {
        eprintln!("pgrig: {text}");
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

impl Live {
    /// `--metrics-addr` given: the endpoint, listening (an address it cannot listen on is
    /// sysbench's FATAL line, status 1, before the run).
    pub fn start(c: &CmdLine) -> Result<Option<Live>, Exit> {
        let Some(opts) = options(c)? else {
            return Ok(None);
        };
        let (metrics, sink) =
            Metrics::start(&opts.addr, opts.linger_s, Arc::new(Stderr)).map_err(Exit::fatal)?;
        Ok(Some(Live { metrics, sink }))
    }

    /// What the run tells each second: the second as the engine reports it.
    pub fn each_second(&self) -> Box<SecondFn> {
        let sink = self.sink.clone();
        Box::new(move |second, s: &SecondCounts, histogram| {
            let delta = Snapshot {
                counts: Counts {
                    ok: s.events,
                    retries: s.errors,
                    ..Counts::default()
                },
                latency: Moments {
                    count: s.events,
                    sum: s.latency_sum_ms * 1000.0,
                    ..Moments::default()
                },
                ..Snapshot::default()
            };
            sink.second(&SecondReport {
                second,
                delta: &delta,
                histogram,
            });
        })
    }

    /// The run is over: its figures served until scraped or `--metrics-linger` has passed.
    pub fn finish(self) {
        self.metrics.finish(None);
    }
}
