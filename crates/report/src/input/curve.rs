//! Percentile curves (quantile → latency) from an HDR histogram's buckets or from raw latencies.

/// From `[value µs, count]` buckets in ascending value order: the quantile reached at each bucket.
pub fn from_buckets(buckets: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let total: f64 = buckets.iter().map(|b| b.1).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let mut seen = 0.0;
    let mut out = Vec::with_capacity(buckets.len());
    for &(us, count) in buckets {
        seen += count;
        out.push((seen / total, us / 1000.0));
    }
    thin(out)
}

/// From latencies in µs (any order).
pub fn from_samples(mut us: Vec<f64>) -> Vec<(f64, f64)> {
    if us.is_empty() {
        return Vec::new();
    }
    us.sort_by(f64::total_cmp);
    let n = us.len() as f64;
    let pts = us
        .iter()
        .enumerate()
        .map(|(i, v)| ((i + 1) as f64 / n, v / 1000.0))
        .collect();
    thin(pts)
}

/// At most ~200 points, spaced evenly on the tail's log scale, the maximum always kept.
fn thin(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if pts.len() <= 200 {
        return pts;
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut next = 0.0f64;
    for &(q, ms) in &pts {
        let nines = -(1.0 - q).max(1e-9).log10();
        if nines >= next {
            out.push((q, ms));
            next = nines + 0.03;
        }
    }
    if let (Some(last), Some(kept)) = (pts.last(), out.last()) {
        if kept != last {
            out.push(*last);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_become_cumulative_quantiles() {
        let c = from_buckets(&[(100.0, 1.0), (200.0, 2.0), (1000.0, 1.0)]);
        assert_eq!(c, vec![(0.25, 0.1), (0.75, 0.2), (1.0, 1.0)]);
        assert!(from_buckets(&[]).is_empty());
    }

    #[test]
    fn many_samples_are_thinned_keeping_the_maximum() {
        let c = from_samples((1..=100_000).map(|i| i as f64).collect());
        assert!(c.len() < 400, "{}", c.len());
        assert_eq!(c.last(), Some(&(1.0, 100.0)));
    }
}
