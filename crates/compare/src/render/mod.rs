//! Writers of a [`Comparison`]: a terminal table ([`text`]), markdown ([`markdown`]), JSON
//! ([`json`]) and an HTML fragment for the report ([`html`]). This file holds what they share:
//! the table's cells, number formatting and the notes under the table.

pub mod html;
pub mod json;
pub mod markdown;
pub mod plans;
pub mod text;

use crate::metric::Unit;
use crate::model::{Comparison, Figures, Row, SideInfo, Verdict};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Html,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "text" => Some(Format::Text),
            "markdown" | "md" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "html" => Some(Format::Html),
            _ => None,
        }
    }
}

/// `c` in `format`.
pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Text => text::render(c),
        Format::Markdown => markdown::render(c),
        Format::Json => json::render(c),
        Format::Html => html::render(c),
    }
}

/// The table's header cells.
pub fn header(c: &Comparison) -> Vec<String> {
    let ci = format!("{:.0}% CI", 100.0 * c.confidence);
    vec![
        "metric".into(),
        "A median".into(),
        format!("A {ci}"),
        "A cv%".into(),
        "B median".into(),
        format!("B {ci}"),
        "B cv%".into(),
        "change".into(),
        "p".into(),
    ]
}

/// One row's cells, in header order.
pub fn cells(c: &Comparison, r: &Row) -> Vec<String> {
    let u = r.metric.unit;
    vec![
        format!("{}{}", r.metric.name, u.suffix()),
        number(u, r.a.median),
        interval(c, u, &r.a),
        format!("{:.1}", r.a.cv_pct),
        number(u, r.b.median),
        interval(c, u, &r.b),
        format!("{:.1}", r.b.cv_pct),
        change(r),
        format!("p={} n={}+{}", p_value(r.p_value), r.a.n, r.b.n),
    ]
}

/// A value in its unit's precision (fractions in percent).
pub fn number(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Tps => format!("{v:.1}"),
        Unit::Ms if v.abs() >= 100.0 => format!("{v:.1}"),
        Unit::Ms => format!("{v:.3}"),
        Unit::Fraction => format!("{:.1}", 100.0 * v),
        Unit::Cpus => format!("{v:.2}"),
        Unit::Bytes | Unit::Count if v.fract() == 0.0 || v.abs() >= 100.0 => format!("{v:.0}"),
        Unit::Bytes | Unit::Count => format!("{v:.2}"),
    }
}

/// `[lo, hi]`, followed by the achieved level when it falls short of the one asked.
fn interval(c: &Comparison, u: Unit, f: &Figures) -> String {
    match f.ci {
        None => "-".into(),
        Some(ci) if ci.level + 1e-9 < c.confidence => format!(
            "[{}, {}] @{:.0}%",
            number(u, ci.lo),
            number(u, ci.hi),
            (100.0 * ci.level).floor()
        ),
        Some(ci) => format!("[{}, {}]", number(u, ci.lo), number(u, ci.hi)),
    }
}

/// The change column: the change when significant, `~` when not, words when undecidable.
pub fn change(r: &Row) -> String {
    match (r.verdict, r.change_pct) {
        (Verdict::TooFewRuns, _) => "too few runs".into(),
        (Verdict::NotSignificant, _) => "~".into(),
        (Verdict::Significant, Some(pct)) => format!("{pct:+.1}%"),
        (Verdict::Significant, None) => format!("0 -> {}", number(r.metric.unit, r.b.median)),
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// `runs 1, 3, 5`
fn ids(ids: &[i64]) -> String {
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!(
        "run{} {}",
        if ids.len() == 1 { "" } else { "s" },
        list.join(", ")
    )
}

/// `A: insert[clients=4]: 5 runs (1, 2, 3, 4, 5) of insert: clients=4`
pub fn side_line(which: &str, s: &SideInfo) -> String {
    format!(
        "{which}: {}: {} ({})",
        s.selection,
        ids(&s.run_ids),
        s.points.join("; ")
    )
}

/// The lines under the table: flags, words for undecidable rows, warnings, the method.
pub fn notes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for (which, s) in [("A", &c.a), ("B", &c.b)] {
        for f in &s.flags {
            out.push(format!("{which} flagged {}: {}", f.flag, ids(&f.runs)));
        }
    }
    let mut sizes: Vec<(usize, usize, usize, f64)> = Vec::new();
    for r in c.rows.iter().filter(|r| r.verdict == Verdict::TooFewRuns) {
        let k = (r.a.n, r.b.n, r.runs_needed.unwrap_or(0), r.p_value);
        if !sizes.iter().any(|s| (s.0, s.1) == (k.0, k.1)) {
            sizes.push(k);
        }
    }
    for (na, nb, needed, _) in sizes {
        out.push(format!(
            "too few runs: {na} and {nb} runs cannot show a difference at alpha = {} (the smallest \
             p-value they can give is {}); run at least {needed} on each side",
            c.alpha,
            p_value(crate::mann_whitney::min_p(na, nb))
        ));
    }
    out.extend(c.warnings.iter().map(|w| format!("warning: {w}")));
    out.push(format!(
        "~ = no significant difference (p >= {}); p: Mann-Whitney U test, two-sided; CI: \
         distribution-free interval of the median from order statistics (@N% where fewer runs \
         cannot reach {:.0}%); cv: coefficient of variation across runs",
        c.alpha,
        100.0 * c.confidence
    ));
    out
}
