//! The Mann–Whitney U test (Wilcoxon rank-sum), two-sided: the exact null distribution when
//! both samples are small and hold no ties, the normal approximation with tie and continuity
//! correction otherwise — the same choice and formulas as R's `wilcox.test` (exact below 50 runs
//! per side), so its results can be checked against R. Pure; no I/O.

use serde::Serialize;

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The exact permutation distribution of U (no ties, fewer than [`EXACT_BELOW`] per side).
    Exact,
    /// Normal approximation with tie correction of the variance and a continuity correction.
    Normal,
}

/// Exact p-values are computed when both samples are smaller than this (as R does).
pub const EXACT_BELOW: usize = 50;

/// The outcome of a test of `x` against `y`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Test {
    /// U of the first sample: its rank sum minus n1(n1+1)/2 (R's `W`).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub method: Method,
}

/// Two-sided Mann–Whitney U test; `None` when either sample is empty.
pub fn test(x: &[f64], y: &[f64]) -> Option<Test> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (ranks, tie_sizes) = ranks(x, y);
    let r1: f64 = ranks[..n1].iter().sum();
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    if tie_sizes.is_empty() && n1 < EXACT_BELOW && n2 < EXACT_BELOW {
        let p = exact_p(u as usize, n1, n2);
        return Some(Test {
            u,
            p,
            method: Method::Exact,
        });
    }
    Some(Test {
        u,
        p: normal_p(u, n1, n2, &tie_sizes),
        method: Method::Normal,
    })
}

/// Mid-ranks (1-based) of `x` followed by `y` in the pooled sample, and the sizes of the tie
/// groups (only groups of two or more).
fn ranks(x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&a, &b| pooled[a].total_cmp(&pooled[b]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && pooled[order[j]] == pooled[order[i]] {
            j += 1;
        }
        let mid = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = mid;
        }
        if j - i > 1 {
            ties.push(j - i);
        }
        i = j;
    }
    (ranks, ties)
}

/// How many of the C(n1+n2, n1) equally likely arrangements give each value of U (index = U):
/// the coefficients of the Gaussian binomial coefficient [n1+n2 choose n1]_q, built as the
/// product over i = 1..n1 of (1 - q^(n2+i)) / (1 - q^i). Exact in integers for n1, n2 < 50.
pub fn u_counts(n1: usize, n2: usize) -> Vec<i128> {
    let mut c = vec![0i128; n1 * n2 + 1];
    c[0] = 1;
    for i in 1..=n1 {
        let up = n2 + i;
        for k in (up..c.len()).rev() {
            c[k] -= c[k - up];
        }
        for k in i..c.len() {
            c[k] += c[k - i];
        }
    }
    c
}

/// Two-sided exact p-value of U = `u`: twice the smaller tail, at most 1.
fn exact_p(u: usize, n1: usize, n2: usize) -> f64 {
    let c = u_counts(n1, n2);
    let total: i128 = c.iter().sum();
    let tail: i128 = if 2 * u > n1 * n2 {
        c[u..].iter().sum()
    } else {
        c[..=u].iter().sum()
    };
    (2.0 * tail as f64 / total as f64).min(1.0)
}

/// Two-sided p-value from the normal approximation (tie-corrected variance, continuity
/// correction of 0.5 towards the mean); 1 when every value is tied.
fn normal_p(u: f64, n1: usize, n2: usize, tie_sizes: &[usize]) -> f64 {
    let (a, b) = (n1 as f64, n2 as f64);
    let n = a + b;
    let ties: f64 = tie_sizes
        .iter()
        .map(|&t| (t * t * t - t) as f64)
        .sum::<f64>();
    let var = a * b / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let d = u - a * b / 2.0;
    let z = (d - 0.5 * d.signum()) / var.sqrt();
    // two-sided: 2 * min(Phi(z), 1 - Phi(z)) = erfc(|z| / sqrt 2)
    libm::erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// The smallest two-sided p-value any outcome can reach with these sample sizes (no ties):
/// 2 / C(n1+n2, n1). With 2 runs on each side it is 1/3, so no difference can be shown.
pub fn min_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    (2.0 / binomial(n1 + n2, n1)).min(1.0)
}

/// The fewest runs per side (equal sides) at which a difference can be significant at `alpha`.
pub fn runs_needed(alpha: f64) -> usize {
    (1..).find(|&k| min_p(k, k) < alpha).unwrap_or(usize::MAX)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

#[cfg(test)]
#[path = "mann_whitney_tests.rs"]
mod tests;
