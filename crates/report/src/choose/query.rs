//! Query studies: speedup and efficiency against the parallel degree with the ideal line (the
//! figures `pgrig_results::query_summary` derives, carried in `Study::query`), execution time per
//! plan node per point (bars of the nodes' self time), and the plan tree of the last point with
//! each node's inclusive and self time as bars (depth shown by `· ` marks on the axis and in
//! the table).

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::metric::Metric;
use crate::model::{QueryPlan, QueryPoint, Run, Study};

use super::{by_point, representative, slug, MAX_OVERLAY};

/// The series a query point belongs to: the query at the point's other values and target.
fn group(p: &QueryPoint, many: bool) -> String {
    if !many {
        return p.query.clone();
    }
    let mut parts = vec![p.query.clone()];
    if p.rest != "(single point)" {
        parts.push(p.rest.clone());
    }
    if !p.target.is_empty() {
        parts.push(p.target.clone());
    }
    parts.join(" · ")
}

/// The numbers of the speedup and efficiency charts.
fn scaling_table(pts: &[&QueryPoint], many: bool) -> Table {
    let mut table = Table::new(
        "speedup = median client time at degree 0 ÷ at this degree; efficiency = speedup ÷ ideal",
        &[
            "degree",
            "series",
            "median ms",
            "speedup",
            "ideal",
            "efficiency",
        ],
    );
    for p in pts {
        let o = |v: Option<f64>| v.map(fmt).unwrap_or_else(|| "-".into());
        table.push(
            p.degree.unwrap_or(f64::NAN),
            vec![
                o(p.degree),
                group(p, many),
                o(p.median_ms),
                o(p.speedup),
                o(p.ideal),
                o(p.efficiency),
            ],
        );
    }
    table
}

/// The series the points fall into (in order), and whether there is more than one.
fn series_names(pts: &[&QueryPoint]) -> (Vec<String>, bool) {
    let mut all: Vec<String> = pts.iter().map(|p| group(p, true)).collect();
    all.sort();
    all.dedup();
    let many = all.len() > 1;
    let mut names: Vec<String> = Vec::new();
    for p in pts {
        let g = group(p, many);
        if !names.contains(&g) {
            names.push(g);
        }
    }
    (names, many)
}

/// The ideal speedup at each degree (degree + leader), one point per degree.
fn ideal_line(pts: &[&QueryPoint]) -> Vec<(f64, f64)> {
    let mut ideal: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((p.degree?, p.ideal?)))
        .collect();
    ideal.sort_by(|a, b| a.0.total_cmp(&b.0));
    ideal.dedup_by(|a, b| a.0 == b.0);
    ideal
}

/// Speedup and efficiency against `parallel_workers`, each with its ideal line.
pub fn scaling(id: &str, s: &Study) -> Vec<Chart> {
    let pts: Vec<&QueryPoint> = s
        .query
        .iter()
        .filter(|p| p.degree.is_some() && p.speedup.is_some())
        .collect();
    if pts.len() < 2 {
        return Vec::new();
    }
    let (names, many) = series_names(&pts);
    let degrees: Vec<f64> = pts.iter().filter_map(|p| p.degree).collect();
    let ideal = ideal_line(&pts);
    let line = |get: &dyn Fn(&QueryPoint) -> Option<f64>| -> Vec<Series> {
        names
            .iter()
            .map(|n| Series {
                name: n.clone(),
                points: pts
                    .iter()
                    .filter(|p| &group(p, many) == n)
                    .filter_map(|p| Some(Pt::new(p.degree?, get(p)?)))
                    .collect(),
            })
            .collect()
    };
    let table = scaling_table(&pts, many);
    let cores = machine_cores(s);
    let mut speedup = line(&|p| p.speedup);
    let mut notes = Vec::new();
    if let Some(c) = cores {
        flag_above(&mut speedup, c, &mut notes);
    }
    speedup.push(Series {
        name: match cores {
            Some(c) => format!("ideal (degree + leader, at most the {c} cores)"),
            None => "ideal (degree + leader)".into(),
        },
        points: ideal
            .iter()
            .map(|&(d, i)| Pt::new(d, cores.map_or(i, |c| i.min(c as f64))))
            .collect(),
    });
    let mut efficiency = line(&|p| p.efficiency);
    efficiency.push(Series {
        name: "ideal".into(),
        points: ideal.iter().map(|&(d, _)| Pt::new(d, 1.0)).collect(),
    });
    let chart =
        |suffix: &str, title: &str, y: &str, series: Vec<Series>, notes: Vec<String>| Chart {
            id: format!("{id}-{suffix}"),
            title: title.into(),
            desc: format!("{y} of each query against the parallel degree, with the ideal line"),
            kind: Kind::Lines,
            x: Axis::marked("parallel_workers", degrees.clone()),
            y: Axis::linear(y),
            series,
            bands: Vec::new(),
            notes,
            table: table.clone(),
            zoomable: false,
            colors: Vec::new(),
        };
    vec![
        chart(
            "speedup",
            "Speedup against the parallel degree",
            "speedup (×)",
            speedup,
            notes,
        ),
        chart(
            "efficiency",
            "Efficiency against the parallel degree",
            "efficiency (speedup ÷ ideal)",
            efficiency,
            Vec::new(),
        ),
    ]
}

/// The CPU cores of the machine the runs measured on (the fewest any run recorded).
fn machine_cores(s: &Study) -> Option<u32> {
    s.runs
        .iter()
        .flat_map(|r| &r.provenance)
        .filter(|(k, _)| k == "host.cpus")
        .filter_map(|(_, v)| v.parse::<u32>().ok())
        .filter(|&c| c > 0)
        .min()
}

/// A speedup above the machine's cores cannot come from parallelism alone (a slow or noisy
/// serial baseline): such points are ringed and said.
fn flag_above(series: &mut [Series], cores: u32, notes: &mut Vec<String>) {
    for s in series {
        for p in &mut s.points {
            if p.y > cores as f64 * 1.05 {
                p.flagged = true;
                notes.push(format!(
                    "{} at parallel_workers={}: speedup {}× on {cores} cores — more than the cores can give; the serial baseline (degree 0) was likely slowed by noise",
                    s.name,
                    fmt(p.x),
                    fmt(p.y)
                ));
            }
        }
    }
}

/// The names of the queries the runs measured, in order.
fn query_names(runs: &[Run]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for q in runs.iter().flat_map(|r| &r.query) {
        if !names.contains(&q.name) {
            names.push(q.name.clone());
        }
    }
    names
}

fn plan<'a>(r: &'a Run, name: &str) -> Option<&'a QueryPlan> {
    r.query
        .iter()
        .find(|q| q.name == name && !q.nodes.is_empty())
}

fn chart_id(id: &str, what: &str, name: &str, names: usize) -> String {
    match names {
        1 => format!("{id}-{what}"),
        _ => format!("{id}-{what}-{}", slug(name)),
    }
}

/// `parallel_workers=4`: the swept values of a run's point with their keys.
fn point_name(r: &Run, swept: &[String]) -> String {
    let named: Vec<String> = swept
        .iter()
        .filter_map(|k| Some(format!("{k}={}", r.value(k)?.text)))
        .collect();
    match named.is_empty() {
        true => r.point_label(),
        false => named.join(" "),
    }
}

/// Execution time per plan node (self time, summed per node kind and relation) at each point.
pub fn node_times(id: &str, runs: &[Run], metric: &Metric) -> Vec<Chart> {
    let names = query_names(runs);
    let swept = super::swept_keys(runs);
    let mut out = Vec::new();
    for name in &names {
        let mut reps: Vec<&Run> = by_point(runs)
            .iter()
            .map(|(_, g)| representative(g, metric))
            .filter(|r| plan(r, name).is_some())
            .collect();
        if reps.is_empty() {
            continue;
        }
        if reps.len() > MAX_OVERLAY {
            reps = vec![reps[0], reps[reps.len() - 1]];
        }
        let mut labels: Vec<String> = Vec::new();
        let per: Vec<Vec<(String, f64)>> = reps
            .iter()
            .map(|r| {
                let mut acc: Vec<(String, f64)> = Vec::new();
                for n in plan(r, name).map(|p| p.nodes.as_slice()).unwrap_or(&[]) {
                    match acc.iter_mut().find(|a| a.0 == n.label) {
                        Some(a) => a.1 += n.self_ms,
                        None => acc.push((n.label.clone(), n.self_ms)),
                    }
                    if !labels.contains(&n.label) {
                        labels.push(n.label.clone());
                    }
                }
                acc
            })
            .collect();
        let at = |i: usize, l: &str| per[i].iter().find(|a| a.0 == l).map(|a| a.1);
        let point = |r: &Run| point_name(r, &swept);
        let mut table = Table::new("self time per plan node (ms)", &["node"]);
        table.headers.extend(reps.iter().map(|r| point(r)));
        for (x, l) in labels.iter().enumerate() {
            let mut row = vec![l.clone()];
            row.extend((0..reps.len()).map(|i| at(i, l).map(fmt).unwrap_or_else(|| "-".into())));
            table.push(x as f64, row);
        }
        let series = reps
            .iter()
            .enumerate()
            .map(|(i, r)| Series {
                name: point(r),
                points: labels
                    .iter()
                    .enumerate()
                    .filter_map(|(x, l)| Some(Pt::new(x as f64, at(i, l)?)))
                    .collect(),
            })
            .collect();
        out.push(Chart {
            id: chart_id(id, "plan-nodes", name, names.len()),
            title: format!("Execution time per plan node: {name}"),
            desc: "self time of each plan node (EXPLAIN ANALYZE, the representative execution; nodes of one kind on one relation summed) at each point".into(),
            kind: Kind::Bars,
            x: Axis::categories("plan node", labels),
            y: Axis::linear("self time (ms)"),
            series,
            bands: Vec::new(),
            notes: Vec::new(),
            table,
            zoomable: false,
            colors: Vec::new(),
        });
    }
    out
}

/// The plan tree of the last point's representative run, a bar per node.
pub fn plan_trees(id: &str, runs: &[Run], metric: &Metric) -> Vec<Chart> {
    let names = query_names(runs);
    let swept = super::swept_keys(runs);
    let groups = by_point(runs);
    let mut out = Vec::new();
    for name in &names {
        let Some((r, p)) = groups.iter().rev().find_map(|(_, g)| {
            let r = representative(g, metric);
            Some((r, plan(r, name)?))
        }) else {
            continue;
        };
        let at = super::values_label(r, &swept);
        out.push(plan_tree(
            chart_id(id, "plan-tree", name, names.len()),
            &format!("Plan tree: {name} at {at}"),
            &format!("plan of {name} at {at} ({})", r.id),
            p,
        ));
    }
    out
}

/// One executed plan as a chart: a bar per node (depth-first, `· ` marks the depth) of its
/// inclusive and self time, the nodes with rows and loops in its table (the caption adds the
/// median planning time when the executions recorded it).
pub fn plan_tree(id: String, title: &str, caption: &str, p: &QueryPlan) -> Chart {
    let label =
        |n: &crate::model::PlanNode| format!("{}{}", "· ".repeat(n.depth as usize), n.label);
    let planning = pgrig_results::summary::spread(&p.planning_times);
    let caption = match p.planning_times.is_empty() {
        true => caption.to_string(),
        false => format!("{caption}; median planning time {} ms", fmt(planning.0)),
    };
    let mut table = Table::new(
        caption,
        &["node", "rows", "loops", "inclusive ms", "self ms"],
    );
    for (x, n) in p.nodes.iter().enumerate() {
        table.push(
            x as f64,
            vec![
                label(n),
                fmt(n.rows),
                fmt(n.loops),
                fmt(n.inclusive_ms),
                fmt(n.self_ms),
            ],
        );
    }
    let series = |name: &str, get: fn(&crate::model::PlanNode) -> f64| Series {
        name: name.into(),
        points: p
            .nodes
            .iter()
            .enumerate()
            .map(|(x, n)| Pt::new(x as f64, get(n)))
            .collect(),
    };
    Chart {
        id,
        title: title.to_string(),
        desc: "the executed plan depth-first (· marks the depth), each node's inclusive time (itself and its children) and self time".into(),
        kind: Kind::Bars,
        x: Axis::categories("plan node (depth-first)", p.nodes.iter().map(label).collect()),
        y: Axis::linear("time (ms)"),
        series: vec![
            series("inclusive ms", |n| n.inclusive_ms),
            series("self ms", |n| n.self_ms),
        ],
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}
