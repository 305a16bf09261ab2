//! Latency distributions as HDR percentile curves: x is the percentile on a "nines" scale (so
//! 99 %, 99.9 % and 99.99 % are evenly spaced — the log scale on the tail), y the latency; one
//! curve per script of a run, or per run when runs are overlaid. Per-statement mean latency as
//! bars.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Scale, Series, Table};
use crate::metric::Metric;
use crate::model::{Distribution, Run};

use super::overlay;

/// The percentiles a curve's table lists (the curve itself keeps every HDR bucket).
const TABLE_PERCENTILES: [f64; 7] = [0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0];

/// The latency at percentile `q`: on a curve from a histogram's buckets, the first point at or
/// above it (HDR's value at a percentile); on a summary's few points, only a point exactly there.
fn at(points: &[(f64, f64)], q: f64) -> Option<f64> {
    let exact = points.iter().find(|p| (p.0 - q).abs() < 1e-9);
    if points.len() < 20 {
        return exact.map(|p| p.1);
    }
    points.iter().find(|p| p.0 >= q - 1e-12).map(|p| p.1)
}

fn curve_chart(
    id: String,
    title: String,
    curves: Vec<(String, &Distribution)>,
    note: Option<String>,
) -> Option<Chart> {
    if curves.is_empty() {
        return None;
    }
    let mut table = Table::new(
        format!("{title}: latency at each percentile (ms)"),
        &["curve", "percentile", "latency ms"],
    );
    let mut series = Vec::new();
    for (name, d) in &curves {
        for q in TABLE_PERCENTILES {
            if let Some(ms) = at(&d.points, q) {
                table.push(q, vec![name.clone(), fmt(100.0 * q), fmt(ms)]);
            }
        }
        series.push(Series {
            name: name.clone(),
            points: d.points.iter().map(|(q, ms)| Pt::new(*q, *ms)).collect(),
        });
    }
    let max = curves
        .iter()
        .flat_map(|c| &c.1.points)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let min = curves
        .iter()
        .flat_map(|c| &c.1.points)
        .map(|p| p.1)
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let log_y = min.is_finite() && max / min > 50.0;
    Some(Chart {
        id,
        desc: format!(
            "{title}: latency (y{}) at each percentile (x, spaced by nines: 90 %, 99 %, 99.9 %, …)",
            if log_y { ", log scale" } else { "" }
        ),
        title,
        kind: Kind::Lines,
        x: Axis {
            scale: Scale::Nines,
            ..Axis::linear("percentile")
        },
        y: Axis {
            scale: if log_y { Scale::Log } else { Scale::Linear },
            ..Axis::linear("latency (ms)")
        },
        series,
        bands: Vec::new(),
        notes: note.into_iter().collect(),
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}

/// One run's distribution, overall and per script.
pub fn single(id: &str, r: &Run) -> Option<Chart> {
    let curves = r
        .distributions
        .iter()
        .map(|d| (d.name.clone(), d))
        .collect();
    curve_chart(
        format!("{id}-latency-percentiles"),
        format!("Latency percentiles: {}", r.id),
        curves,
        None,
    )
}

/// A study: each point's median repetition, the run drawn named in its curve's label (the
/// matrix tables give medians over every repetition; a curve is one run's distribution).
pub fn overlaid(id: &str, runs: &[Run], metric: &Metric) -> Option<Chart> {
    let (reps, note) = overlay(runs, metric);
    let groups = super::by_point(runs);
    let of = |l: &str| groups.iter().find(|g| g.0 == l).map_or(1, |g| g.1.len());
    let curves: Vec<(String, &Distribution)> = reps
        .iter()
        .filter_map(|(l, r)| Some((shown(l, r, of(l)), r.distributions.first()?)))
        .collect();
    let many = reps.iter().any(|(l, _)| of(l) > 1);
    let said = many.then(|| {
        format!(
            "each curve is one run, named: the point's repetition with the median {} \
             (the lower of the two middle ones when even); the other repetitions are not drawn",
            metric.key
        )
    });
    curve_chart(
        format!("{id}-latency-percentiles"),
        "Latency percentiles".into(),
        curves,
        note.into_iter()
            .chain(said)
            .reduce(|a, b| format!("{a}; {b}")),
    )
}

/// A curve's label: the point and which of its `n` repetitions it draws.
fn shown(point: &str, r: &Run, n: usize) -> String {
    if n <= 1 {
        return point.to_string();
    }
    format!("{point} — {} (repetition {} of {n})", r.id, r.repetition)
}

/// Runs given side by side.
pub fn side_by_side(id: &str, runs: &[Run]) -> Option<Chart> {
    let curves = runs
        .iter()
        .filter_map(|r| Some((r.id.clone(), r.distributions.first()?)))
        .collect();
    curve_chart(
        format!("{id}-latency-percentiles"),
        "Latency percentiles".into(),
        curves,
        None,
    )
}

/// Mean latency of each SQL statement of a run.
pub fn statements(id: &str, r: &Run) -> Option<Chart> {
    let stmts: Vec<_> = r
        .statements
        .iter()
        .filter(|s| s.executions > 0.0 && !s.text.trim_start().starts_with('\\'))
        .collect();
    if stmts.is_empty() {
        return None;
    }
    // the 99th percentile beside the mean when every statement has one
    let p99 = stmts.iter().all(|s| s.p99_ms.is_some());
    let columns: &[&str] = if p99 {
        &["statement", "script", "executions", "mean ms", "p99 ms"]
    } else {
        &["statement", "script", "executions", "mean ms"]
    };
    let what = if p99 { "latency" } else { "mean latency" };
    let mut table = Table::new(format!("{}: {what} per statement", r.id), columns);
    for (i, s) in stmts.iter().enumerate() {
        let mut row = vec![
            s.text.clone(),
            s.script.clone(),
            fmt(s.executions),
            fmt(s.mean_ms),
        ];
        if let Some(v) = s.p99_ms.filter(|_| p99) {
            row.push(fmt(v));
        }
        table.push(i as f64, row);
    }
    let mut series = vec![Series {
        name: "mean".into(),
        points: stmts
            .iter()
            .enumerate()
            .map(|(i, s)| Pt::new(i as f64, s.mean_ms))
            .collect(),
    }];
    if p99 {
        series.push(Series {
            name: "p99".into(),
            points: stmts
                .iter()
                .enumerate()
                .map(|(i, s)| Pt::new(i as f64, s.p99_ms.unwrap_or(0.0)))
                .collect(),
        });
    }
    let (title, desc) = if p99 {
        (
            format!("Latency per statement: {}", r.id),
            "mean and 99th-percentile latency of each SQL statement, a pair of bars each",
        )
    } else {
        (
            format!("Mean latency per statement: {}", r.id),
            "mean latency of each SQL statement of the run's scripts, one bar each",
        )
    };
    Some(Chart {
        id: format!("{id}-statements"),
        title,
        desc: desc.into(),
        kind: Kind::Bars,
        x: Axis::categories("statement", stmts.iter().map(|s| s.text.clone()).collect()),
        y: Axis::linear(if p99 {
            "latency (ms)"
        } else {
            "mean latency (ms)"
        }),
        series,
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}
