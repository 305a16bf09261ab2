//! `pgrig report`: charts from measured runs as one self-contained HTML page (inline SVG beside
//! tables of the numbers, no network, readable without JavaScript) and standalone SVG files.
//! Data flows one way: inputs (`input`: results store, JSON run documents, pgbench logs) →
//! plain `model` → chart choice (`choose`, pure) → drawing (`chart::render`, plotters' SVG
//! backend) → page (`html`) → files (`write`).

pub mod bound;
pub mod chart;
pub mod choose;
pub mod error;
pub mod flags;
pub mod html;
pub mod input;
pub mod metric;
pub mod model;
mod write;

pub use error::ReportError;
pub use metric::{Metric, METRICS};
pub use write::{write_html, write_svgs};

use chart::render::{render, Frame};
use model::Model;

/// What to draw.
#[derive(Debug, Clone)]
pub struct Options {
    /// the headline metric of the matrix and round charts (TPS by default)
    pub metric: Metric,
    /// HTML of the compare view (`pgrig compare`'s tables), placed in its own section
    pub compare_html: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            metric: METRICS[0],
            compare_html: None,
        }
    }
}

/// A built report: the page and every chart as a standalone SVG (id, SVG text).
#[derive(Debug, Clone)]
pub struct Report {
    pub html: String,
    pub svgs: Vec<(String, String)>,
}

/// The report of a model.
pub fn build(model: &Model, opts: &Options) -> Result<Report, ReportError> {
    let sections = choose::sections(model, &opts.metric);
    let charts: usize = sections.iter().map(|s| s.charts.len()).sum();
    if charts == 0 {
        return Err(ReportError::Empty(
            "nothing to chart: the runs hold no figures that can be drawn".into(),
        ));
    }
    let mut body = String::new();
    let mut svgs = Vec::with_capacity(charts);
    let mut toc = Vec::new();
    for s in &sections {
        let mut rendered: Vec<(String, Frame)> = Vec::with_capacity(s.charts.len());
        for c in &s.charts {
            let r =
                render(c).map_err(|e| ReportError::Empty(format!("chart \"{}\": {e}", c.title)))?;
            let svg = html::accessible_svg(&r.svg, c);
            svgs.push((c.id.clone(), svg.clone()));
            rendered.push((svg, r.frame));
        }
        let flames = flame_graphs(s)?;
        html::section(&mut body, s, &rendered, &flames);
        toc.push((s.id.clone(), s.title.clone()));
    }
    if opts.compare_html.is_some() {
        toc.insert(0, ("compare".into(), "Compare".into()));
    }
    let title = match sections.as_slice() {
        [one] => format!("pgrig report: {}", one.title),
        _ => "pgrig report".to_string(),
    };
    let html = html::page(
        &title,
        &model.sources,
        &toc,
        &body,
        opts.compare_html.as_deref(),
    );
    if html.len() > bound::MAX_PAGE_BYTES {
        return Err(ReportError::TooLarge(format!(
            "the report would be {} MB, more than the {} MB a page may have: select fewer studies or runs",
            html.len() >> 20,
            bound::MAX_PAGE_BYTES >> 20
        )));
    }
    Ok(Report { html, svgs })
}

/// The section's flame graphs drawn (inferno's SVG).
fn flame_graphs(s: &choose::Section) -> Result<Vec<(choose::flames::Flame, String)>, ReportError> {
    s.flames
        .iter()
        .map(|f| {
            let svg = match &f.before {
                Some(before) => pgrig_profile::diff_svg(before, &f.folded, &f.title),
                None => pgrig_profile::flame_svg(&f.folded, &f.title),
            };
            svg.map(|svg| (f.clone(), svg))
                .map_err(|e| ReportError::Empty(format!("flame graph \"{}\": {e}", f.title)))
        })
        .collect()
}

/// Reads the inputs (store at `store`, files, study names, run ids) and builds the report.
pub fn from_inputs(store: &str, inputs: &[String], opts: &Options) -> Result<Report, ReportError> {
    let model = input::load(store, inputs)?;
    build(&model, opts)
}
