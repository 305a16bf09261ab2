//! Mann–Whitney U against published values: R's `wilcox.test` results (each also computed by
//! hand below) and the two-sided α = 0.05 critical values of the standard U table.

use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn separated_samples_of_three_give_r_exact_p() {
    // R: wilcox.test(c(1,2,3), c(4,5,6)) -> W = 0, p-value = 0.1
    // by hand: U = 0 is 1 of C(6,3) = 20 arrangements, two-sided 2/20.
    let t = test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
    assert_eq!(t.u, 0.0);
    assert_eq!(t.method, Method::Exact);
    assert!(close(t.p, 0.1, 1e-12), "{t:?}");
    let t = test(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(t.u, 9.0);
    assert!(close(t.p, 0.1, 1e-12), "{t:?}");
}

#[test]
fn r_documentation_example_gives_its_p_value() {
    // R's ?wilcox.test two-sample example (Hollander & Wolfe, p. 110):
    //   wilcox.test(x, y, alternative = "g") -> W = 35, p-value = 0.1272
    // by hand: 382 of the C(15,5) = 3003 arrangements have U >= 35; two-sided 2 * 382 / 3003.
    let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    let y = [1.15, 0.88, 0.90, 0.74, 1.21];
    let t = test(&x, &y).unwrap();
    assert_eq!(t.u, 35.0);
    assert_eq!(t.method, Method::Exact);
    assert!(close(t.p / 2.0, 0.1272, 5e-5), "{t:?}");
    assert!(close(t.p, 0.254412, 1e-6), "{t:?}");
}

/// The largest U whose exact two-sided p-value is at most 0.05.
fn critical_u(n1: usize, n2: usize) -> Option<usize> {
    let c = u_counts(n1, n2);
    let total: i128 = c.iter().sum();
    let mut tail = 0;
    let mut best = None;
    for (u, k) in c.iter().enumerate() {
        tail += k;
        if 2.0 * tail as f64 / total as f64 > 0.05 {
            break;
        }
        best = Some(u);
    }
    best
}

#[test]
fn exact_distribution_reproduces_the_critical_value_table() {
    // Two-tailed α = 0.05 critical values of U from the standard Mann–Whitney table (e.g.
    // Siegel & Castellan, Nonparametric Statistics, Table J; also printed in most textbooks).
    let table = [
        (4, 4, Some(0)),
        (5, 5, Some(2)),
        (6, 6, Some(5)),
        (7, 7, Some(8)),
        (8, 8, Some(13)),
        (9, 9, Some(17)),
        (10, 10, Some(23)),
        (20, 20, Some(127)),
        (5, 10, Some(8)),
        (3, 10, Some(3)),
        (3, 3, None),
        (2, 2, None),
    ];
    for (n1, n2, want) in table {
        assert_eq!(critical_u(n1, n2), want, "n1={n1} n2={n2}");
    }
    // the counts add up to C(n1+n2, n1): C(40, 20)
    assert_eq!(u_counts(20, 20).iter().sum::<i128>(), 137_846_528_820);
}

#[test]
fn ties_use_the_corrected_normal_approximation() {
    // R: wilcox.test(c(1,2,2,3,4), c(2,3,5,5,6,7)) -> W = 4.5, p-value = 0.06415 (with the
    // warning "cannot compute exact p-value with ties"). By hand: mid-ranks of x are
    // 1, 3, 3, 5.5, 7 (sum 19.5), U = 19.5 - 15 = 4.5; tie groups of 3, 2, 2 give
    // sum(t^3 - t) = 36; var = 30/12 * (12 - 36/110) = 29.1818; z = (4.5 - 15 + 0.5) / 5.4020
    // = -1.8512; p = 2 * Phi(-1.8512) = 0.06415.
    let t = test(&[1.0, 2.0, 2.0, 3.0, 4.0], &[2.0, 3.0, 5.0, 5.0, 6.0, 7.0]).unwrap();
    assert_eq!(t.u, 4.5);
    assert_eq!(t.method, Method::Normal);
    assert!(close(t.p, 0.06415, 5e-5), "{t:?}");
}

#[test]
fn large_samples_use_the_normal_approximation() {
    // 60 runs per side (no ties): x = 1..60, y = 20.5..79.5. U = 820 of 3600, var = 3600/12 * 121
    // = 36300, z = (820 - 1800 + 0.5) / 190.526 = -5.1410, p = 2.732e-7.
    let x: Vec<f64> = (1..=60).map(f64::from).collect();
    let y: Vec<f64> = (20..80).map(|v| v as f64 + 0.5).collect();
    let t = test(&x, &y).unwrap();
    assert_eq!((t.u, t.method), (820.0, Method::Normal));
    assert!(close(t.p / 2.732e-7, 1.0, 1e-3), "{t:?}");
}

#[test]
fn identical_values_are_not_a_difference() {
    let t = test(&[0.0, 0.0, 0.0], &[0.0, 0.0, 0.0, 0.0]).unwrap();
    assert_eq!(t.p, 1.0);
    assert!(test(&[], &[1.0]).is_none());
}

#[test]
fn smallest_reachable_p_and_runs_needed() {
    assert!(close(min_p(2, 2), 1.0 / 3.0, 1e-12));
    assert!(close(min_p(3, 3), 0.1, 1e-12));
    assert!(close(min_p(4, 4), 2.0 / 70.0, 1e-12));
    assert_eq!(runs_needed(0.05), 4);
    assert_eq!(runs_needed(0.01), 5, "2/252 = 0.0079");
}
