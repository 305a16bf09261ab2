//! The metrics a chart can put on its y axis (`--metric`): each a name, a label with its unit
//! and how to read it from a run. Defined once here; `choose` and the CLI use this list.

use crate::model::Run;

/// One selectable metric.
#[derive(Clone, Copy)]
pub struct Metric {
    pub key: &'static str,
    pub label: &'static str,
    /// larger is better (for reading the chart; not used to hide anything)
    pub higher_is_better: bool,
    pub get: fn(&Run) -> Option<f64>,
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

fn per_tx(r: &Run, v: Option<f64>) -> Option<f64> {
    (r.ok > 0.0).then_some(v? / r.ok)
}

pub const METRICS: &[Metric] = &[
    Metric {
        key: "tps",
        label: "TPS (transactions/s)",
        higher_is_better: true,
        get: |r| Some(r.tps),
    },
    Metric {
        key: "mean",
        label: "mean latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.mean,
    },
    Metric {
        key: "p50",
        label: "p50 latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.p50,
    },
    Metric {
        key: "p90",
        label: "p90 latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.p90,
    },
    Metric {
        key: "p95",
        label: "p95 latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.p95,
    },
    Metric {
        key: "p99",
        label: "p99 latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.p99,
    },
    Metric {
        key: "p99_9",
        label: "p99.9 latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.p99_9,
    },
    Metric {
        key: "max",
        label: "max latency (ms)",
        higher_is_better: false,
        get: |r| r.latency.max,
    },
    Metric {
        key: "client_cpu_time",
        label: "client CPU time (busiest thread, % of the run)",
        higher_is_better: false,
        get: |r| r.client_cpu.map(|c| 100.0 * c.cpu_time),
    },
    Metric {
        key: "client_run_queue_wait",
        label: "client run-queue wait (longest thread, % of the run)",
        higher_is_better: false,
        get: |r| r.client_cpu.map(|c| 100.0 * c.run_queue_wait),
    },
    Metric {
        key: "server_cpu",
        label: "server CPU (CPUs busy)",
        higher_is_better: false,
        get: |r| r.server.cpus_busy,
    },
    Metric {
        key: "wal_bytes_per_tx",
        label: "WAL bytes per transaction",
        higher_is_better: false,
        get: |r| per_tx(r, r.server.wal_bytes),
    },
    Metric {
        key: "checkpoints",
        label: "checkpoints during the run",
        higher_is_better: false,
        get: |r| r.server.checkpoints,
    },
    Metric {
        key: "retries",
        label: "retries",
        higher_is_better: false,
        get: |r| Some(r.retries),
    },
    Metric {
        key: "failed",
        label: "failed transactions",
        higher_is_better: false,
        get: |r| Some(r.failed),
    },
];

/// The metric named `key`, or an error listing the names (`client_cpu`, the name before CPU
/// time and run-queue wait were told apart, is CPU time).
pub fn find(key: &str) -> Result<Metric, String> {
    let name = if key == "client_cpu" {
        "client_cpu_time"
    } else {
        key
    };
    METRICS
        .iter()
        .find(|m| m.key == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
            format!(
                "unknown --metric \"{key}\" (expected one of: {})",
                names.join(", ")
            )
        })
}
