//! The plan changes of a query comparison as text (under the terminal table, and in a code block
//! of the markdown): per query its verdict sign, medians and planning times, then both plans
//! side by side; or one line saying no plan changed.

use crate::median_ci::median;
use crate::plan_changes::{median_planning, PlanChange};

/// The plan changes as text: per query its verdict and medians, then both plans side by side;
/// when the sides ran `queries` queries and none changed its plan, a line saying so.
pub fn render_text(changes: &[PlanChange], queries: usize) -> String {
    let mut out = String::new();
    if changes.is_empty() {
        if queries > 0 {
            out.push_str(&format!(
                "Plans: each of the {queries} quer{} ran the same plan on both sides.\n",
                if queries == 1 { "y" } else { "ies" }
            ));
        }
        return out;
    }
    out.push_str(&format!(
        "Plan changes ({} of {} quer{}; + slower, - faster, ~ no difference shown):\n",
        changes.len(),
        queries.max(changes.len()),
        if queries.max(changes.len()) == 1 {
            "y"
        } else {
            "ies"
        }
    ));
    for c in changes {
        let ms = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.3} ms"));
        let (ma, mb) = match &c.latency {
            Some(r) => (Some(r.a.median), Some(r.b.median)),
            None => (median(&c.a.client_ms), median(&c.b.client_ms)),
        };
        let change = c
            .latency
            .as_ref()
            .map_or("no executions".into(), super::change);
        out.push_str(&format!(
            "\n{} {}: median client time {} -> {} ({change}); planning {} -> {}\n",
            c.sign(),
            c.query,
            ms(ma),
            ms(mb),
            ms(median_planning(&c.a)),
            ms(median_planning(&c.b)),
        ));
        out.push_str(&side_by_side(&c.a.plan, &c.b.plan));
    }
    out
}

/// Two plans in two columns, `A` on the left.
pub fn side_by_side(a: &[String], b: &[String]) -> String {
    let width = a
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut out = format!("  {:<width$}  | {}\n", "A plan", "B plan");
    for i in 0..a.len().max(b.len()) {
        let l = a.get(i).map(String::as_str).unwrap_or("");
        let r = b.get(i).map(String::as_str).unwrap_or("");
        out.push_str(format!("  {l:<width$}  | {r}").trim_end());
        out.push('\n');
    }
    out
}
