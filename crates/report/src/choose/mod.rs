//! Which charts the data calls for (pure: model in, chart specifications out). A study with a
//! matrix gets the headline metric against each swept key (`matrix`); rounds get the metric,
//! relation sizes and statement latencies per round (`rounds`); runs with a per-second series get
//! TPS and latency over time with ramp-up and tail marked (`time`); latency distributions become
//! percentile curves (`latency`); wait-event samples a stacked bar per point (`server`); query
//! studies speedup and efficiency against the degree, time per plan node and the plan tree
//! (`query`).
//! Several runs side by side (two targets, several files) are overlaid.

mod effects;
mod figures;
pub mod flames;
mod join_levels;
mod latency;
mod matrix;
mod optimizer;
mod plan_changes;
mod query;
mod replay;
mod rounds;
mod server;
mod steps;
mod time;

use crate::chart::Chart;
use crate::metric::Metric;
use crate::model::{Model, Run, Study};

/// A part of the page: a study, or the runs given on their own.
#[derive(Debug, Clone)]
pub struct Section {
    pub id: String,
    pub title: String,
    /// what the section holds, in words (sentences)
    pub intro: Vec<String>,
    pub charts: Vec<Chart>,
    /// the study file's text (provenance)
    pub study_text: String,
    pub runs: Vec<Run>,
    /// `[collect] profile`: the flame graphs to embed
    pub flames: Vec<flames::Flame>,
}

/// How many runs are overlaid in one chart before only the best and worst are kept.
pub const MAX_OVERLAY: usize = 8;

/// A name usable in ids and file names.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The charts and sections for a model.
pub fn sections(model: &Model, metric: &Metric) -> Vec<Section> {
    let mut out = Vec::new();
    for s in &model.studies {
        out.push(study(s, metric));
        out.extend(other_figures(s, metric));
    }
    for group in comparable(&model.studies) {
        out.push(across(&group, metric));
    }
    if !model.loose.is_empty() {
        out.push(loose(&model.loose, metric));
    }
    let mut seen = std::collections::HashSet::new();
    let mut sections_seen = std::collections::HashSet::new();
    for s in &mut out {
        let mut id = s.id.clone();
        let mut n = 2;
        while !sections_seen.insert(id.clone()) {
            id = format!("{}-{n}", s.id);
            n += 1;
        }
        s.id = id;
        for c in &mut s.charts {
            let mut id = c.id.clone();
            let mut n = 2;
            while !seen.insert(id.clone()) {
                id = format!("{}-{n}", c.id);
                n += 1;
            }
            c.id = id;
        }
        s.charts.retain(Chart::has_data);
    }
    stable_colors(&mut out);
    out
}

/// One colour per series name across the page: a series keeps its colour in every chart.
fn stable_colors(sections: &mut [Section]) {
    let mut names: Vec<String> = Vec::new();
    for c in sections.iter_mut().flat_map(|s| &mut s.charts) {
        c.colors = c
            .series
            .iter()
            .map(|s| match names.iter().position(|n| *n == s.name) {
                Some(i) => i,
                None => {
                    names.push(s.name.clone());
                    names.len() - 1
                }
            })
            .collect();
    }
}

/// Keys whose value differs between runs, in the order the points name them.
pub fn swept_keys(runs: &[Run]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in runs {
        for (k, _) in &r.point {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys.retain(|k| {
        let first = runs[0].value(k);
        runs.iter().any(|r| r.value(k) != first)
    });
    keys
}

/// The values of `keys` at a run's point, `1 · serializable` (a category label; the keys name
/// the axis).
pub fn values_label(r: &Run, keys: &[String]) -> String {
    let v: Vec<&str> = keys
        .iter()
        .filter_map(|k| r.value(k))
        .map(|v| v.text.as_str())
        .collect();
    if v.is_empty() {
        r.point_label()
    } else {
        v.join(" · ")
    }
}

/// The runs of a point's last round, grouped by point (in plan order).
pub fn by_point(runs: &[Run]) -> Vec<(String, Vec<&Run>)> {
    let last = runs.iter().map(|r| r.round).max().unwrap_or(1);
    let mut groups: Vec<(String, Vec<&Run>)> = Vec::new();
    for r in runs.iter().filter(|r| r.round == last) {
        let l = r.point_label();
        match groups.iter_mut().find(|g| g.0 == l) {
            Some(g) => g.1.push(r),
            None => groups.push((l, vec![r])),
        }
    }
    groups
}

/// The repetition whose metric is the median of its point: the run shown for that point.
pub fn representative<'a>(runs: &[&'a Run], metric: &Metric) -> &'a Run {
    let mut v: Vec<&Run> = runs.to_vec();
    v.sort_by(|a, b| {
        let x = (metric.get)(a).unwrap_or(0.0);
        let y = (metric.get)(b).unwrap_or(0.0);
        x.total_cmp(&y)
    });
    v[(v.len() - 1) / 2]
}

/// One representative run per point, at most [`MAX_OVERLAY`] (else the best and the worst).
pub fn overlay<'a>(runs: &'a [Run], metric: &Metric) -> (Vec<(String, &'a Run)>, Option<String>) {
    let groups = by_point(runs);
    let mut reps: Vec<(String, &Run)> = groups
        .iter()
        .map(|(l, g)| (l.clone(), representative(g, metric)))
        .collect();
    if reps.len() <= MAX_OVERLAY {
        return (reps, None);
    }
    let n = reps.len();
    reps.sort_by(|a, b| {
        (metric.get)(a.1)
            .unwrap_or(0.0)
            .total_cmp(&(metric.get)(b.1).unwrap_or(0.0))
    });
    let kept = vec![reps[0].clone(), reps[n - 1].clone()];
    let note = format!(
        "{n} points: the lowest and the highest by {} are shown (every point is in the matrix charts)",
        metric.key
    );
    (kept, Some(note))
}

fn study(s: &Study, metric: &Metric) -> Section {
    // a query study's throughput is queries per second
    let queries = Metric {
        label: "queries per second",
        ..*metric
    };
    let metric = if !s.query.is_empty() && metric.key == "tps" {
        &queries
    } else {
        metric
    };
    let id = slug(&s.name);
    let swept = swept_keys(&s.runs);
    let rounds = s.runs.iter().map(|r| r.round).max().unwrap_or(1);
    let points = by_point(&s.runs).len();
    let reps = s.runs.iter().map(|r| r.repetition).max().unwrap_or(1);
    let mut intro = vec![format!(
        "{} run(s): {points} point(s) × {reps} repetition(s){}.",
        s.runs.len(),
        if rounds > 1 {
            format!(" × {rounds} rounds")
        } else {
            String::new()
        }
    )];
    if !swept.is_empty() {
        intro.push(format!("Swept: {}.", swept.join(", ")));
    }
    if !s.runs.iter().any(|r| (metric.get)(r).is_some()) {
        intro.push(format!(
            "No run of this study has {} (not collected): its matrix and round charts are left out.",
            metric.label
        ));
    }
    intro.extend(time::too_short(&s.runs));
    let mut charts = query::scaling(&id, s);
    let (stepped, covered) = steps::charts(&id, &s.runs, &swept, metric);
    charts.extend(stepped);
    charts.extend(effects::charts(&id, &s.runs, &swept, metric));
    let unstepped: Vec<String> = swept
        .iter()
        .filter(|k| !covered.contains(k))
        .cloned()
        .collect();
    if covered.is_empty() || !unstepped.is_empty() {
        charts.extend(matrix::charts(&id, &s.runs, &unstepped, metric));
    }
    // points that differ in failures: failures and retries are the study's answer, beside
    // the throughput (not among the other figures at the bottom)
    charts.extend(figures::failure_charts(&id, &s.runs, &swept));
    if rounds > 1 {
        charts.extend(rounds::charts(&id, &s.runs, metric));
    }
    charts.extend(time::overlaid(&id, &s.runs, metric));
    charts.extend(latency::overlaid(&id, &s.runs, metric));
    charts.extend(server::wait_events(&id, &s.runs));
    charts.extend(query::node_times(&id, &s.runs, metric));
    charts.extend(query::plan_trees(&id, &s.runs, metric));
    charts.extend(optimizer::cardinality(&id, &s.runs, &swept, metric));
    charts.extend(join_levels::by_join_level(&id, &s.runs, &swept, metric));
    charts.extend(replay::statements(&id, &s.runs));
    charts.extend(plan_changes::charts(&id, &s.runs, &swept));
    let flames = flames::pick(&id, &s.runs, &swept, metric);
    Section {
        id,
        title: format!("Study \"{}\"", s.name),
        intro,
        charts,
        study_text: s.text.clone(),
        runs: s.runs.clone(),
        flames,
    }
}

/// The provenance entries that name what ran: the scripts (with their text), the builtin or
/// native workload, the queries.
const WORKLOAD_KEYS: &[&str] = &[
    "scripts",
    "workload.builtin",
    "workload.scripts",
    "workload.workload",
    "workload.query",
    "workload.queries",
];

/// What makes two studies one comparison: the keys their points set and the workload their
/// runs record (scripts, workload options); studies of different workloads are never one chart.
fn identity(s: &Study) -> (Vec<String>, Vec<(String, String)>) {
    let mut keys: Vec<String> = s
        .runs
        .iter()
        .flat_map(|r| r.point.iter().map(|(k, _)| k.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    let mut workload: Vec<(String, String)> = s
        .runs
        .iter()
        .flat_map(|r| &r.provenance)
        .filter(|(k, _)| WORKLOAD_KEYS.contains(&k.as_str()) || k.starts_with("workload.defines."))
        .cloned()
        .collect();
    workload.sort();
    workload.dedup();
    (keys, workload)
}

/// Groups of two or more studies that can be drawn as one chart (same keys and workload), in
/// the order the studies come.
fn comparable(studies: &[Study]) -> Vec<Vec<Study>> {
    let mut groups: Vec<(_, Vec<Study>)> = Vec::new();
    for s in studies {
        let id = identity(s);
        match groups.iter_mut().find(|g| g.0 == id) {
            Some(g) => g.1.push(s.clone()),
            None => groups.push((id, vec![s.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|g| g.1)
        .filter(|g| g.len() > 1)
        .collect()
}

/// A study's other measured figures (client CPU, failures, server figures...) as a section of
/// their own after the headline's.
fn other_figures(s: &Study, metric: &Metric) -> Option<Section> {
    let id = format!("{}-figures", slug(&s.name));
    let swept = swept_keys(&s.runs);
    let charts = figures::charts(&id, &s.runs, &swept, metric);
    if charts.is_empty() {
        return None;
    }
    Some(Section {
        title: format!("Study \"{}\": other measured figures", s.name),
        intro: vec![format!(
            "Besides {}: every other figure the runs hold, per point.",
            metric.label
        )],
        id,
        charts,
        study_text: String::new(),
        runs: Vec::new(),
        flames: Vec::new(),
    })
}

/// Several studies of one workload side by side: each study's points as one series of bars
/// over the union of the points (the same study from two stores or machines lines up point by
/// point).
fn across(studies: &[Study], metric: &Metric) -> Section {
    let names: Vec<String> = studies.iter().map(|s| s.name.clone()).collect();
    Section {
        id: "studies".into(),
        title: format!("{} studies side by side", studies.len()),
        intro: vec![format!(
            "{}: the median of each point's repetitions, min–max.",
            names.join(", ")
        )],
        charts: matrix::across("studies", studies, metric)
            .into_iter()
            .collect(),
        study_text: String::new(),
        runs: Vec::new(),
        flames: Vec::new(),
    }
}

fn loose(runs: &[Run], metric: &Metric) -> Section {
    let mut charts = Vec::new();
    if runs.len() == 1 {
        let r = &runs[0];
        charts.extend(time::single("run", r));
        charts.extend(latency::single("run", r));
        charts.extend(latency::statements("run", r));
        charts.extend(query::plan_trees("run", runs, metric));
        charts.extend(replay::statements("run", runs));
    } else {
        charts.extend(matrix::per_run("runs", runs, metric));
        charts.extend(time::side_by_side("runs", runs));
        charts.extend(latency::side_by_side("runs", runs));
        charts.extend(query::node_times("runs", runs, metric));
        charts.extend(replay::statements("runs", runs));
    }
    Section {
        id: "runs".into(),
        title: if runs.len() == 1 {
            format!("Run {}", runs[0].id)
        } else {
            format!("{} runs side by side", runs.len())
        },
        intro: std::iter::once(format!("{} run(s) given on their own.", runs.len()))
            .chain(time::too_short(runs))
            .collect(),
        charts,
        study_text: String::new(),
        flames: flames::pick("runs", runs, &swept_keys(runs), metric),
        runs: runs.to_vec(),
    }
}
