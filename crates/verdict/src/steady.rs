//! Warm-up and steady state of a per-interval series (transactions per second): the initial
//! transient found by **MSER-5** (White, "An effective truncation heuristic for bias reduction
//! in simulation output", Simulation 69(6), 1997; batches of 5 as in White, Cobb and Spratt
//! 2000), the steady window after it with its mean and 95 % confidence interval from the batch
//! means, and a trend inside the window (least-squares slope of the batch means, t-test).
//!
//! MSER: with the series cut into batches of 5 intervals and `Y_1..Y_k` their means, truncating
//! `d` batches leaves the mean `Ȳ(d)` of `Y_{d+1..k}`; the rule takes the `d` that minimises
//! `MSER(d) = Σ_{j>d} (Y_j − Ȳ(d))² / (k − d)²`, the squared standard error of the truncated
//! mean: warm-up batches far from the steady level raise it, so cutting them lowers it, until
//! the shrinking sample raises it again. The search runs over the first half (`d ≤ k/2`, as
//! MSER is unstable on the last few batches); a minimum on that bound means MSER was still
//! falling, so no steady state was reached in the first half (the series kept changing).

use crate::tquantile::t975;

/// Intervals per batch (MSER-5).
pub const BATCH: usize = 5;

/// Batches the steady window needs for its figures to be called steady: 6 (30 intervals).
pub const MIN_BATCHES: usize = 6;

/// A trend is reported when the window's fitted change from its first to its last batch is
/// significant (|t| above the 95 % critical value), at least this share of the mean, and more
/// than the per-interval noise (the standard deviation of the window's values): a drift the
/// eye sees on the chart.
pub const TREND_SHARE: f64 = 0.05;

/// A cut warm-up moves the figure when the whole run's mean differs from the window's by more
/// than its confidence interval and by at least this share.
pub const WARM_UP_SHARE: f64 = 0.02;

/// The steady window of a series and its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    /// intervals cut from the start (a multiple of [`BATCH`])
    pub warm_up: usize,
    /// intervals in the window (whole batches; a partial last batch is left out)
    pub window: usize,
    /// mean per interval over the window
    pub mean: f64,
    /// half-width of the mean's 95 % confidence interval (batch means, t with m − 1 df)
    pub ci95: f64,
    /// mean per interval over the whole series
    pub whole_mean: f64,
    /// the fitted change over the window, first batch to last (same unit as the series)
    pub drift: f64,
    /// the slope's t statistic
    pub drift_t: f64,
    /// the slope is significant and the drift at least [`TREND_SHARE`] of the mean
    pub trend: bool,
    /// MSER's minimum fell on the bound of its search (half the series) and what it cut moves
    /// the figure: no steady state was reached
    pub unsettled: bool,
}

impl Steady {
    /// Whether the window is long enough ([`MIN_BATCHES`]) to stand for the run.
    pub fn long_enough(&self) -> bool {
        self.window / BATCH >= MIN_BATCHES
    }

    /// Whether the cut warm-up moves the figure: the whole run's mean lies outside the steady
    /// window's 95 % confidence interval and [`WARM_UP_SHARE`] from its mean (on a level
    /// series MSER may cut a little noise, which does not).
    pub fn material_warm_up(&self) -> bool {
        let moved = (self.whole_mean - self.mean).abs();
        self.warm_up > 0 && moved > self.ci95 && moved > WARM_UP_SHARE * self.mean.abs()
    }
}

/// The batch means of `series` (a partial last batch left out).
fn batch_means(series: &[f64]) -> Vec<f64> {
    series
        .chunks_exact(BATCH)
        .map(|b| b.iter().sum::<f64>() / BATCH as f64)
        .collect()
}

/// MSER's truncation point in batches, searched over `d ≤ k/2`.
fn mser_truncation(y: &[f64]) -> usize {
    let k = y.len();
    let last = k / 2;
    // suffix sums make every MSER(d) O(1)
    let (mut sum, mut sq) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    for d in (0..k).rev() {
        sum += y[d];
        sq += y[d] * y[d];
        if d > last || d + 1 == k {
            continue;
        }
        let n = (k - d) as f64;
        let mean = sum / n;
        let ss = (sq - n * mean * mean).max(0.0);
        let mser = ss / (n * n);
        // ties go to the smaller truncation (visited later)
        if mser <= best.0 {
            best = (mser, d);
        }
    }
    best.1
}

/// Least-squares slope of `y` on its index, and the slope's t statistic (0 when undefined).
fn slope(y: &[f64]) -> (f64, f64) {
    let m = y.len();
    if m < 3 {
        return (0.0, 0.0);
    }
    let mx = (m - 1) as f64 / 2.0;
    let my = y.iter().sum::<f64>() / m as f64;
    let sxx: f64 = (0..m).map(|i| (i as f64 - mx).powi(2)).sum();
    let sxy: f64 = y
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 - mx) * (v - my))
        .sum();
    let b = sxy / sxx;
    let ssr: f64 = y
        .iter()
        .enumerate()
        .map(|(i, v)| (v - my - b * (i as f64 - mx)).powi(2))
        .sum();
    let se = (ssr / (m - 2) as f64 / sxx).sqrt();
    let t = if se > 0.0 {
        b / se
    } else if b == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(b)
    };
    (b, t)
}

/// The steady window of `series` (one value per interval); `None` for fewer than 2 batches.
pub fn steady(series: &[f64]) -> Option<Steady> {
    let y = batch_means(series);
    let k = y.len();
    if k < 2 {
        return None;
    }
    let d = mser_truncation(&y);
    let w = &y[d..];
    let m = w.len();
    let mean = w.iter().sum::<f64>() / m as f64;
    let var = w.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (m.max(2) - 1) as f64;
    let ci95 = t975(m.saturating_sub(1)) * (var / m as f64).sqrt();
    let (b, t) = slope(w);
    let drift = b * (m.saturating_sub(1)) as f64;
    let values = &series[d * BATCH..(d + m) * BATCH];
    let noise =
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64).sqrt();
    let trend = m >= 3
        && t.abs() > t975(m - 2)
        && drift.abs() >= TREND_SHARE * mean.abs()
        && drift.abs() > noise;
    let mut st = Steady {
        warm_up: d * BATCH,
        window: m * BATCH,
        mean,
        ci95: if ci95.is_finite() { ci95 } else { f64::NAN },
        whole_mean: series.iter().sum::<f64>() / series.len() as f64,
        drift,
        drift_t: t,
        trend,
        unsettled: false,
    };
    // on the bound and moving the figure: MSER was still falling
    st.unsettled = k >= 4 && d == k / 2 && st.material_warm_up();
    Some(st)
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
