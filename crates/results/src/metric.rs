//! The one catalogue of metrics: each a name (as `--metric` of `compare` and `report` takes
//! it), its aliases, unit, which direction is better, what it means, its chart label, and how
//! to read it from a run ([`RunView`]).

use serde::Serialize;

use crate::view::RunView;

/// How a metric's values are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// transactions per second
    Tps,
    Ms,
    /// a fraction shown in percent (0.25 → 25 %)
    Fraction,
    /// CPUs busy (1.0 = one core all the time)
    Cpus,
    Bytes,
    Count,
}

impl Unit {
    /// The suffix after the metric's name in a table header.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Tps | Unit::Count => "",
            Unit::Ms => " ms",
            Unit::Fraction => " %",
            Unit::Cpus => " cpus",
            Unit::Bytes => " B",
        }
    }
}

#[derive(Clone, Copy, Serialize)]
pub struct Metric {
    pub name: &'static str,
    #[serde(skip)]
    pub aliases: &'static [&'static str],
    pub unit: Unit,
    pub higher_is_better: bool,
    #[serde(skip)]
    pub about: &'static str,
    /// a chart axis's title (`p99 latency (ms)`)
    #[serde(skip)]
    pub label: &'static str,
    /// its value in one run, if the run records it
    #[serde(skip)]
    pub get: fn(&RunView) -> Option<f64>,
}

impl PartialEq for Metric {
    fn eq(&self, other: &Metric) -> bool {
        self.name == other.name
    }
}

impl Eq for Metric {}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

const fn m(
    name: &'static str,
    aliases: &'static [&'static str],
    unit: Unit,
    higher_is_better: bool,
    about: &'static str,
    label: &'static str,
    get: fn(&RunView) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        aliases,
        unit,
        higher_is_better,
        about,
        label,
        get,
    }
}

/// `v` per successful transaction.
fn per_tx(r: &RunView, v: Option<f64>) -> Option<f64> {
    let ok = r.transactions.ok?;
    (ok > 0.0).then_some(v? / ok)
}

/// Checkpoints during the run (timed and requested), when the server's statistics were taken.
fn checkpoints(r: &RunView) -> Option<f64> {
    match (r.checkpoints_timed, r.checkpoints_requested) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

/// Every metric, in table order.
pub const METRICS: &[Metric] = &[
    m(
        "tps",
        &[],
        Unit::Tps,
        true,
        "successful transactions per second",
        "TPS (transactions/s)",
        |r| r.tps,
    ),
    m(
        "latency_avg",
        &["avg", "mean"],
        Unit::Ms,
        false,
        "mean transaction latency",
        "mean latency (ms)",
        |r| r.latency_ms.mean,
    ),
    m(
        "p50",
        &["median"],
        Unit::Ms,
        false,
        "latency, 50th percentile",
        "p50 latency (ms)",
        |r| r.latency_ms.p50,
    ),
    m(
        "p90",
        &[],
        Unit::Ms,
        false,
        "latency, 90th percentile",
        "p90 latency (ms)",
        |r| r.latency_ms.p90,
    ),
    m(
        "p95",
        &[],
        Unit::Ms,
        false,
        "latency, 95th percentile",
        "p95 latency (ms)",
        |r| r.latency_ms.p95,
    ),
    m(
        "p99",
        &[],
        Unit::Ms,
        false,
        "latency, 99th percentile",
        "p99 latency (ms)",
        |r| r.latency_ms.p99,
    ),
    m(
        "p99_9",
        &["p999"],
        Unit::Ms,
        false,
        "latency, 99.9th percentile",
        "p99.9 latency (ms)",
        |r| r.latency_ms.p99_9,
    ),
    m(
        "latency_max",
        &["max"],
        Unit::Ms,
        false,
        "slowest transaction",
        "max latency (ms)",
        |r| r.latency_ms.max,
    ),
    m(
        "client_cpu_time",
        &["cpu", "client_cpu"],
        Unit::Fraction,
        false,
        "client CPU time: the busiest client thread's share of the run on a CPU",
        "client CPU time (busiest thread, % of the run)",
        |r| r.client_cpu.map(|c| c.cpu_time),
    ),
    m(
        "client_run_queue_wait",
        &["wait", "run_queue_wait"],
        Unit::Fraction,
        false,
        "client run-queue wait: the largest share of the run a client thread waited for a CPU",
        "client run-queue wait (longest thread, % of the run)",
        |r| r.client_cpu.map(|c| c.run_queue_wait),
    ),
    m(
        "server_cpu",
        &[],
        Unit::Cpus,
        false,
        "throwaway server's CPUs busy (collect.server_processes)",
        "server CPU (CPUs busy)",
        |r| r.cpus_busy,
    ),
    m(
        "failures",
        &["failed"],
        Unit::Count,
        false,
        "failed transactions",
        "failed transactions",
        |r| r.transactions.failed,
    ),
    m(
        "retries",
        &[],
        Unit::Count,
        false,
        "retries of serialization failures and deadlocks",
        "retries",
        |r| r.transactions.retries,
    ),
    m(
        "wal_bytes_per_tx",
        &["wal"],
        Unit::Bytes,
        false,
        "WAL bytes per successful transaction (collect.server_stats)",
        "WAL bytes per transaction",
        |r| per_tx(r, r.wal_bytes),
    ),
    m(
        "wal_fpi_per_tx",
        &["fpi"],
        Unit::Count,
        false,
        "full-page images per successful transaction (collect.server_stats)",
        "full-page images per transaction",
        |r| per_tx(r, r.wal_fpi),
    ),
    m(
        "blocks_read_per_tx",
        &["reads"],
        Unit::Count,
        false,
        "blocks read from outside shared buffers per successful transaction (collect.server_stats)",
        "blocks read per transaction",
        |r| per_tx(r, r.blocks_read),
    ),
    m(
        "checkpoints",
        &[],
        Unit::Count,
        false,
        "checkpoints during the run, timed and requested (collect.server_stats)",
        "checkpoints during the run",
        checkpoints,
    ),
];

/// Shown when `--metric` is not given (those the runs record).
pub const DEFAULT: &[&str] = &[
    "tps",
    "latency_avg",
    "p50",
    "p99",
    "client_cpu_time",
    "client_run_queue_wait",
    "server_cpu",
    "failures",
    "wal_bytes_per_tx",
];

/// The metric called `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static Metric> {
    let name = name.trim().to_ascii_lowercase();
    METRICS
        .iter()
        .find(|m| m.name == name || m.aliases.contains(&name.as_str()))
}

/// `--metric` help: one line per metric.
pub fn help() -> String {
    METRICS
        .iter()
        .map(|m| {
            let aliases = if m.aliases.is_empty() {
                String::new()
            } else {
                format!(" (or {})", m.aliases.join(", "))
            };
            format!("  {}{aliases}: {}\n", m.name, m.about)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = METRICS
            .iter()
            .flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied()))
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert!(DEFAULT.iter().all(|d| find(d).is_some()));
        assert_eq!(find("P99").unwrap().name, "p99");
        assert_eq!(find("avg").unwrap().name, "latency_avg");
        assert!(find("tpz").is_none());
    }
}
