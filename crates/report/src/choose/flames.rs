//! Which flame graphs a study's page embeds (`[collect] profile`): the server's profile of each
//! point's representative run — one per point when there are few, else the first and the last
//! point with a differential flame graph between them (what grew red, what shrank blue).

use crate::metric::Metric;
use crate::model::Run;

use super::{by_point, representative, slug};

/// Points up to this many get a flame graph each.
pub const MAX_FLAMES: usize = 6;

/// One flame graph to draw: the folded stacks, and for a differential one the stacks before.
#[derive(Debug, Clone, PartialEq)]
pub struct Flame {
    pub id: String,
    pub title: String,
    pub folded: String,
    pub before: Option<String>,
}

/// The server's folded stacks of a run, if profiled.
fn server(r: &Run) -> Option<&str> {
    r.profiles
        .iter()
        .find(|(which, _)| which == "server")
        .map(|(_, f)| f.as_str())
}

/// The flame graphs of a study's points.
pub fn pick(id: &str, runs: &[Run], swept: &[String], metric: &Metric) -> Vec<Flame> {
    let points: Vec<(String, &Run)> = by_point(runs)
        .iter()
        .map(|(_, g)| representative(g, metric))
        .filter(|r| server(r).is_some())
        .map(|r| (super::values_label(r, swept), r))
        .collect();
    let one = |(label, r): &(String, &Run)| Flame {
        id: format!("{id}-flame-{}", slug(label)),
        title: format!("Server flame graph: {label} ({})", r.id),
        folded: server(r).unwrap_or_default().to_string(),
        before: None,
    };
    if points.len() <= MAX_FLAMES {
        return points.iter().map(one).collect();
    }
    let (first, last) = (&points[0], &points[points.len() - 1]);
    vec![
        one(first),
        one(last),
        Flame {
            id: format!("{id}-flame-diff"),
            title: format!(
                "Server flame graph of {}, coloured by the change from {} (red: a larger share of samples, blue: smaller)",
                last.0, first.0
            ),
            folded: server(last.1).unwrap_or_default().to_string(),
            before: Some(server(first.1).unwrap_or_default().to_string()),
        },
    ]
}
