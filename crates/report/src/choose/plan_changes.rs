//! Plan changes side by side: for each two points of a query study that differ in one swept
//! key by neighbouring values (version 15 → 18, `enable_nestloop` on → off), the queries whose
//! plan changed (`pgrig_compare::plan_changes`: fingerprints, the client time's change with
//! compare's verdict, regressions first) — per query a chart of its median client and planning
//! time at both points whose table holds the two plans as indented text side by side, then each
//! plan's tree (the plan-tree chart of `query`).

use pgrig_compare::plan_changes::{changes, pool, PlanChange, QuerySide};
use pgrig_compare::{ALPHA, CONFIDENCE};

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::model::{QueryPlan, Run};

use super::{by_point, slug};

/// Most pairs of points, and changed queries per pair, a page shows.
const MAX_PAIRS: usize = 12;
const MAX_QUERIES: usize = 20;

/// The plan-change charts of a query study (none when no plan changed).
pub fn charts(id: &str, runs: &[Run], swept: &[String]) -> Vec<Chart> {
    let groups = by_point(runs);
    let mut out = Vec::new();
    for (i, j, key) in neighbours(&groups, swept).into_iter().take(MAX_PAIRS) {
        let (a, b) = (&groups[i].1, &groups[j].1);
        let value = |r: &Run| r.value(&key).map(|v| v.text.clone()).unwrap_or_default();
        let (va, vb) = (value(a[0]), value(b[0]));
        let rest: Vec<String> = swept
            .iter()
            .filter(|k| **k != key)
            .filter_map(|k| Some(format!("{k}={}", a[0].value(k)?.text)))
            .collect();
        let at = match rest.is_empty() {
            true => String::new(),
            false => format!(" at {}", rest.join(", ")),
        };
        let pair = format!("{key} {va} → {vb}{at}");
        let found = changes(&side(a), &side(b), ALPHA, CONFIDENCE);
        for c in found.iter().take(MAX_QUERIES) {
            let cid = format!("{id}-plan-change-{}", slug(&format!("{pair} {}", c.query)));
            out.push(latency_chart(&cid, &pair, (&va, &vb), c));
            for (which, v, q) in [("A", &va, &c.a), ("B", &vb, &c.b)] {
                if let Some(plan) = plan_of(if which == "A" { a } else { b }, q) {
                    out.push(super::query::plan_tree(
                        format!("{cid}-{}", which.to_ascii_lowercase()),
                        &format!("Plan tree: {} at {key} = {v}{at}", c.query),
                        &format!("plan of {} at {key} = {v}{at}", c.query),
                        plan,
                    ));
                }
            }
        }
    }
    out
}

/// Pairs of points (indexes into `groups`) whose values differ in exactly one swept key, by
/// neighbouring values of it (in the order the points first show them), with that key.
fn neighbours(groups: &[(String, Vec<&Run>)], swept: &[String]) -> Vec<(usize, usize, String)> {
    let text = |g: &(String, Vec<&Run>), k: &str| g.1[0].value(k).map(|v| v.text.clone());
    let mut out = Vec::new();
    for k in swept {
        let mut order: Vec<Option<String>> = Vec::new();
        for g in groups {
            let v = text(g, k);
            if !order.contains(&v) {
                order.push(v);
            }
        }
        let pos = |v: &Option<String>| order.iter().position(|o| o == v).unwrap_or(0);
        for i in 0..groups.len() {
            for j in 0..groups.len() {
                let differ: Vec<&String> = swept
                    .iter()
                    .filter(|s| text(&groups[i], s) != text(&groups[j], s))
                    .collect();
                if differ == [k] && pos(&text(&groups[j], k)) == pos(&text(&groups[i], k)) + 1 {
                    out.push((i, j, k.clone()));
                }
            }
        }
    }
    out
}

/// A point's queries pooled over its runs.
fn side(runs: &[&Run]) -> Vec<QuerySide> {
    let per_run: Vec<Vec<QuerySide>> = runs
        .iter()
        .map(|r| {
            r.query
                .iter()
                .map(|q| QuerySide {
                    name: q.name.clone(),
                    fingerprint: q.fingerprint.clone(),
                    plan: q.text.clone(),
                    client_ms: q.client_times.clone(),
                    planning_ms: q.planning_times.clone(),
                })
                .collect()
        })
        .collect();
    pool(&per_run)
}

/// The run's plan of that query with the pooled side's fingerprint.
fn plan_of<'a>(runs: &[&'a Run], q: &QuerySide) -> Option<&'a QueryPlan> {
    runs.iter()
        .flat_map(|r| &r.query)
        .find(|p| p.name == q.name && p.fingerprint == q.fingerprint)
}

/// One changed query: its median client and planning time at both points (bars), the two
/// plans side by side in the table.
fn latency_chart(id: &str, pair: &str, (va, vb): (&str, &str), c: &PlanChange) -> Chart {
    let median = |x: &[f64]| pgrig_compare::median_ci::median(x).unwrap_or(0.0);
    let verdict = match (&c.latency, c.sign()) {
        (Some(r), '+' | '-') => format!("{} ({})", pgrig_compare::render::change(r), c.sign()),
        (Some(_), '~') => "~ (no difference shown)".to_string(),
        _ => "? (too few executions)".to_string(),
    };
    let (head_a, head_b) = (format!("plan at {va}"), format!("plan at {vb}"));
    let mut table = Table::new(
        format!(
            "{}: the plan at {va} (left) and at {vb} (right), depth-first; [est … · actual …] are the planner's estimated and the actual rows over all loops. Median client time {} → {} ms: {verdict}",
            c.query,
            fmt(median(&c.a.client_ms)),
            fmt(median(&c.b.client_ms)),
        ),
        &[head_a.as_str(), head_b.as_str()],
    );
    table.text = true;
    for i in 0..c.a.plan.len().max(c.b.plan.len()) {
        let cell = |p: &[String]| p.get(i).cloned().unwrap_or_default();
        table.push(f64::NAN, vec![cell(&c.a.plan), cell(&c.b.plan)]);
    }
    let bars = |name: &str, get: &dyn Fn(&QuerySide) -> f64| Series {
        name: name.into(),
        points: vec![Pt::new(0.0, get(&c.a)), Pt::new(1.0, get(&c.b))],
    };
    Chart {
        id: id.to_string(),
        title: format!("Plan changed: {} ({pair}) {verdict}", c.query),
        desc: "median client time of the query's executions and median planning time (EXPLAIN's Planning Time) at both points; the verdict is pgrig compare's (Mann–Whitney over the executions' client times)".into(),
        kind: Kind::Bars,
        x: Axis::categories("point", vec![va.to_string(), vb.to_string()]),
        y: Axis::linear("time (ms)"),
        series: vec![
            bars("median client ms", &|q: &QuerySide| median(&q.client_ms)),
            bars("median planning ms", &|q: &QuerySide| median(&q.planning_ms)),
        ],
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}
