//! A chart as data (`Chart`: axes, series of points with their spread and flags, shaded bands,
//! notes and the table of its numbers), built by `choose` and drawn by `render` with plotters'
//! SVG backend. Nothing here knows where the numbers came from.

pub mod render;

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// log10 of the value (values ≤ 0 are left out)
    Log,
    /// quantiles as "nines" (-log10(1 - q)): the percentile curve's tail spread out
    Nines,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// non-empty: a categorical axis, x is the category's index
    pub categories: Vec<String>,
    /// non-empty: ticks exactly at these values (a matrix key's values, round numbers)
    pub marks: Vec<f64>,
    /// values the axis must span besides the data's (small multiples share one y range)
    pub include: Vec<f64>,
}

impl Axis {
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            categories: Vec::new(),
            marks: Vec::new(),
            include: Vec::new(),
        }
    }

    /// A categorical axis.
    pub fn categories(label: impl Into<String>, categories: Vec<String>) -> Axis {
        Axis {
            categories,
            ..Axis::linear(label)
        }
    }

    /// A numeric axis with ticks at `marks` (when there are few enough to read).
    pub fn marked(label: impl Into<String>, mut marks: Vec<f64>) -> Axis {
        marks.sort_by(f64::total_cmp);
        marks.dedup();
        if marks.len() > 15 {
            marks.clear();
        }
        Axis {
            marks,
            ..Axis::linear(label)
        }
    }
}

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// lines through the points, whiskers for the spread
    Lines,
    /// one bar per series in each category, whiskers for the spread
    Bars,
    /// bars of every series stacked per category
    Stacked,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    /// spread across repetitions (min–max)
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// a validity flag applies: drawn so it cannot be missed
    pub flagged: bool,
}

impl Pt {
    pub fn new(x: f64, y: f64) -> Pt {
        Pt {
            x,
            y,
            lo: None,
            hi: None,
            flagged: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Pt>,
}

/// A shaded range of x (ramp-up, tail after the deadline).
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// The numbers of a chart as a table (caption, column headers, rows of text).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub caption: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// each row's x on the chart (for hover and zoom; NaN: none)
    pub x: Vec<f64>,
    /// cells of text laid out by spaces (plans): left-aligned, spaces kept
    pub text: bool,
}

impl Table {
    pub fn new(caption: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            caption: caption.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            x: Vec::new(),
            text: false,
        }
    }

    /// Adds a row at chart position `x`.
    pub fn push(&mut self, x: f64, row: Vec<String>) {
        self.rows.push(row);
        self.x.push(x);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// unique in a report; names the SVG file and the HTML anchor
    pub id: String,
    pub title: String,
    /// the text alternative (SVG `<desc>`)
    pub desc: String,
    pub kind: Kind,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// shown under the chart: flags that apply, steady-window figures
    pub notes: Vec<String>,
    pub table: Table,
    /// the x range can be zoomed in the page (time axes)
    pub zoomable: bool,
    /// each series' colour (a palette index), the same for a series name across the page;
    /// empty: by position
    pub colors: Vec<usize>,
}

impl Chart {
    /// Series `i`'s palette index.
    pub fn color(&self, i: usize) -> usize {
        self.colors.get(i).copied().unwrap_or(i)
    }

    /// Whether there is anything to draw (an empty chart is never presented as a result).
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.points.iter().any(|p| p.y.is_finite()))
    }
}

/// A number as the tables and tooltips show it: 4 significant digits, no exponent for
/// everyday magnitudes.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-4..1e15).contains(&a) {
        format!("{v:.3e}")
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// Bytes as kB/MB/GB (powers of 1024), for size tables.
pub fn fmt_bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < UNITS.len() {
        x /= 1024.0;
        i += 1;
    }
    format!("{} {}", fmt(x), UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(fmt(1234.56), "1235");
        assert_eq!(fmt(12.3456), "12.35");
        assert_eq!(fmt(0.012345), "0.01235");
        assert_eq!(fmt(2.0), "2");
        assert_eq!(fmt(0.0), "0");
        assert_eq!(fmt(f64::NAN), "");
        assert_eq!(fmt_bytes(31686656.0), "30.22 MB");
    }
}
