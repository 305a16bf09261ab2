//! Multi-factor answers for a study that sweeps several keys: which knob matters most (main
//! effects, ranked), how the two strongest knobs combine (interaction), and which combination
//! is best (every point ranked).
//!
//! A point's value is the median of its repetitions (last round). A key's main effect at one of
//! its values is the mean of the point values with that value, over every combination of the
//! other keys (min–max of those points as the whisker); the key's effect size is the range of
//! those means. Keys are ranked by effect size, largest first.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::flags;
use crate::metric::Metric;
use crate::model::Run;

use super::by_point;

/// One point: its matrix values, the median of its repetitions, spread and flags.
pub struct PointFigure<'a> {
    pub run: &'a Run,
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub cv: f64,
    pub flags: Vec<&'static str>,
}

/// Every point with the metric (last round), in plan order.
pub fn point_figures<'a>(runs: &'a [Run], metric: &Metric) -> Vec<PointFigure<'a>> {
    by_point(runs)
        .into_iter()
        .filter_map(|(_, group)| {
            let vals: Vec<f64> = group.iter().filter_map(|r| (metric.get)(r)).collect();
            if vals.is_empty() {
                return None;
            }
            let (median, min, max, cv) = flags::spread(&vals);
            Some(PointFigure {
                run: group[0],
                runs: vals.len(),
                median,
                min,
                max,
                cv,
                flags: flags::of(&group),
            })
        })
        .collect()
}

/// One key's main effect: its values (plan order, numbers sorted) with the mean, min and max of
/// the point values at each, and the effect size (range of the means).
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub key: String,
    /// (value, points, mean, min, max)
    pub levels: Vec<(String, usize, f64, f64, f64)>,
    pub size: f64,
}

/// The main effect of every swept key, largest first (ties: the study's key order).
pub fn main_effects(points: &[PointFigure], swept: &[String]) -> Vec<Effect> {
    let mut out: Vec<Effect> = swept
        .iter()
        .map(|key| {
            let levels: Vec<(String, usize, f64, f64, f64)> = values(points, key)
                .into_iter()
                .map(|v| {
                    let ys: Vec<f64> = points
                        .iter()
                        .filter(|p| p.run.value(key).map(|x| &x.text) == Some(&v))
                        .map(|p| p.median)
                        .collect();
                    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
                    let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (v, ys.len(), mean, min, max)
                })
                .collect();
            let means = levels.iter().map(|l| l.2);
            let hi = means.clone().fold(f64::NEG_INFINITY, f64::max);
            let lo = means.fold(f64::INFINITY, f64::min);
            Effect {
                key: key.clone(),
                size: if levels.len() > 1 { hi - lo } else { 0.0 },
                levels,
            }
        })
        .collect();
    out.sort_by(|a, b| b.size.total_cmp(&a.size));
    out
}

/// A key's values among the points: plan order, or ascending when all are numbers.
fn values(points: &[PointFigure], key: &str) -> Vec<String> {
    let mut xs: Vec<(String, Option<f64>)> = Vec::new();
    for v in points.iter().filter_map(|p| p.run.value(key)) {
        if !xs.iter().any(|x| x.0 == v.text) {
            xs.push((v.text.clone(), v.number));
        }
    }
    if xs.iter().all(|x| x.1.is_some()) {
        xs.sort_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)));
    }
    xs.into_iter().map(|x| x.0).collect()
}

/// The main-effects chart: one bar per key=value, keys ranked by effect size.
pub fn effects_chart(id: &str, effects: &[Effect], metric: &Metric, overall: f64) -> Chart {
    let mut cats = Vec::new();
    let mut points = Vec::new();
    let mut table = Table::new(
        format!(
            "{}: mean of the points at each value over every combination of the other keys, min–max; keys by effect size",
            metric.label
        ),
        &["key", "value", "points", "mean", "min", "max", "effect (range of means)"],
    );
    let mut notes = Vec::new();
    for (rank, e) in effects.iter().enumerate() {
        let share = if overall != 0.0 {
            format!(
                " ({:.0} % of the mean over all points)",
                100.0 * e.size / overall.abs()
            )
        } else {
            String::new()
        };
        notes.push(format!(
            "{}. {}: effect {}{share}",
            rank + 1,
            e.key,
            fmt(e.size)
        ));
        for (v, n, mean, min, max) in &e.levels {
            let x = cats.len() as f64;
            cats.push(format!("{}={v}", e.key));
            points.push(Pt {
                lo: (*n > 1).then_some(*min),
                hi: (*n > 1).then_some(*max),
                ..Pt::new(x, *mean)
            });
            table.push(
                x,
                vec![
                    e.key.clone(),
                    v.clone(),
                    n.to_string(),
                    fmt(*mean),
                    fmt(*min),
                    fmt(*max),
                    fmt(e.size),
                ],
            );
        }
    }
    let first = effects.first().map(|e| e.key.as_str()).unwrap_or("");
    Chart {
        id: format!("{id}-{}-effects", metric.key),
        title: format!("What matters most for {}: {first} first", metric.label),
        desc: format!(
            "main effects: {} at each value of each swept key, averaged over every combination of the other keys (whiskers: the lowest and highest of those points); keys ordered by effect size, largest first",
            metric.label
        ),
        kind: Kind::Bars,
        x: Axis::categories("key=value (strongest key first)", cats),
        y: Axis::linear(format!("{} (mean)", metric.label)),
        series: vec![Series {
            name: format!("{} (mean over the other keys)", metric.key),
            points,
        }],
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}

/// How the two strongest keys combine: x the strongest, one series per value of the second,
/// each the mean over the other keys.
pub fn interaction_chart(
    id: &str,
    points: &[PointFigure],
    first: &str,
    second: &str,
    metric: &Metric,
) -> Chart {
    let xs = values(points, first);
    let numeric = xs.iter().all(|x| x.parse::<f64>().is_ok());
    let mut series = Vec::new();
    let mut table = Table::new(
        format!(
            "{}: mean over the other keys at each {first} and {second}",
            metric.label
        ),
        &[second, first, "points", "mean"],
    );
    for s in values(points, second) {
        let mut pts = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let ys: Vec<f64> = points
                .iter()
                .filter(|p| p.run.value(first).map(|v| &v.text) == Some(x))
                .filter(|p| p.run.value(second).map(|v| &v.text) == Some(&s))
                .map(|p| p.median)
                .collect();
            if ys.is_empty() {
                continue;
            }
            let mean = ys.iter().sum::<f64>() / ys.len() as f64;
            let px = if numeric {
                x.parse().unwrap_or(0.0)
            } else {
                i as f64
            };
            pts.push(Pt::new(px, mean));
            table.push(
                px,
                vec![s.clone(), x.clone(), ys.len().to_string(), fmt(mean)],
            );
        }
        series.push(Series {
            name: format!("{second}={s}"),
            points: pts,
        });
    }
    let x = if numeric {
        Axis::marked(first, xs.iter().filter_map(|x| x.parse().ok()).collect())
    } else {
        Axis::categories(first, xs)
    };
    Chart {
        id: format!("{id}-{}-interaction", metric.key),
        title: format!("{} by {first} and {second} (the two strongest keys)", metric.label),
        desc: format!(
            "interaction of the two keys with the largest effects: {} against {first}, one {} per value of {second}, each the mean over the other keys; lines that are not parallel mean the keys interact",
            metric.label,
            if numeric { "line" } else { "bar" }
        ),
        kind: if numeric { Kind::Lines } else { Kind::Bars },
        x,
        y: Axis::linear(format!("{} (mean)", metric.label)),
        series,
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}

/// Every point ranked by the metric, best first: median with its min–max, the keys as columns.
pub fn ranking_chart(id: &str, points: &[PointFigure], swept: &[String], metric: &Metric) -> Chart {
    let mut order: Vec<&PointFigure> = points.iter().collect();
    order.sort_by(|a, b| {
        let c = a.median.total_cmp(&b.median);
        if metric.higher_is_better {
            c.reverse()
        } else {
            c
        }
    });
    let mut headers: Vec<&str> = vec!["rank"];
    headers.extend(swept.iter().map(String::as_str));
    let median = format!("{} median", metric.key);
    headers.extend([median.as_str(), "min", "max", "cv %", "runs", "flags"]);
    let mut table = Table::new(
        format!(
            "every point by {}, best first (median of the repetitions)",
            metric.label
        ),
        &headers,
    );
    let mut cats = Vec::new();
    let mut pts = Vec::new();
    let mut notes = Vec::new();
    for (i, p) in order.iter().enumerate() {
        let x = i as f64;
        let label = super::values_label(p.run, swept);
        cats.push(format!("{}. {label}", i + 1));
        pts.push(Pt {
            lo: (p.runs > 1).then_some(p.min),
            hi: (p.runs > 1).then_some(p.max),
            flagged: !p.flags.is_empty(),
            ..Pt::new(x, p.median)
        });
        if !p.flags.is_empty() {
            notes.push(format!("{}. {label}: {}", i + 1, p.flags.join(", ")));
        }
        let mut row = vec![(i + 1).to_string()];
        row.extend(
            swept
                .iter()
                .map(|k| p.run.value(k).map(|v| v.text.clone()).unwrap_or_default()),
        );
        row.extend([
            fmt(p.median),
            fmt(p.min),
            fmt(p.max),
            format!("{:.1}", p.cv),
            p.runs.to_string(),
            p.flags.join(","),
        ]);
        table.push(x, row);
    }
    Chart {
        id: format!("{id}-{}-ranking", metric.key),
        title: format!("Every point ranked by {}, best first", metric.label),
        desc: format!(
            "{} of each point (median of its repetitions, whiskers min to max), best first; flagged points ringed",
            metric.label
        ),
        kind: Kind::Bars,
        x: Axis::categories(format!("point ({})", swept.join(" · ")), cats),
        y: Axis::linear(metric.label),
        series: vec![Series {
            name: format!("{} (median)", metric.key),
            points: pts,
        }],
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}

/// For a study sweeping two or more keys: the main effects, the interaction of the two
/// strongest keys and the ranking, in that order.
pub fn charts(id: &str, runs: &[Run], swept: &[String], metric: &Metric) -> Vec<Chart> {
    if swept.len() < 2 {
        return Vec::new();
    }
    let points = point_figures(runs, metric);
    if points.len() < 2 {
        return Vec::new();
    }
    let overall = points.iter().map(|p| p.median).sum::<f64>() / points.len() as f64;
    let effects = main_effects(&points, swept);
    let mut out = vec![effects_chart(id, &effects, metric, overall)];
    if swept.len() > 2 {
        // with two keys the matrix charts are the interaction already
        out.push(interaction_chart(
            id,
            &points,
            &effects[0].key,
            &effects[1].key,
            metric,
        ));
    }
    out.push(ranking_chart(id, &points, swept, metric));
    out
}
