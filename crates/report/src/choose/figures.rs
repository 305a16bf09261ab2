//! The other figures a study measured, each on its own chart beside the headline metric's:
//! the client's CPU time and run-queue wait, failures and retries, p99 latency, and the server
//! figures the collectors took (server CPU, WAL per transaction, checkpoints). A figure is
//! drawn when some point has it and it is not zero everywhere; each point's value is the
//! median of its repetitions (last round), with their min–max.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::metric::{self, Metric};
use crate::model::Run;

use super::effects::point_figures;

/// The figures drawn besides the headline, in this order.
const OTHERS: &[&str] = &[
    "p99",
    "client_cpu_time",
    "client_run_queue_wait",
    "failures",
    "retries",
    "server_cpu",
    "wal_bytes_per_tx",
    "checkpoints",
];

/// The figures that are a study's answer when its points differ in them: drawn next to the
/// headline (see [`failures_differ`]) instead of among the other figures.
const FAILURES: &[&str] = &["failures", "retries"];

/// One chart per other figure the runs hold (none for a single point); failures and retries
/// are left out when [`failures_differ`] (the study's section draws them beside the headline).
pub fn charts(id: &str, runs: &[Run], swept: &[String], headline: &Metric) -> Vec<Chart> {
    let promoted = failures_differ(runs);
    OTHERS
        .iter()
        .filter(|&&k| k != headline.key)
        .filter(|k| !(promoted && FAILURES.contains(k)))
        .filter_map(|k| metric::find(k).ok())
        .filter_map(|m| per_point(id, runs, swept, &m))
        .collect()
}

/// Whether the points differ in failures (their medians are not all the same): an isolation
/// study whose answer is who fails, and how often they retry.
pub fn failures_differ(runs: &[Run]) -> bool {
    let Ok(m) = metric::find("failures") else {
        return false;
    };
    let medians: Vec<f64> = point_figures(runs, &m).iter().map(|p| p.median).collect();
    medians.len() > 1 && medians.iter().any(|v| *v != medians[0])
}

/// Failures and retries per point, for the study's own section when [`failures_differ`].
pub fn failure_charts(id: &str, runs: &[Run], swept: &[String]) -> Vec<Chart> {
    if !failures_differ(runs) {
        return Vec::new();
    }
    FAILURES
        .iter()
        .filter_map(|k| metric::find(k).ok())
        .filter_map(|m| per_point(id, runs, swept, &m))
        .collect()
}

fn per_point(id: &str, runs: &[Run], swept: &[String], m: &Metric) -> Option<Chart> {
    let points = point_figures(runs, m);
    if points.len() < 2 || points.iter().all(|p| p.max == 0.0) {
        return None;
    }
    let mut cats = Vec::new();
    let mut pts = Vec::new();
    let mut table = Table::new(
        format!("{} per point: median of the repetitions, min–max", m.label),
        &["point", "runs", "median", "min", "max"],
    );
    for (i, p) in points.iter().enumerate() {
        let label = super::values_label(p.run, swept);
        pts.push(Pt {
            lo: (p.runs > 1).then_some(p.min),
            hi: (p.runs > 1).then_some(p.max),
            ..Pt::new(i as f64, p.median)
        });
        table.push(
            i as f64,
            vec![
                label.clone(),
                p.runs.to_string(),
                fmt(p.median),
                fmt(p.min),
                fmt(p.max),
            ],
        );
        cats.push(label);
    }
    let x_label = if swept.is_empty() {
        "point".to_string()
    } else {
        swept.join(" · ")
    };
    Some(Chart {
        id: format!("{id}-{}-per-point", m.key),
        title: format!("{} per point", m.label),
        desc: format!(
            "{} at each point in plan order (median of the repetitions, whiskers min to max)",
            m.label
        ),
        kind: Kind::Bars,
        x: Axis::categories(x_label, cats),
        y: Axis::linear(m.label),
        series: vec![Series {
            name: m.key.to_string(),
            points: pts,
        }],
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}
