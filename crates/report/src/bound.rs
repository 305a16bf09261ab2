//! What one report may hold, whatever its inputs say: points of a run's time series, bytes of
//! an input file, bytes of the page. Hostile logs asked for 13.6 GB (two epochs a century
//! apart), a 240 MB page (an 11-day gap filled second by second), or hung the renderer; these
//! bounds keep the work of `report` proportional to what it is allowed to show.

use crate::model::Second;

/// Points one run's time series keeps. Longer series are merged into wider intervals: a run of
/// up to this many seconds is shown second by second.
pub const MAX_SERIES_POINTS: usize = 10_000;

/// Bytes read from one input file (JSON document or pgbench log).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Bytes of the page `report` writes.
pub const MAX_PAGE_BYTES: usize = 128 << 20;

/// Width in seconds of the intervals that cover `span` seconds with at most
/// [`MAX_SERIES_POINTS`] of them (1 when every second fits).
pub fn interval_width(span: f64) -> f64 {
    let n = MAX_SERIES_POINTS as f64;
    if span.is_finite() && span + 1.0 > n {
        ((span + 1.0) / n).ceil()
    } else {
        1.0
    }
}

/// `series` with at most [`MAX_SERIES_POINTS`] points: runs of consecutive points merged into
/// one (rates and means averaged, maxima kept, the end time of the last).
pub fn series(series: Vec<Second>) -> Vec<Second> {
    if series.len() <= MAX_SERIES_POINTS {
        return series;
    }
    let k = series.len().div_ceil(MAX_SERIES_POINTS);
    series.chunks(k).map(merge).collect()
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0.0), |(s, n), x| (s + x, n + 1.0));
    if n > 0.0 {
        sum / n
    } else {
        0.0
    }
}

fn mean_opt(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().collect();
    (!v.is_empty()).then(|| mean(v.into_iter()))
}

fn max_opt(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    xs.flatten().reduce(f64::max)
}

fn merge(c: &[Second]) -> Second {
    Second {
        t: c.last().map(|s| s.t).unwrap_or(0.0),
        tps: mean(c.iter().map(|s| s.tps)),
        latency_mean_ms: mean_opt(c.iter().map(|s| s.latency_mean_ms)),
        latency_p50_ms: mean_opt(c.iter().map(|s| s.latency_p50_ms)),
        latency_p99_ms: max_opt(c.iter().map(|s| s.latency_p99_ms)),
        latency_max_ms: max_opt(c.iter().map(|s| s.latency_max_ms)),
        failed: mean(c.iter().map(|s| s.failed)),
        retries: mean(c.iter().map(|s| s.retries)),
        checkpoints: c.iter().map(|s| s.checkpoints).sum(),
        wal_bytes: mean_opt(c.iter().map(|s| s.wal_bytes)),
        server_cpu: mean_opt(c.iter().map(|s| s.server_cpu)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_are_merged_to_the_limit() {
        let s: Vec<Second> = (0..25_000)
            .map(|i| Second {
                t: (i + 1) as f64,
                tps: 10.0,
                latency_max_ms: Some(i as f64),
                ..Second::default()
            })
            .collect();
        let b = series(s);
        assert!(b.len() <= MAX_SERIES_POINTS);
        assert_eq!(b[0].tps, 10.0);
        assert_eq!(b.last().unwrap().t, 25_000.0);
        assert_eq!(b.last().unwrap().latency_max_ms, Some(24_999.0));
    }

    #[test]
    fn widths_cover_any_span_in_the_limit() {
        assert_eq!(interval_width(0.0), 1.0);
        assert_eq!(interval_width(9_999.0), 1.0);
        assert_eq!(interval_width(950_400.0), 96.0);
        assert!(1e18 / interval_width(1e18) <= MAX_SERIES_POINTS as f64);
        assert_eq!(interval_width(f64::INFINITY), 1.0);
    }
}
