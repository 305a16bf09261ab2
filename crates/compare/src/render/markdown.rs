//! Markdown for pasting into issues and posts: the sides as a list, a pipe table, the notes.

use super::{cells, header, notes, side_line};
use crate::model::Comparison;

/// Escapes what would break a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(c: &Comparison) -> String {
    let mut out = format!(
        "- {}\n- {}\n\n",
        cell(&side_line("A", &c.a)),
        cell(&side_line("B", &c.b))
    );
    let head = header(c);
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    let align: Vec<&str> = (0..head.len())
        .map(|i| {
            if matches!(i, 0 | 2 | 5 | 7 | 8) {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in &c.rows {
        let cs: Vec<String> = cells(c, r).iter().map(|s| cell(s)).collect();
        out.push_str(&format!("| {} |\n", cs.join(" | ")));
    }
    out.push('\n');
    for n in notes(c) {
        out.push_str(&format!("- {}\n", cell(&n)));
    }
    let plans = super::plans::render_text(&c.plan_changes, c.plan_queries);
    if !plans.is_empty() {
        out.push_str(&format!("\n```\n{plans}```\n"));
    }
    out
}
