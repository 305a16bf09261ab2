//! What the server waited on: the wait-event sampler's counts per point as stacked bars (share of
//! the samples per wait-event type, summed over the point's repetitions of the last round).

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::model::Run;

use super::by_point;

/// `Lock:tuple` → `Lock`.
fn kind(event: &str) -> &str {
    event.split(':').next().unwrap_or(event)
}

/// Per group, each wait-event type's share of its samples (%), and every type with its shares
/// summed over the groups (the order of the stack).
#[allow(clippy::type_complexity)]
fn type_shares(groups: &[(String, Vec<&Run>)]) -> (Vec<(String, f64)>, Vec<Vec<(String, f64)>>) {
    let mut kinds: Vec<(String, f64)> = Vec::new();
    let mut shares: Vec<Vec<(String, f64)>> = Vec::new();
    for (_, rs) in groups {
        let mut per: Vec<(String, f64)> = Vec::new();
        for (ev, n) in rs.iter().flat_map(|r| &r.server.wait_events) {
            let k = kind(ev).to_string();
            match per.iter_mut().find(|p| p.0 == k) {
                Some(p) => p.1 += n,
                None => per.push((k, *n)),
            }
        }
        let total: f64 = per.iter().map(|p| p.1).sum();
        for p in &mut per {
            p.1 = if total > 0.0 {
                100.0 * p.1 / total
            } else {
                0.0
            };
            match kinds.iter_mut().find(|k| k.0 == p.0) {
                Some(k) => k.1 += p.1,
                None => kinds.push(p.clone()),
            }
        }
        shares.push(per);
    }
    (kinds, shares)
}

pub fn wait_events(id: &str, runs: &[Run]) -> Option<Chart> {
    let all = by_point(runs);
    let sampled = |rs: &Vec<&Run>| {
        rs.iter()
            .flat_map(|r| &r.server.wait_events)
            .any(|e| e.1 > 0.0)
    };
    let unsampled = all.iter().filter(|g| !sampled(&g.1)).count();
    // points without samples (runs shorter than the sampling interval) are left out, and said
    let groups: Vec<(String, Vec<&Run>)> = all.into_iter().filter(|g| sampled(&g.1)).collect();
    let swept = super::swept_keys(runs);
    let (mut kinds, shares) = type_shares(&groups);
    if kinds.is_empty() {
        return None;
    }
    kinds.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut table = Table::new("share of wait-event samples per type (%)", &["point"]);
    table.headers.extend(kinds.iter().map(|k| k.0.clone()));
    let series = kinds
        .iter()
        .map(|(k, _)| Series {
            name: k.clone(),
            points: shares
                .iter()
                .enumerate()
                .map(|(i, per)| {
                    Pt::new(
                        i as f64,
                        per.iter().find(|p| &p.0 == k).map(|p| p.1).unwrap_or(0.0),
                    )
                })
                .collect(),
        })
        .collect();
    for (i, ((label, _), per)) in groups.iter().zip(&shares).enumerate() {
        let mut row = vec![label.clone()];
        row.extend(
            kinds
                .iter()
                .map(|(k, _)| fmt(per.iter().find(|p| &p.0 == k).map(|p| p.1).unwrap_or(0.0))),
        );
        table.push(i as f64, row);
    }
    Some(Chart {
        id: format!("{id}-wait-events"),
        title: "What sessions were doing (wait-event samples)".into(),
        desc: "share of sampled benchmark sessions per wait-event type at each point, stacked to 100 %; CPU means running, not waiting".into(),
        kind: Kind::Stacked,
        x: Axis::categories(if swept.is_empty() { "point".to_string() } else { swept.join(" · ") }, groups.iter().map(|g| super::values_label(g.1[0], &swept)).collect()),
        y: Axis::linear("share of samples (%)"),
        series,
        bands: Vec::new(),
        notes: if unsampled > 0 {
            vec![format!(
                "{unsampled} point(s) had no wait-event samples (runs shorter than the sampling interval) and are left out"
            )]
        } else {
            Vec::new()
        },
        table,
        zoomable: false,
        colors: Vec::new(),
    })
}
