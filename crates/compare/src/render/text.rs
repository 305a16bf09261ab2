//! The terminal table: the two sides, one aligned row per metric, then the notes.

use super::{cells, header, notes, side_line};
use crate::model::Comparison;

pub fn render(c: &Comparison) -> String {
    let mut rows = vec![header(c)];
    rows.extend(c.rows.iter().map(|r| cells(c, r)));
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("{}\n{}\n\n", side_line("A", &c.a), side_line("B", &c.b));
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| match i {
                0 | 2 | 5 | 7 | 8 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    for n in notes(c) {
        out.push_str(&n);
        out.push('\n');
    }
    let plans = super::plans::render_text(&c.plan_changes, c.plan_queries);
    if !plans.is_empty() {
        out.push('\n');
        out.push_str(&plans);
    }
    out
}
