//! The metrics a chart can put on its y axis (`--metric`): the catalogue's metrics
//! (`pgrig_results::metric`: names, aliases, labels, direction — defined once there) that the
//! report's model holds, each read here from a model [`Run`] (which pgbench logs fill too).
//! `choose` and the CLI use this list.

use std::sync::LazyLock;

use pgrig_results::metric as catalogue;

use crate::model::Run;

/// One selectable metric.
#[derive(Clone, Copy)]
pub struct Metric {
    /// the catalogue's name
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

/// How a catalogue metric is read from the model (`None`: the model does not hold it).
fn reader(name: &str) -> Option<fn(&Run) -> Option<f64>> {
    let get: fn(&Run) -> Option<f64> = match name {
        "tps" => |r| Some(r.tps),
        "latency_avg" => |r| r.latency.mean,
        "p50" => |r| r.latency.p50,
        "p90" => |r| r.latency.p90,
        "p95" => |r| r.latency.p95,
        "p99" => |r| r.latency.p99,
        "p99_9" => |r| r.latency.p99_9,
        "latency_max" => |r| r.latency.max,
        "client_cpu_time" => |r| r.client_cpu.map(|c| 100.0 * c.cpu_time),
        "client_run_queue_wait" => |r| r.client_cpu.map(|c| 100.0 * c.run_queue_wait),
        "server_cpu" => |r| r.server.cpus_busy,
        "wal_bytes_per_tx" => |r| per_tx(r, r.server.wal_bytes),
        "checkpoints" => |r| r.server.checkpoints,
        "retries" => |r| Some(r.retries),
        "failures" => |r| Some(r.failed),
        _ => return None,
    };
    Some(get)
}

/// The metrics a report can chart, in the catalogue's order (`tps` first).
pub static METRICS: LazyLock<Vec<Metric>> = LazyLock::new(|| {
    catalogue::METRICS
        .iter()
        .filter_map(|m| {
            Some(Metric {
                key: m.name,
                label: m.label,
                higher_is_better: m.higher_is_better,
                get: reader(m.name)?,
            })
        })
        .collect()
});

/// The metric named `key` or one of its aliases (`mean`, `max`, `failed`; `client_cpu`, the
/// name before CPU time and run-queue wait were told apart, is CPU time), or an error listing
/// the names.
pub fn find(key: &str) -> Result<Metric, String> {
    let name = catalogue::find(key).map(|m| m.name);
    METRICS
        .iter()
        .find(|m| Some(m.key) == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
            format!(
                "unknown --metric \"{key}\" (expected one of: {})",
                names.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_reads_the_catalogues_metrics_and_their_old_report_names() {
        assert_eq!(METRICS[0].key, "tps");
        for (old, new) in [
            ("mean", "latency_avg"),
            ("max", "latency_max"),
            ("failed", "failures"),
        ] {
            assert_eq!(find(old).unwrap().key, new);
        }
        assert_eq!(find("client_cpu").unwrap().key, "client_cpu_time");
        assert!(
            find("wal_fpi_per_tx").is_err(),
            "the model holds no full-page images"
        );
        assert_eq!(METRICS.len(), 15);
    }
}
