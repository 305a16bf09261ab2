//! The headline metric against each swept key: x is the key's values (a numeric axis with lines
//! when they are all numbers, bar groups otherwise), one series per combination of the other
//! keys, the median of the repetitions with their min–max whisker, flagged points ringed and
//! named under the chart. A study without a matrix gets its metric per repetition.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::flags;
use crate::metric::Metric;
use crate::model::{label, Run};

use super::by_point;

/// One cell: the runs at one x of one series.
struct Cell<'a> {
    series: String,
    x: String,
    runs: Vec<&'a Run>,
}

fn cells<'a>(runs: &'a [Run], key: &str) -> Vec<Cell<'a>> {
    let mut out: Vec<Cell> = Vec::new();
    for (_, group) in by_point(runs) {
        let r = group[0];
        let others: Vec<_> = r.point.iter().filter(|(k, _)| k != key).cloned().collect();
        let series = if others.is_empty() {
            String::new()
        } else {
            label(&others)
        };
        let x = r.value(key).map(|v| v.text.clone()).unwrap_or_default();
        match out.iter_mut().find(|c| c.series == series && c.x == x) {
            Some(c) => c.runs.extend(group),
            None => out.push(Cell {
                series,
                x,
                runs: group,
            }),
        }
    }
    out
}

/// Median, min, max, CV and flags of one cell's metric.
fn stats(runs: &[&Run], metric: &Metric) -> Option<(f64, f64, f64, f64, Vec<&'static str>)> {
    let vals: Vec<f64> = runs.iter().filter_map(|r| (metric.get)(r)).collect();
    if vals.is_empty() {
        return None;
    }
    let (med, min, max, cv) = flags::spread(&vals);
    Some((med, min, max, cv, flags::of(runs)))
}

fn headers(first: &[&str], metric: &Metric) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|s| s.to_string()).collect();
    h.extend(
        [
            "runs",
            &format!("{} median", metric.key),
            "min",
            "max",
            "cv %",
            "flags",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

/// The chart of `metric` against `key`.
/// The key's values in plan order: (text, number).
fn x_values(runs: &[Run], key: &str) -> Vec<(String, Option<f64>)> {
    let mut xs: Vec<(String, Option<f64>)> = Vec::new();
    for v in runs.iter().filter_map(|r| r.value(key)) {
        if !xs.iter().any(|x| x.0 == v.text) {
            xs.push((v.text.clone(), v.number));
        }
    }
    xs
}

/// A flag note: `isolation=serializable at clients=8: contention`.
fn flag_note(series: &str, key: &str, x: &str, fl: &[&str]) -> String {
    if series.is_empty() {
        format!("{key}={x}: {}", fl.join(", "))
    } else {
        format!("{series} at {key}={x}: {}", fl.join(", "))
    }
}

fn chart(id: &str, runs: &[Run], key: &str, metric: &Metric) -> Chart {
    let cs = cells(runs, key);
    let mut xs = x_values(runs, key);
    let numeric = xs.len() > 1 && xs.iter().all(|x| x.1.is_some());
    if numeric {
        xs.sort_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)));
    }
    let mut series: Vec<Series> = Vec::new();
    let mut table = Table::new(
        format!(
            "{} by {key}: median of the repetitions, min–max, flags",
            metric.label
        ),
        &[],
    );
    table.headers = headers(&["series", key], metric);
    let mut notes = Vec::new();
    for c in &cs {
        let Some((med, min, max, cv, fl)) = stats(&c.runs, metric) else {
            continue;
        };
        let (i, x) = xs
            .iter()
            .enumerate()
            .find(|x| x.1 .0 == c.x)
            .map(|(i, x)| (i, x.1))
            .unwrap_or((0, None));
        let name = if c.series.is_empty() {
            metric.key.to_string()
        } else {
            c.series.clone()
        };
        let px = if numeric { x.unwrap_or(0.0) } else { i as f64 };
        let pt = Pt {
            x: px,
            y: med,
            lo: (c.runs.len() > 1).then_some(min),
            hi: (c.runs.len() > 1).then_some(max),
            flagged: !fl.is_empty(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(pt),
            None => series.push(Series {
                name: name.clone(),
                points: vec![pt],
            }),
        }
        if !fl.is_empty() {
            notes.push(flag_note(&c.series, key, &c.x, &fl));
        }
        table.push(
            px,
            vec![
                name,
                c.x.clone(),
                c.runs.len().to_string(),
                fmt(med),
                fmt(min),
                fmt(max),
                format!("{cv:.1}"),
                fl.join(","),
            ],
        );
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let x = if numeric {
        Axis::marked(key, xs.iter().filter_map(|x| x.1).collect())
    } else {
        Axis::categories(key, xs.iter().map(|x| x.0.clone()).collect())
    };
    finish(id, key, metric, numeric, x, series, notes, table)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    id: &str,
    key: &str,
    metric: &Metric,
    numeric: bool,
    x: Axis,
    series: Vec<Series>,
    notes: Vec<String>,
    table: Table,
) -> Chart {
    Chart {
        id: format!("{id}-{}-by-{}", metric.key, super::slug(key)),
        title: format!("{} by {key}", metric.label),
        desc: format!(
            "{} against {key}, one {} per combination of the other swept keys; whiskers span the repetitions (min to max)",
            metric.label,
            if numeric { "line" } else { "bar" }
        ),
        kind: if numeric { Kind::Lines } else { Kind::Bars },
        x,
        y: Axis::linear(metric.label),
        series,
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}

/// One chart per swept key; without a matrix, the metric per repetition.
pub fn charts(id: &str, runs: &[Run], swept: &[String], metric: &Metric) -> Vec<Chart> {
    if swept.is_empty() {
        let last = runs.iter().map(|r| r.round).max().unwrap_or(1);
        let finals: Vec<Run> = runs.iter().filter(|r| r.round == last).cloned().collect();
        if finals.len() < 2 {
            return Vec::new();
        }
        return per_run(id, &finals, metric);
    }
    swept
        .iter()
        .flat_map(|k| faceted(id, runs, swept, k, metric, &[]))
        .collect()
}

/// More series than this in one chart become small multiples.
pub const MAX_SERIES: usize = 8;

/// The chart of `metric` against `key`; when it would have more than [`MAX_SERIES`] series,
/// small multiples instead: one panel per value of the next swept key (recursively), every
/// panel on the y range of the whole.
fn faceted(
    id: &str,
    runs: &[Run],
    swept: &[String],
    key: &str,
    metric: &Metric,
    used: &[&str],
) -> Vec<Chart> {
    let whole = chart(id, runs, key, metric);
    let facet = swept
        .iter()
        .find(|k| *k != key && !used.contains(&k.as_str()));
    let Some(facet) = facet.filter(|_| whole.series.len() > MAX_SERIES) else {
        return vec![whole];
    };
    let ys: Vec<f64> = whole
        .series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| [Some(p.y), p.lo, p.hi])
        .flatten()
        .collect();
    let span = [
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ];
    let mut used = used.to_vec();
    used.push(facet);
    let mut out = Vec::new();
    for (v, _) in x_values(runs, facet) {
        let sub: Vec<Run> = runs
            .iter()
            .filter(|r| r.value(facet).map(|x| &x.text) == Some(&v))
            .cloned()
            .collect();
        let panel_id = format!("{id}-{}-{}", super::slug(facet), super::slug(&v));
        for mut c in faceted(&panel_id, &sub, swept, key, metric, &used) {
            c.title = format!("{} — {facet}={v}", c.title);
            c.desc = format!(
                "{}; one panel per value of {facet} (small multiples on one y range)",
                c.desc
            );
            c.y.include = span.to_vec();
            out.push(c);
        }
    }
    out
}

/// The metric of each run as a bar (runs given side by side, repetitions of a single point).
pub fn per_run(id: &str, runs: &[Run], metric: &Metric) -> Vec<Chart> {
    let swept = super::swept_keys(runs);
    let mut points = Vec::new();
    let mut table = Table::new(
        format!("{} per run", metric.label),
        &["run", "point", "repetition", metric.key, "flags"],
    );
    let mut notes = Vec::new();
    let mut cats = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let Some(v) = (metric.get)(r) else { continue };
        let fl = flags::of(&[r]);
        let name = if r.point.is_empty() {
            r.id.clone()
        } else {
            format!("{} #{}", super::values_label(r, &swept), r.repetition)
        };
        if !fl.is_empty() {
            notes.push(format!("{name}: {}", fl.join(", ")));
        }
        points.push(Pt {
            flagged: !fl.is_empty(),
            ..Pt::new(i as f64, v)
        });
        cats.push(name);
        table.push(
            i as f64,
            vec![
                r.id.clone(),
                r.point_label(),
                r.repetition.to_string(),
                fmt(v),
                fl.join(","),
            ],
        );
    }
    vec![Chart {
        id: format!("{id}-{}-per-run", metric.key),
        title: format!("{} per run", metric.label),
        desc: format!("{} of each run as a bar", metric.label),
        kind: Kind::Bars,
        x: Axis::categories("run", cats),
        y: Axis::linear(metric.label),
        series: vec![Series {
            name: metric.key.into(),
            points,
        }],
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    }]
}

/// Several studies side by side: categories are the union of their points, one bar series per
/// study (median of the repetitions of the last round, min–max whiskers, flags).
pub fn across(id: &str, studies: &[crate::model::Study], metric: &Metric) -> Option<Chart> {
    let mut cats: Vec<String> = Vec::new();
    for s in studies {
        for (l, _) in by_point(&s.runs) {
            if !cats.contains(&l) {
                cats.push(l);
            }
        }
    }
    let mut table = Table::new(format!("{} per point of each study", metric.label), &[]);
    table.headers = headers(&["study", "point"], metric);
    let mut series = Vec::new();
    let mut notes = Vec::new();
    for s in studies {
        let mut points = Vec::new();
        for (label, runs) in by_point(&s.runs) {
            let Some((med, min, max, cv, fl)) = stats(&runs, metric) else {
                continue;
            };
            let x = cats.iter().position(|c| *c == label).unwrap_or(0) as f64;
            let many = runs.len() > 1;
            points.push(Pt {
                x,
                y: med,
                lo: many.then_some(min),
                hi: many.then_some(max),
                flagged: !fl.is_empty(),
            });
            if !fl.is_empty() {
                notes.push(format!("{} at {label}: {}", s.name, fl.join(", ")));
            }
            table.push(
                x,
                vec![
                    s.name.clone(),
                    label,
                    runs.len().to_string(),
                    fmt(med),
                    fmt(min),
                    fmt(max),
                    format!("{cv:.1}"),
                    fl.join(","),
                ],
            );
        }
        series.push(Series {
            name: s.name.clone(),
            points,
        });
    }
    Some(Chart {
        id: format!("{id}-{}-per-point", metric.key),
        title: format!("{} per point, study by study", metric.label),
        desc: format!(
            "{} at each point, one bar per study; whiskers span the repetitions (min to max)",
            metric.label
        ),
        kind: Kind::Bars,
        x: Axis::categories("point", cats),
        y: Axis::linear(metric.label),
        series,
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}
