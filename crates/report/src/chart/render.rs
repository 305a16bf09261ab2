//! Draws a [`Chart`] as SVG with plotters' SVG backend (text as `<text>` elements, so no font is
//! loaded): axes and grid, bands, lines or bars with min–max whiskers, flagged points ringed in
//! red, and a legend on the right. Log and "nines" axes are drawn on transformed values with
//! their own ticks. Returns the SVG and the plot frame the page's script needs for hover and zoom.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{fmt, Chart, Kind, Scale};

/// The plotting area in SVG pixels and the (transformed) data range it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub px0: i32,
    pub px1: i32,
    pub py0: i32,
    pub py1: i32,
    pub x0: f64,
    pub x1: f64,
}

pub struct Rendered {
    pub svg: String,
    pub frame: Frame,
}

const PALETTE: [(u8, u8, u8); 10] = [
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x7f, 0x7f, 0x7f),
    (0xbc, 0xbd, 0x22),
    (0x17, 0xbe, 0xcf),
    (0x39, 0x3b, 0x79),
];
/// Flag marks: a red no series uses.
const FLAG: RGBColor = RGBColor(0xcc, 0x00, 0x00);
pub const WIDTH: u32 = 860;
pub const HEIGHT: u32 = 430;

/// Series `i`'s colour: the palette, then distinct hues.
pub fn color(i: usize) -> RGBColor {
    if i < PALETTE.len() {
        let (r, g, b) = PALETTE[i];
        return RGBColor(r, g, b);
    }
    let hue = ((i as f64) * 137.508).rem_euclid(360.0) / 360.0;
    let c = HSLColor(hue, 0.55, 0.42).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

/// `#rrggbb` as plotters writes it into the SVG (the page's script finds series by it).
pub fn hex(i: usize) -> String {
    let c = color(i);
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

type Err = String;

fn e<E: std::fmt::Debug>(x: E) -> Err {
    format!("drawing failed: {x:?}")
}

/// An axis' value transform. What it gives is within ±[`AXIS_LIMIT`], as the axis range is, so
/// plotters never maps a point far outside the frame (its pixel arithmetic overflows there).
fn tf(scale: Scale, cap: f64) -> impl Fn(f64) -> f64 {
    move |v: f64| clamp_axis(transform(scale, cap, v))
}

fn clamp_axis(v: f64) -> f64 {
    if v.is_nan() {
        v
    } else {
        v.clamp(-AXIS_LIMIT, AXIS_LIMIT)
    }
}

fn transform(scale: Scale, cap: f64, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log => {
            if v > 0.0 {
                v.log10()
            } else {
                f64::NAN
            }
        }
        Scale::Nines => {
            if v >= 1.0 {
                cap
            } else {
                -(1.0 - v).log10()
            }
        }
    }
}

/// The "nines" of the largest quantile below 1, plus a step for the maximum.
fn nines_cap(c: &Chart) -> f64 {
    let m = c
        .series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.x < 1.0)
        .map(|p| -(1.0 - p.x).log10())
        .fold(0.0, f64::max);
    (m - 1e-6).ceil().max(1.0) + 0.5
}

/// Largest magnitude an axis shows: values beyond it are drawn at it, so that the range and
/// its padding stay finite (an axis up to `f64::MAX` padded to infinity hung plotters' tick
/// computation).
const AXIS_LIMIT: f64 = 1e300;

fn range(vals: impl Iterator<Item = f64>, zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = vals
        .filter(|v| v.is_finite())
        .map(|v| v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < 1e-12 {
        hi = lo + lo.abs().max(1.0) * 0.1;
        if !zero {
            lo -= lo.abs().max(1.0) * 0.1;
        }
    }
    let pad = (hi - lo) * 0.06;
    (if zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// Manual ticks for non-linear axes: (transformed position, label).
fn ticks(axis: &super::Axis, lo: f64, hi: f64, cap: f64) -> Vec<(f64, String)> {
    match axis.scale {
        Scale::Linear => axis
            .marks
            .iter()
            .filter(|m| **m >= lo && **m <= hi)
            .map(|m| (*m, fmt(*m)))
            .collect(),
        Scale::Log => log_ticks(lo, hi),
        Scale::Nines => {
            let mut out: Vec<(f64, String)> = (0..=(cap.floor() as i32))
                .map(|n| n as f64)
                .filter(|n| *n >= lo && *n <= hi && *n < cap)
                .map(|n| (n, percent_label(n)))
                .collect();
            let half = 2f64.log10();
            if half >= lo && half <= hi {
                out.insert(0, (half, "50%".into()));
            }
            out.push((cap, "max".into()));
            out
        }
    }
}

/// Ticks of a log axis over `lo..hi` (exponents): the powers of ten, with 2× and 5× on short
/// ranges, and every multiple 1×…9× where that still leaves fewer than three labels (a range
/// within one decade would otherwise show one or two).
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let at = |mults: &[f64], all: bool| {
        let mut out = Vec::new();
        let mut e = lo.floor() as i32;
        while (e as f64) <= hi {
            for &m in mults {
                let p = (e as f64) + f64::log10(m);
                if p >= lo && p <= hi && (m == 1.0 || all) {
                    out.push((p, fmt(10f64.powf(p))));
                }
            }
            e += 1;
        }
        out
    };
    let out = at(&[1.0, 2.0, 5.0], hi - lo < 2.5);
    if out.len() >= 3 {
        return out;
    }
    at(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], true)
}

/// The chart's x transform (what the frame's x range is in): hover and zoom work in it.
pub fn x_transform(c: &Chart) -> impl Fn(f64) -> f64 {
    tf(c.x.scale, nines_cap(c))
}

/// `90%`, `99%`, `99.9%` for 1, 2, 3 nines.
fn percent_label(nines: f64) -> String {
    let decimals = (nines as usize).saturating_sub(2);
    format!("{:.decimals$}%", 100.0 * (1.0 - 10f64.powf(-nines)))
}

/// Draws `c` into an SVG string.
pub fn render(c: &Chart) -> Result<Rendered, Err> {
    let mut svg = String::new();
    let key = category_key(c);
    let key_h = key.len() as u32 * KEY_LINE_PX + if key.is_empty() { 0 } else { 16 };
    let frame = {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT + key_h)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (top, bottom) = root.split_vertically(HEIGHT);
        let legend_w = legend_width(c);
        let (plot, legend) = top.split_horizontally(WIDTH - legend_w);
        let frame = draw_plot(c, &plot)?;
        draw_legend(c, &legend)?;
        draw_key(&key, &bottom)?;
        root.present().map_err(e)?;
        frame
    };
    Ok(Rendered { svg, frame })
}

/// Longest legend line (characters).
const LEGEND_CHARS: usize = 34;
/// Lines a legend entry may take.
const LEGEND_LINES: usize = 3;

/// Where the legend's first entry starts, and its pixels per line and between entries.
const LEGEND_TOP: i32 = 40;
const LEGEND_LINE_PX: i32 = 16;
const LEGEND_GAP_PX: i32 = 4;
/// Pixels the "flagged" key takes below the entries.
const LEGEND_FLAG_PX: i32 = 26;

/// Each series' legend entry as lines, every entry drawn: at most [`LEGEND_LINES`] lines an
/// entry, fewer when that many would not all fit in the chart's height (the page's own legend
/// under the chart has the full names).
pub fn legend_labels(c: &Chart) -> Vec<Vec<String>> {
    let flagged = c.series.iter().flat_map(|s| &s.points).any(|p| p.flagged);
    let room = HEIGHT as i32 - 10 - LEGEND_TOP - if flagged { LEGEND_FLAG_PX } else { 0 };
    let height = |labels: &[Vec<String>]| -> i32 {
        (labels.iter())
            .map(|l| l.len() as i32 * LEGEND_LINE_PX + LEGEND_GAP_PX)
            .sum()
    };
    let mut max_lines = LEGEND_LINES;
    loop {
        let labels = legend_labels_in(c, max_lines);
        if max_lines == 1 || height(&labels) <= room {
            return labels;
        }
        max_lines -= 1;
    }
}

/// Each series' legend entry in at most `max_lines` lines: the words every series' name shares
/// are left out (the chart's title and axes say them), the rest wrapped at [`LEGEND_CHARS`];
/// entries that would still read alike get their position appended, so no two are the same
/// text.
fn legend_labels_in(c: &Chart, max_lines: usize) -> Vec<Vec<String>> {
    let words: Vec<Vec<&str>> = c
        .series
        .iter()
        .map(|s| s.name.split(' ').collect())
        .collect();
    let shared = |w: &&str| c.series.len() > 1 && words.iter().all(|ws| ws.contains(w));
    let mut out: Vec<Vec<String>> = c
        .series
        .iter()
        .zip(&words)
        .map(|(s, ws)| {
            let own: Vec<&str> = ws.iter().filter(|w| !shared(w)).copied().collect();
            let text = if own.is_empty() {
                s.name.clone()
            } else {
                own.join(" ")
            };
            let mut lines = wrap(&text, LEGEND_CHARS);
            if lines.len() > max_lines {
                lines.truncate(max_lines);
                let last = format!("{}…", lines[max_lines - 1]);
                lines[max_lines - 1] = truncate(&last, LEGEND_CHARS);
            }
            lines
        })
        .collect();
    for i in 0..out.len() {
        if out[..i].contains(&out[i]) || out[i + 1..].contains(&out[i]) {
            let last = out[i].len() - 1;
            let tagged = format!("{} (#{})", out[i][last], i + 1);
            out[i][last] = tagged;
        }
    }
    out
}

fn legend_width(c: &Chart) -> u32 {
    let flagged = c.series.iter().flat_map(|s| &s.points).any(|p| p.flagged);
    let longest = legend_labels(c)
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .chain(flagged.then_some(20))
        .max()
        .unwrap_or(0);
    if c.series.len() <= 1 && !flagged {
        return 10;
    }
    (longest.min(LEGEND_CHARS + 6) as u32 * 8 + 44).clamp(90, 360)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}…")
    }
}

fn draw_legend(c: &Chart, area: &DrawingArea<SVGBackend, Shift>) -> Result<(), Err> {
    if c.series.len() <= 1 && !c.series.iter().flat_map(|s| &s.points).any(|p| p.flagged) {
        return Ok(());
    }
    let mut y = LEGEND_TOP;
    let font = ("sans-serif", 14).into_font();
    for (i, lines) in legend_labels(c).iter().enumerate() {
        area.draw(&Rectangle::new(
            [(4, y), (16, y + 12)],
            color(c.color(i)).filled(),
        ))
        .map_err(e)?;
        for l in lines {
            area.draw(&Text::new(l.clone(), (22, y), font.clone()))
                .map_err(e)?;
            y += LEGEND_LINE_PX;
        }
        y += LEGEND_GAP_PX;
    }
    if c.series.iter().flat_map(|s| &s.points).any(|p| p.flagged) {
        y += 6;
        area.draw(&Circle::new((10, y + 6), 6, FLAG.stroke_width(2)))
            .map_err(e)?;
        area.draw(&Text::new("flagged (see notes)", (22, y), font.clone()))
            .map_err(e)?;
    }
    Ok(())
}

/// The (transformed) data ranges the plot shows: categories, points, whiskers, bands, stacks.
fn extent(c: &Chart, fx: &dyn Fn(f64) -> f64, fy: &dyn Fn(f64) -> f64) -> (f64, f64, f64, f64) {
    let pts = || c.series.iter().flat_map(|s| &s.points);
    let categorical = !c.x.categories.is_empty();
    let (x0, x1) = if categorical {
        (-0.5, c.x.categories.len() as f64 - 0.5)
    } else {
        let r = range(
            pts()
                .map(|p| fx(p.x))
                .chain(c.bands.iter().flat_map(|b| [b.x0, b.x1])),
            false,
        );
        let d = pts().map(|p| fx(p.x)).fold(f64::NEG_INFINITY, f64::max);
        (
            r.0.max(pts().map(|p| fx(p.x)).fold(f64::INFINITY, f64::min) - (r.1 - r.0) * 0.02),
            r.1.min(d + (r.1 - r.0) * 0.03),
        )
    };
    let ys = pts()
        .flat_map(|p| [Some(p.y), p.lo, p.hi])
        .flatten()
        .chain(c.y.include.iter().copied())
        .map(fy);
    let stacked_max = stacked_totals(c).into_iter().fold(0.0, f64::max);
    let zero = c.y.scale == Scale::Linear;
    let (y0, y1) = range(
        ys.chain(std::iter::once(if c.kind == Kind::Stacked {
            stacked_max
        } else {
            f64::NAN
        })),
        zero,
    );
    (x0, x1, y0, y1)
}

fn draw_plot(c: &Chart, area: &DrawingArea<SVGBackend, Shift>) -> Result<Frame, Err> {
    let cap = nines_cap(c);
    let fx = tf(c.x.scale, cap);
    let fy = tf(c.y.scale, cap);
    let categorical = !c.x.categories.is_empty();
    let (x0, x1, y0, y1) = extent(c, &fx, &fy);
    let mut cc = ChartBuilder::on(area)
        .caption(&c.title, ("sans-serif", 19))
        .margin(12)
        .x_label_area_size(if categorical { 56 } else { 40 })
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let xt = if categorical {
        Vec::new()
    } else {
        ticks(&c.x, x0, x1, cap)
    };
    let yt = ticks(&c.y, y0, y1, cap);
    {
        let mut mesh = cc.configure_mesh();
        mesh.x_desc(c.x.label.as_str())
            .y_desc(c.y.label.as_str())
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .y_label_formatter(&|v| fmt(*v))
            .x_label_formatter(&|v| fmt(*v));
        if categorical || !xt.is_empty() {
            mesh.x_labels(0).disable_x_mesh();
        }
        if !yt.is_empty() {
            mesh.y_labels(0).disable_y_mesh();
        }
        mesh.draw().map_err(e)?;
    }
    let frame = {
        let a = cc.backend_coord(&(x0, y0));
        let b = cc.backend_coord(&(x1, y1));
        Frame {
            px0: a.0,
            px1: b.0,
            py0: b.1,
            py1: a.1,
            x0,
            x1,
        }
    };
    manual_ticks(area, &mut cc, c, &xt, &yt, (x0, x1, y0, y1))?;
    draw_bands(area, &mut cc, c, (x0, x1, y0, y1))?;
    match c.kind {
        Kind::Lines => draw_lines(&mut cc, c, &fx, &fy, x1 - x0)?,
        Kind::Bars => draw_bars(&mut cc, c, &fy)?,
        Kind::Stacked => draw_stacked(&mut cc, c)?,
    }
    Ok(frame)
}

/// Pixels a character of a band's label takes (13 px sans-serif, generously).
const BAND_CHAR_PX: i32 = 7;

/// Shades each band; labels one only where its text fits between the previous label and the
/// plot's right edge, so that many bands (checkpoints every few seconds) never overprint each
/// other or run into the legend; the bands left unlabelled are shaded alike, and the chart's
/// table names every one.
fn draw_bands(
    area: &DrawingArea<SVGBackend, Shift>,
    cc: &mut Cc,
    c: &Chart,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
) -> Result<(), Err> {
    let right = cc.backend_coord(&(x1, y1)).0;
    let mut free_from = i32::MIN;
    for b in &c.bands {
        cc.draw_series(std::iter::once(Rectangle::new(
            [(b.x0.max(x0), y0), (b.x1.min(x1), y1)],
            RGBColor(0x88, 0x88, 0x88).mix(0.15).filled(),
        )))
        .map_err(e)?;
        let p = cc.backend_coord(&(b.x0.max(x0), y1));
        let width = b.label.chars().count() as i32 * BAND_CHAR_PX;
        if p.0 + 3 < free_from || p.0 + 3 + width > right {
            continue;
        }
        area.draw(&Text::new(
            b.label.clone(),
            (p.0 + 3, p.1 + 3),
            ("sans-serif", 13),
        ))
        .map_err(e)?;
        free_from = p.0 + 3 + width + 6;
    }
    Ok(())
}

type Cc<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn manual_ticks(
    area: &DrawingArea<SVGBackend, Shift>,
    cc: &mut Cc,
    c: &Chart,
    xt: &[(f64, String)],
    yt: &[(f64, String)],
    r: (f64, f64, f64, f64),
) -> Result<(), Err> {
    let (x0, x1, y0, y1) = r;
    let grid = RGBColor(0xdd, 0xdd, 0xdd);
    let font = ("sans-serif", 14).into_font();
    let off = area.get_base_pixel();
    let label = |pos: (i32, i32), text: &str, anchor: (HPos, VPos)| -> Result<(), Err> {
        let style = font.clone().color(&BLACK).pos(Pos::new(anchor.0, anchor.1));
        area.draw(&Text::new(
            text.to_string(),
            (pos.0 - off.0, pos.1 - off.1),
            style,
        ))
        .map_err(e)
    };
    let mut xl: Vec<((i32, i32), Vec<String>)> = Vec::new();
    for (x, t) in xt {
        xl.push((cc.backend_coord(&(*x, y0)), axis_lines(t, 25)));
    }
    let cats = category_labels(c);
    for (i, lines) in cats.iter().enumerate() {
        xl.push((cc.backend_coord(&(i as f64, y0)), lines.clone()));
    }
    for (p, lines) in xl {
        for (k, line) in lines.iter().enumerate() {
            label(
                (p.0, p.1 + 6 + 14 * k as i32),
                line,
                (HPos::Center, VPos::Top),
            )?;
        }
    }
    for (y, t) in yt {
        let p = cc.backend_coord(&(x0, *y));
        label((p.0 - 6, p.1), t, (HPos::Right, VPos::Center))?;
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x0, *y), (x1, *y)],
            grid,
        )))
        .map_err(e)?;
    }
    for (x, _) in xt {
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(*x, y0), (*x, y1)],
            grid,
        )))
        .map_err(e)?;
    }
    Ok(())
}

/// Pixels a line of the category key takes.
const KEY_LINE_PX: u32 = 16;
/// Characters a key line holds (the SVG's width at the key's font).
const KEY_CHARS: usize = 112;

/// Characters a category's label may use per line: its share of the plot's width (the plot
/// is the chart's width less the legend, the y labels and the margins).
fn category_chars(c: &Chart) -> usize {
    let plot_px = WIDTH.saturating_sub(legend_width(c) + 64 + 24) as usize;
    (plot_px / c.x.categories.len().max(1) / 8).max(3)
}

/// Whether the categories are drawn as numbers with a key: when a name would not fit its
/// slot in three lines (it would be cut), a word of it would be broken other than after `_`,
/// `.`, `-`, `/` or `=` (`serializabl e`), or two names would read alike once wrapped.
fn numbered(c: &Chart) -> bool {
    let n = category_chars(c);
    let broken = |t: &String| {
        t.split(' ')
            .flat_map(|w| w.split_inclusive(['_', '.', '-', '/', '=']))
            .any(|piece| piece.chars().count() > n)
    };
    let drawn: Vec<Vec<String>> = c.x.categories.iter().map(|t| axis_lines(t, n)).collect();
    let cut = drawn.iter().flatten().any(|l| l.ends_with('…'));
    let alike = (1..drawn.len()).any(|i| drawn[..i].contains(&drawn[i]));
    cut || alike || c.x.categories.iter().any(broken)
}

/// The categories' axis labels as lines: their names, wrapped to their slot; or, when those
/// would be cut or read alike ([`numbered`]), their numbers `1`, `2`, … which the key under
/// the plot spells out.
pub fn category_labels(c: &Chart) -> Vec<Vec<String>> {
    if numbered(c) {
        return (1..=c.x.categories.len())
            .map(|i| vec![i.to_string()])
            .collect();
    }
    let n = category_chars(c);
    c.x.categories.iter().map(|t| axis_lines(t, n)).collect()
}

/// The key of numbered categories, one line per category (`1  name`), longer names wrapped
/// onto indented lines; empty when the categories carry their names.
pub fn category_key(c: &Chart) -> Vec<String> {
    if c.x.categories.is_empty() || !numbered(c) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, name) in c.x.categories.iter().enumerate() {
        let head = format!("{}  ", i + 1);
        let body = wrap(name, KEY_CHARS - head.len());
        for (k, line) in body.into_iter().enumerate() {
            let lead = if k == 0 {
                head.clone()
            } else {
                " ".repeat(head.len() + 2)
            };
            out.push(format!("{lead}{line}"));
        }
    }
    out
}

/// Draws the category key under the plot.
fn draw_key(key: &[String], area: &DrawingArea<SVGBackend, Shift>) -> Result<(), Err> {
    let font = ("sans-serif", 13).into_font();
    for (i, line) in key.iter().enumerate() {
        let y = 4 + i as i32 * KEY_LINE_PX as i32;
        // a continuation line (indented with spaces, which SVG text collapses) is moved right
        let x = if line.starts_with(' ') { 64 } else { 24 };
        area.draw(&Text::new(
            line.trim_start().to_string(),
            (x, y),
            font.clone(),
        ))
        .map_err(e)?;
    }
    Ok(())
}

/// An axis label as at most three lines of `n` characters: broken at spaces, and words longer
/// than a line after `_`, `.`, `-`, `/` or `=` (else anywhere), so that labels of similar
/// names stay apart (`simple_update.sql` is not cut to `simp…`); what does not fit ends in `…`.
fn axis_lines(s: &str, n: usize) -> Vec<String> {
    // (piece, whether the next piece continues the same word)
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for w in s.split(' ') {
        let mut rest = w;
        while rest.chars().count() > n {
            let cut: usize = rest
                .char_indices()
                .take(n)
                .filter(|(_, c)| matches!(c, '_' | '.' | '-' | '/' | '='))
                .map(|(i, c)| i + c.len_utf8())
                .last()
                .unwrap_or_else(|| rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i));
            pieces.push((rest[..cut].to_string(), true));
            rest = &rest[cut..];
        }
        pieces.push((rest.to_string(), false));
    }
    let mut lines: Vec<String> = Vec::new();
    let mut attached = false;
    for (p, continues) in pieces {
        let sep = if attached { 0 } else { 1 };
        match lines.last_mut() {
            Some(l) if l.chars().count() + sep + p.chars().count() <= n => {
                if !attached {
                    l.push(' ');
                }
                l.push_str(&p);
            }
            _ => lines.push(p),
        }
        attached = continues;
    }
    if lines.len() > 3 {
        lines.truncate(3);
        lines[2] = truncate(&format!("{}…", lines[2]), n);
    }
    lines
}

/// Splits a label into lines of at most `n` characters at spaces (words longer are cut).
fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for w in s.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= n => {
                l.push(' ');
                l.push_str(w);
            }
            _ => lines.push(truncate(w, n)),
        }
    }
    lines
}

fn whisker(cc: &mut Cc, x: f64, lo: f64, hi: f64, half: f64, col: RGBColor) -> Result<(), Err> {
    let st = col.stroke_width(1);
    for path in [
        vec![(x, lo), (x, hi)],
        vec![(x - half, lo), (x + half, lo)],
        vec![(x - half, hi), (x + half, hi)],
    ] {
        cc.draw_series(std::iter::once(PathElement::new(path, st)))
            .map_err(e)?;
    }
    Ok(())
}

fn flag_ring(cc: &mut Cc, x: f64, y: f64) -> Result<(), Err> {
    cc.draw_series(std::iter::once(Circle::new(
        (x, y),
        7,
        FLAG.stroke_width(2),
    )))
    .map_err(e)?;
    Ok(())
}

fn draw_lines(
    cc: &mut Cc,
    c: &Chart,
    fx: &dyn Fn(f64) -> f64,
    fy: &dyn Fn(f64) -> f64,
    width: f64,
) -> Result<(), Err> {
    for (i, s) in c.series.iter().enumerate() {
        let col = color(c.color(i));
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (fx(p.x), fy(p.y)))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        cc.draw_series(LineSeries::new(pts.clone(), col.stroke_width(2)))
            .map_err(e)?;
        if pts.len() <= 40 {
            cc.draw_series(pts.iter().map(|p| Circle::new(*p, 3, col.filled())))
                .map_err(e)?;
        }
        for p in &s.points {
            let x = fx(p.x);
            if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                whisker(cc, x, fy(lo), fy(hi), width * 0.006, col)?;
            }
            if p.flagged {
                flag_ring(cc, x, fy(p.y))?;
            }
        }
    }
    Ok(())
}

fn draw_bars(cc: &mut Cc, c: &Chart, fy: &dyn Fn(f64) -> f64) -> Result<(), Err> {
    let m = c.series.len().max(1) as f64;
    let w = 0.8 / m;
    for (j, s) in c.series.iter().enumerate() {
        let col = color(c.color(j));
        for p in &s.points {
            let left = p.x - 0.4 + j as f64 * w;
            let mid = left + w / 2.0;
            cc.draw_series(std::iter::once(Rectangle::new(
                [(left + w * 0.05, 0.0), (left + w * 0.95, fy(p.y))],
                col.filled(),
            )))
            .map_err(e)?;
            if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                whisker(cc, mid, fy(lo), fy(hi), w * 0.2, BLACK)?;
            }
            if p.flagged {
                flag_ring(cc, mid, fy(p.y))?;
            }
        }
    }
    Ok(())
}

fn stacked_totals(c: &Chart) -> Vec<f64> {
    let mut t = vec![0.0; c.x.categories.len()];
    for s in &c.series {
        for p in &s.points {
            if let Some(v) = t.get_mut(p.x as usize) {
                *v = clamp_axis(*v + p.y);
            }
        }
    }
    t
}

fn draw_stacked(cc: &mut Cc, c: &Chart) -> Result<(), Err> {
    let mut base = vec![0.0; c.x.categories.len()];
    for (j, s) in c.series.iter().enumerate() {
        for p in &s.points {
            let Some(b) = base.get_mut(p.x as usize) else {
                continue;
            };
            cc.draw_series(std::iter::once(Rectangle::new(
                [(p.x - 0.35, *b), (p.x + 0.35, clamp_axis(*b + p.y))],
                color(c.color(j)).filled(),
            )))
            .map_err(e)?;
            *b = clamp_axis(*b + p.y);
        }
    }
    Ok(())
}

#[cfg(test)]
mod axis_tests {
    use super::{axis_lines, log_ticks};

    #[test]
    fn a_log_axis_within_one_decade_still_gets_three_labels_or_more() {
        let labels = |lo: f64, hi: f64| -> Vec<String> {
            log_ticks(lo.log10(), hi.log10())
                .into_iter()
                .map(|t| t.1)
                .collect()
        };
        // 2.2 ms to 8 ms: 1×, 2×, 5× give only "5"; every multiple gives 3 … 8
        assert_eq!(labels(2.2, 8.0), ["3", "4", "5", "6", "7", "8"]);
        assert_eq!(labels(1.0, 1000.0), ["1", "10", "100", "1000"]);
        assert_eq!(labels(0.5, 5000.0), ["1", "10", "100", "1000"]);
    }

    #[test]
    fn long_names_break_at_their_separators_instead_of_being_cut() {
        let l = axis_lines("simple_update.sql · insert_rows.sql", 12);
        assert_eq!(l, ["simple_", "update.sql ·", "insert_rows…"]);
        assert_eq!(
            axis_lines("4 · read committed", 12),
            ["4 · read", "committed"]
        );
        assert_eq!(
            axis_lines("abcdefghijklmnop", 6),
            ["abcdef", "ghijkl", "mnop"]
        );
    }
}
