//! An HTML fragment (no page around it) for the report's compare view: the sides, the table
//! with a class per verdict (`significant`, `not-significant`, `too-few-runs`), and the notes.

use super::{cells, header, notes, side_line};
use crate::model::{Comparison, Verdict};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Significant => "significant",
        Verdict::NotSignificant => "not-significant",
        Verdict::TooFewRuns => "too-few-runs",
    }
}

pub fn render(c: &Comparison) -> String {
    let mut out = String::from("<div class=\"pgrig-compare\">\n<table>\n<caption>");
    out.push_str(&format!(
        "{}<br>{}</caption>\n<thead><tr>",
        esc(&side_line("A", &c.a)),
        esc(&side_line("B", &c.b))
    ));
    for h in header(c) {
        out.push_str(&format!("<th scope=\"col\">{}</th>", esc(&h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &c.rows {
        out.push_str(&format!("<tr class=\"{}\">", class(r.verdict)));
        for (i, cell) in cells(c, r).iter().enumerate() {
            let tag = if i == 0 { "th scope=\"row\"" } else { "td" };
            let end = if i == 0 { "th" } else { "td" };
            out.push_str(&format!("<{tag}>{}</{end}>", esc(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n<ul class=\"notes\">\n");
    for n in notes(c) {
        out.push_str(&format!("<li>{}</li>\n", esc(&n)));
    }
    out.push_str("</ul>\n</div>\n");
    out
}
