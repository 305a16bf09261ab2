//! The metrics `compare` knows: names (as `--metric` takes them), aliases, units and which
//! direction is better. Where each value comes from in a stored run is `record`'s business.

use serde::Serialize;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Metric {
    pub name: &'static str,
    #[serde(skip)]
    pub aliases: &'static [&'static str],
    pub unit: Unit,
    pub higher_is_better: bool,
    #[serde(skip)]
    pub about: &'static str,
}

const fn m(
    name: &'static str,
    aliases: &'static [&'static str],
    unit: Unit,
    higher_is_better: bool,
    about: &'static str,
) -> Metric {
    Metric {
        name,
        aliases,
        unit,
        higher_is_better,
        about,
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
    ),
    m(
        "latency_avg",
        &["avg", "mean"],
        Unit::Ms,
        false,
        "mean transaction latency",
    ),
    m(
        "p50",
        &["median"],
        Unit::Ms,
        false,
        "latency, 50th percentile",
    ),
    m("p90", &[], Unit::Ms, false, "latency, 90th percentile"),
    m("p95", &[], Unit::Ms, false, "latency, 95th percentile"),
    m("p99", &[], Unit::Ms, false, "latency, 99th percentile"),
    m(
        "p99_9",
        &["p999"],
        Unit::Ms,
        false,
        "latency, 99.9th percentile",
    ),
    m(
        "latency_max",
        &["max"],
        Unit::Ms,
        false,
        "slowest transaction",
    ),
    m(
        "client_cpu_time",
        &["cpu", "client_cpu"],
        Unit::Fraction,
        false,
        "client CPU time: the busiest client thread's share of the run on a CPU",
    ),
    m(
        "client_run_queue_wait",
        &["wait", "run_queue_wait"],
        Unit::Fraction,
        false,
        "client run-queue wait: the largest share of the run a client thread waited for a CPU",
    ),
    m(
        "server_cpu",
        &[],
        Unit::Cpus,
        false,
        "throwaway server's CPUs busy (collect.server_processes)",
    ),
    m(
        "failures",
        &["failed"],
        Unit::Count,
        false,
        "failed transactions",
    ),
    m(
        "retries",
        &[],
        Unit::Count,
        false,
        "retries of serialization failures and deadlocks",
    ),
    m(
        "wal_bytes_per_tx",
        &["wal"],
        Unit::Bytes,
        false,
        "WAL bytes per successful transaction (collect.server_stats)",
    ),
    m(
        "wal_fpi_per_tx",
        &["fpi"],
        Unit::Count,
        false,
        "full-page images per successful transaction (collect.server_stats)",
    ),
    m(
        "blocks_read_per_tx",
        &["reads"],
        Unit::Count,
        false,
        "blocks read from outside shared buffers per successful transaction (collect.server_stats)",
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
