//! A steps study's charts: the metric at each step in the study's step order, each bar
//! labelled with what that step added over the previous one (a waterfall of the gains, the best
//! point of each step when another key is swept), and the metric against the other swept key
//! with one line per step (the insert-tuning post's TPS against server cores, step by step).

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::flags;
use crate::metric::Metric;
use crate::model::Run;

use super::by_point;

/// One point of a step: its other values and the median of its repetitions (min, max, flags).
struct PointFigure {
    rest: String,
    x: Option<(String, Option<f64>)>,
    med: f64,
    min: f64,
    max: f64,
    reps: usize,
    flags: Vec<&'static str>,
}

/// The steps of the runs in step order: (index, name), each once.
pub fn steps_of(runs: &[Run]) -> Vec<(usize, String)> {
    let mut s: Vec<(usize, String)> = runs.iter().filter_map(|r| r.step.clone()).collect();
    s.sort();
    s.dedup();
    s
}

/// The step charts and the swept keys they cover (left out of the per-key matrix charts);
/// nothing for a study without steps.
pub fn charts(
    id: &str,
    runs: &[Run],
    swept: &[String],
    metric: &Metric,
) -> (Vec<Chart>, Vec<String>) {
    let steps = steps_of(runs);
    if steps.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let others: Vec<&String> = swept.iter().filter(|k| *k != "step").collect();
    let other = (others.len() == 1).then(|| others[0].as_str());
    let figures: Vec<Vec<PointFigure>> = steps
        .iter()
        .map(|s| figures(runs, s.0, other, metric))
        .collect();
    let mut charts = vec![waterfall(id, &steps, &figures, metric)];
    let mut covered = vec!["step".to_string()];
    if let Some(key) = other {
        charts.push(by_key(id, key, &steps, &figures, metric));
        covered.push(key.to_string());
    }
    (charts, covered)
}

/// The figures of each point of step `index` (last round), in plan order.
fn figures(runs: &[Run], index: usize, other: Option<&str>, metric: &Metric) -> Vec<PointFigure> {
    let mine: Vec<Run> = runs
        .iter()
        .filter(|r| r.step.as_ref().map(|s| s.0) == Some(index))
        .cloned()
        .collect();
    let mut out = Vec::new();
    for (_, group) in by_point(&mine) {
        let vals: Vec<f64> = group.iter().filter_map(|r| (metric.get)(r)).collect();
        if vals.is_empty() {
            continue;
        }
        let (med, min, max, _) = flags::spread(&vals);
        let r = group[0];
        let rest: Vec<_> = r
            .point
            .iter()
            .filter(|(k, _)| k != "step")
            .cloned()
            .collect();
        out.push(PointFigure {
            rest: crate::model::label(&rest),
            x: other
                .and_then(|k| r.value(k))
                .map(|v| (v.text.clone(), v.number)),
            med,
            min,
            max,
            reps: vals.len(),
            flags: flags::of(&group),
        });
    }
    out
}

/// The best point of a step by the metric's direction.
fn best<'a>(fs: &'a [PointFigure], metric: &Metric) -> Option<&'a PointFigure> {
    let better = |a: &&PointFigure, b: &&PointFigure| match metric.higher_is_better {
        true => a.med.total_cmp(&b.med),
        false => b.med.total_cmp(&a.med),
    };
    fs.iter().max_by(better)
}

/// `+5 400 (+141%)`: the change from `prev` to `cur`.
pub fn gain(prev: f64, cur: f64) -> String {
    let d = cur - prev;
    let sign = if d >= 0.0 { "+" } else { "−" };
    if prev.abs() > 0.0 {
        format!(
            "{sign}{} ({sign}{:.0}%)",
            fmt(d.abs()),
            100.0 * d.abs() / prev.abs()
        )
    } else {
        format!("{sign}{}", fmt(d.abs()))
    }
}

fn waterfall(
    id: &str,
    steps: &[(usize, String)],
    figures: &[Vec<PointFigure>],
    metric: &Metric,
) -> Chart {
    let mut table = Table::new(
        format!(
            "{} at each step (best point of the step), and what the step added",
            metric.label
        ),
        &[
            "#",
            "step",
            "best at",
            "runs",
            &format!("{} median", metric.key),
            "min",
            "max",
            "change",
            "flags",
        ],
    );
    let (mut cats, mut points, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    let mut prev: Option<f64> = None;
    for (i, ((_, name), fs)) in steps.iter().zip(figures).enumerate() {
        let Some(b) = best(fs, metric) else { continue };
        let change = prev.map(|p| gain(p, b.med));
        cats.push(match &change {
            Some(c) => format!("{}. {name} {c}", i + 1),
            None => format!("{}. {name}", i + 1),
        });
        let x = (cats.len() - 1) as f64;
        let many = b.reps > 1;
        points.push(Pt {
            x,
            y: b.med,
            lo: many.then_some(b.min),
            hi: many.then_some(b.max),
            flagged: !b.flags.is_empty(),
        });
        if !b.flags.is_empty() {
            notes.push(format!("step \"{name}\": {}", b.flags.join(", ")));
        }
        table.push(
            x,
            vec![
                (i + 1).to_string(),
                name.clone(),
                b.rest.clone(),
                b.reps.to_string(),
                fmt(b.med),
                fmt(b.min),
                fmt(b.max),
                change.unwrap_or_else(|| "baseline".into()),
                b.flags.join(","),
            ],
        );
        prev = Some(b.med);
    }
    Chart {
        id: format!("{id}-{}-by-step", metric.key),
        title: format!("{} step by step", metric.label),
        desc: format!(
            "{} at each step in order, each step's changes on top of the previous ones; every bar is labelled with what its step added; whiskers span the repetitions (min to max)",
            metric.label
        ),
        kind: Kind::Bars,
        x: Axis::categories("step", cats),
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
    }
}

/// The metric against the other swept key, one line (or bar group) per step in step order.
fn by_key(
    id: &str,
    key: &str,
    steps: &[(usize, String)],
    figures: &[Vec<PointFigure>],
    metric: &Metric,
) -> Chart {
    let mut xs: Vec<(String, Option<f64>)> = Vec::new();
    for f in figures.iter().flatten() {
        if let Some(x) = &f.x {
            if !xs.iter().any(|y| y.0 == x.0) {
                xs.push(x.clone());
            }
        }
    }
    let numeric = xs.len() > 1 && xs.iter().all(|x| x.1.is_some());
    if numeric {
        xs.sort_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)));
    }
    let mut table = Table::new(
        format!(
            "{} by {key}, step by step: median of the repetitions, min–max",
            metric.label
        ),
        &[
            "#",
            "step",
            key,
            "runs",
            &format!("{} median", metric.key),
            "min",
            "max",
            "flags",
        ],
    );
    let mut series = Vec::new();
    for (i, ((_, name), fs)) in steps.iter().zip(figures).enumerate() {
        let mut points = Vec::new();
        for f in fs {
            let Some((xt, xn)) = &f.x else { continue };
            let pos = xs.iter().position(|x| x.0 == *xt).unwrap_or(0);
            let px = if numeric {
                xn.unwrap_or(0.0)
            } else {
                pos as f64
            };
            let many = f.reps > 1;
            points.push(Pt {
                x: px,
                y: f.med,
                lo: many.then_some(f.min),
                hi: many.then_some(f.max),
                flagged: !f.flags.is_empty(),
            });
            table.push(
                px,
                vec![
                    (i + 1).to_string(),
                    name.clone(),
                    xt.clone(),
                    f.reps.to_string(),
                    fmt(f.med),
                    fmt(f.min),
                    fmt(f.max),
                    f.flags.join(","),
                ],
            );
        }
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        series.push(Series {
            name: format!("{}. {name}", i + 1),
            points,
        });
    }
    let x = match numeric {
        true => Axis::marked(key, xs.iter().filter_map(|x| x.1).collect()),
        false => Axis::categories(key, xs.iter().map(|x| x.0.clone()).collect()),
    };
    Chart {
        id: format!("{id}-{}-steps-by-{}", metric.key, super::slug(key)),
        title: format!("{} by {key}, step by step", metric.label),
        desc: format!(
            "{} against {key}, one {} per step in step order; whiskers span the repetitions (min to max)",
            metric.label,
            if numeric { "line" } else { "bar" }
        ),
        kind: if numeric { Kind::Lines } else { Kind::Bars },
        x,
        y: Axis::linear(metric.label),
        series,
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}
