//! Rounds (consecutive runs without re-initialisation): the metric per round (one line per
//! point, median and min–max of the repetitions), relation sizes per round (heap, indexes, total
//! of the largest tables) and the slowest statements' mean latency per round.

use crate::chart::{fmt, fmt_bytes, Axis, Chart, Kind, Pt, Series, Table};
use crate::flags;
use crate::metric::Metric;
use crate::model::Run;

/// Runs grouped by point label and round: (label, round, runs).
fn grid(runs: &[Run]) -> Vec<(String, u32, Vec<&Run>)> {
    let mut out: Vec<(String, u32, Vec<&Run>)> = Vec::new();
    for r in runs {
        let l = r.point_label();
        match out.iter_mut().find(|g| g.0 == l && g.1 == r.round) {
            Some(g) => g.2.push(r),
            None => out.push((l, r.round, vec![r])),
        }
    }
    out.sort_by_key(|g| g.1);
    out
}

fn lines(
    id: &str,
    title: String,
    y: &str,
    series: Vec<Series>,
    table: Table,
    notes: Vec<String>,
) -> Chart {
    Chart {
        id: id.to_string(),
        desc: format!("{title}: one line per series, x is the round"),
        title,
        kind: Kind::Lines,
        x: Axis::marked(
            "round",
            series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .collect(),
        ),
        y: Axis::linear(y),
        series,
        bands: Vec::new(),
        notes,
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}

fn push(series: &mut Vec<Series>, name: &str, p: Pt) {
    match series.iter_mut().find(|s| s.name == name) {
        Some(s) => s.points.push(p),
        None => series.push(Series {
            name: name.to_string(),
            points: vec![p],
        }),
    }
}

fn metric_chart(id: &str, runs: &[Run], metric: &Metric) -> Chart {
    let mut series = Vec::new();
    let mut notes = Vec::new();
    let mut table = Table::new(
        format!(
            "{} per round (median of the repetitions, min–max)",
            metric.label
        ),
        &["point", "round", "runs", "median", "min", "max", "flags"],
    );
    for (label, round, rs) in grid(runs) {
        let vals: Vec<f64> = rs.iter().filter_map(|r| (metric.get)(r)).collect();
        if vals.is_empty() {
            continue;
        }
        let (med, min, max, _) = flags::spread(&vals);
        let fl = flags::of(&rs);
        if !fl.is_empty() {
            notes.push(format!("{label} round {round}: {}", fl.join(", ")));
        }
        let many = rs.len() > 1;
        push(
            &mut series,
            &label,
            Pt {
                x: round as f64,
                y: med,
                lo: many.then_some(min),
                hi: many.then_some(max),
                flagged: !fl.is_empty(),
            },
        );
        table.push(
            round as f64,
            vec![
                label,
                round.to_string(),
                rs.len().to_string(),
                fmt(med),
                fmt(min),
                fmt(max),
                fl.join(","),
            ],
        );
    }
    lines(
        &format!("{id}-{}-per-round", metric.key),
        format!("{} per round", metric.label),
        metric.label,
        series,
        table,
        notes,
    )
}

fn sizes_chart(id: &str, runs: &[Run]) -> Option<Chart> {
    let rounds = first_rounds(runs);
    let (shown, total_tables, growing) = drawn_tables(&rounds)?;
    let mut series = Vec::new();
    // runs that recorded the parts (main fork, maps, TOAST) get their columns
    let split = rounds.iter().any(|r| !r.relation_parts.is_empty());
    let mut table = match split {
        true => Table::new(
            "relation sizes after each round (first repetition of the first point); heap = main fork + TOAST",
            &["relation", "round", "heap", "main fork", "TOAST", "fsm+vm", "indexes", "total"],
        ),
        false => Table::new(
            "relation sizes after each round (first repetition of the first point)",
            &["relation", "round", "heap", "indexes", "total"],
        ),
    };
    for r in &rounds {
        for (t, s) in &r.relation_sizes {
            let parts = r.relation_parts.iter().find(|p| &p.0 == t).map(|p| &p.1);
            let part = |f: fn(&crate::model::SizeParts) -> f64| {
                parts.map_or(String::new(), |p| fmt_bytes(f(p)))
            };
            let mut row = vec![t.clone(), r.round.to_string(), fmt_bytes(s.heap)];
            if split {
                row.extend([part(|p| p.main), part(|p| p.toast), part(|p| p.maps)]);
            }
            row.extend([fmt_bytes(s.indexes), fmt_bytes(s.total)]);
            table.push(r.round as f64, row);
            if shown.contains(t) {
                let x = r.round as f64;
                let mib = |b: f64| Pt::new(x, b / 1048576.0);
                push(&mut series, &format!("{t} total"), mib(s.total));
                match parts {
                    // TOAST apart: pg_relation_size (the main fork) vs what the table really holds
                    Some(p) => {
                        push(&mut series, &format!("{t} main fork"), mib(p.main));
                        push(&mut series, &format!("{t} TOAST"), mib(p.toast));
                    }
                    None => push(&mut series, &format!("{t} heap"), mib(s.heap)),
                }
                push(&mut series, &format!("{t} indexes"), mib(s.indexes));
            }
        }
    }
    let note = if total_tables > shown.len() {
        vec![format!(
            "the {} {} of {total_tables} relations are drawn; the table lists all",
            shown.len(),
            if growing {
                "fastest-growing"
            } else {
                "largest"
            },
        )]
    } else {
        Vec::new()
    };
    let mut c = lines(
        &format!("{id}-relation-sizes"),
        "Relation sizes per round".into(),
        "size (MiB)",
        series,
        table,
        note,
    );
    let sizes: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .filter(|y| *y > 0.0)
        .collect();
    let (lo, hi) = sizes
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(*y), b.max(*y)));
    if hi / lo > 100.0 {
        c.y.scale = crate::chart::Scale::Log;
        c.y.label = "size (MiB, log scale)".into();
    }
    Some(c)
}

/// The relations drawn: the (up to) three whose total grew most over the rounds (relative to
/// their first size), or the three largest when none grew. Returns them, how many there are,
/// and whether growth chose them.
fn drawn_tables(rounds: &[&Run]) -> Option<(Vec<String>, usize, bool)> {
    let first = rounds.iter().find(|r| !r.relation_sizes.is_empty())?;
    let last = rounds.iter().rev().find(|r| !r.relation_sizes.is_empty())?;
    let mut tables: Vec<(String, f64, f64)> = last
        .relation_sizes
        .iter()
        .map(|(t, s)| {
            let before = first
                .relation_sizes
                .iter()
                .find(|x| &x.0 == t)
                .map(|x| x.1.total)
                .unwrap_or(0.0);
            let growth = if before > 0.0 {
                (s.total - before) / before
            } else {
                0.0
            };
            (t.clone(), growth, s.total)
        })
        .collect();
    let growing = tables.iter().any(|t| t.1 > 0.0);
    tables.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)));
    let n = tables.len();
    Some((
        tables.into_iter().take(3).map(|t| t.0).collect(),
        n,
        growing,
    ))
}

/// The rounds of the first repetition of the first point, in order (sizes and statements are
/// followed through one data set's life).
fn first_rounds(runs: &[Run]) -> Vec<&Run> {
    let first = &runs[0];
    let mut rounds: Vec<&Run> = runs
        .iter()
        .filter(|r| r.point == first.point && r.repetition == first.repetition)
        .collect();
    rounds.sort_by_key(|r| r.round);
    rounds
}

fn statements_chart(id: &str, runs: &[Run]) -> Option<Chart> {
    let rounds = first_rounds(runs);
    let last = rounds.last()?;
    let mut slow: Vec<(String, f64)> = last
        .statements
        .iter()
        .filter(|s| !s.text.trim_start().starts_with('\\') && s.executions > 0.0)
        .map(|s| (s.text.clone(), s.mean_ms))
        .collect();
    if slow.is_empty() {
        return None;
    }
    slow.sort_by(|a, b| b.1.total_cmp(&a.1));
    slow.truncate(6);
    let mut series = Vec::new();
    let mut table = Table::new(
        "mean latency of the slowest statements per round (ms)",
        &["statement", "round", "mean ms", "executions"],
    );
    for r in &rounds {
        for s in r
            .statements
            .iter()
            .filter(|s| slow.iter().any(|x| x.0 == s.text))
        {
            push(&mut series, &s.text, Pt::new(r.round as f64, s.mean_ms));
            table.push(
                r.round as f64,
                vec![
                    s.text.clone(),
                    r.round.to_string(),
                    fmt(s.mean_ms),
                    fmt(s.executions),
                ],
            );
        }
    }
    Some(lines(
        &format!("{id}-statements-per-round"),
        "Statement latency per round".into(),
        "mean latency (ms)",
        series,
        table,
        Vec::new(),
    ))
}

pub fn charts(id: &str, runs: &[Run], metric: &Metric) -> Vec<Chart> {
    let mut out = vec![metric_chart(id, runs, metric)];
    out.extend(sizes_chart(id, runs));
    out.extend(statements_chart(id, runs));
    out
}
