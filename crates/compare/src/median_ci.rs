//! The median of a sample and its distribution-free confidence interval from order statistics:
//! [x(k), x(n+1-k)] covers the population median with probability P(k <= B <= n-k),
//! B ~ Binomial(n, 1/2). The narrowest such interval reaching the wanted level is chosen; when
//! even [min, max] falls short (n <= 5 for 95 %), that range is given with the level it achieves.

use serde::Serialize;

/// An interval and the confidence it actually has.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ci {
    pub lo: f64,
    pub hi: f64,
    /// achieved coverage, e.g. 0.9785 for n = 10 at 95 %
    pub level: f64,
}

/// Median of `xs` (mean of the two middle values for even n); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    let s = sorted(xs);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// The order-statistic interval for the median at `level` (e.g. 0.95); `None` below 2 values.
pub fn median_ci(xs: &[f64], level: f64) -> Option<Ci> {
    let s = sorted(xs);
    let n = s.len();
    if n < 2 {
        return None;
    }
    // the largest k (1-based, k <= n/2) whose interval still covers with >= level
    let mut k = 1;
    while k < n / 2 && coverage(n, k + 1) >= level {
        k += 1;
    }
    Some(Ci {
        lo: s[k - 1],
        hi: s[n - k],
        level: coverage(n, k),
    })
}

/// P(k <= B <= n-k) for B ~ Binomial(n, 1/2): 1 - 2 P(B <= k-1).
pub fn coverage(n: usize, k: usize) -> f64 {
    let below: f64 = (0..k).map(|i| binomial_half_pmf(n, i)).sum();
    (1.0 - 2.0 * below).max(0.0)
}

/// C(n, i) / 2^n, in logarithms so that large n neither overflows nor underflows early.
fn binomial_half_pmf(n: usize, i: usize) -> f64 {
    let ln_c = libm::lgamma(n as f64 + 1.0)
        - libm::lgamma(i as f64 + 1.0)
        - libm::lgamma((n - i) as f64 + 1.0);
    (ln_c - n as f64 * std::f64::consts::LN_2).exp()
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

#[cfg(test)]
mod tests {
    //! Reference: the order statistics of the 95 % confidence interval for the median in
    //! published tables (e.g. Conover, Practical Nonparametric Statistics, Table A3 via the
    //! binomial; Campbell & Gardner, BMJ 1988, "Calculating confidence intervals for some
    //! non-parametric analyses", Table 1: n = 6 → 1st and 6th, n = 10 → 2nd and 9th,
    //! n = 20 → 6th and 15th). Coverage by hand: n = 10, k = 2: 1 - 2(1 + 10)/1024 = 0.97852;
    //! n = 20, k = 6: 1 - 2(1 + 20 + 190 + 1140 + 4845 + 15504)/2^20 = 0.95861.
    use super::*;

    fn ranks_of(ci: Ci) -> (usize, usize) {
        (ci.lo as usize, ci.hi as usize)
    }

    fn one_to(n: usize) -> Vec<f64> {
        // values equal to their rank, shuffled so sorting is exercised
        let mut v: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        v.reverse();
        v
    }

    #[test]
    fn published_ranks_of_the_95_percent_interval() {
        for (n, lo, hi, level) in [
            (6, 1, 6, 0.96875),
            (10, 2, 9, 0.978516),
            (20, 6, 15, 0.958611),
            (30, 10, 21, 0.957226),
            (50, 18, 33, 0.967160),
        ] {
            let ci = median_ci(&one_to(n), 0.95).unwrap();
            assert_eq!(ranks_of(ci), (lo, hi), "n = {n}");
            assert!((ci.level - level).abs() < 1e-5, "n = {n}: {}", ci.level);
        }
    }

    #[test]
    fn small_samples_state_the_level_they_reach() {
        // n = 5: [min, max] covers 1 - 2/32 = 0.9375 < 0.95; n = 2: 1 - 2/4 = 0.5
        let ci = median_ci(&[3.0, 1.0, 2.0, 5.0, 4.0], 0.95).unwrap();
        assert_eq!((ci.lo, ci.hi), (1.0, 5.0));
        assert!((ci.level - 0.9375).abs() < 1e-12);
        assert!((median_ci(&[1.0, 2.0], 0.95).unwrap().level - 0.5).abs() < 1e-12);
        assert!(median_ci(&[1.0], 0.95).is_none());
    }

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn large_samples_do_not_underflow() {
        let ci = median_ci(&one_to(2000), 0.95).unwrap();
        // exact binomial sums in integers (Python's math.comb) give k = 956; the normal
        // approximation n/2 - 1.96 sqrt(n)/2 = 956.2 agrees
        assert_eq!((ci.lo, ci.hi), (956.0, 1045.0), "{ci:?}");
        assert!(ci.level >= 0.95);
    }
}
