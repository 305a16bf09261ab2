//! MSER-5 and the trend test on constructed series: a ramp then a level, a level from the
//! start, a drift, a series too short, a step down at the end, zeros.

use super::*;

/// Deterministic noise in [-1, 1) (a 64-bit LCG).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

fn level(n: usize, at: f64, noise: f64, seed: u64) -> Vec<f64> {
    let mut r = Noise(seed);
    (0..n).map(|_| at + noise * r.next()).collect()
}

#[test]
fn a_ramp_is_cut_and_the_level_after_it_is_the_steady_window() {
    // 20 s from 100 to 1000 tx/s, then 100 s at 1000 ± 50
    let mut s: Vec<f64> = (0..20).map(|i| 100.0 + 45.0 * i as f64).collect();
    s.extend(level(100, 1000.0, 50.0, 7));
    let st = steady(&s).unwrap();
    assert!((15..=25).contains(&st.warm_up), "warm-up {} s", st.warm_up);
    assert!((st.mean - 1000.0).abs() < 15.0, "{st:?}");
    assert!(st.whole_mean < st.mean - 50.0, "{st:?}");
    assert!(st.ci95 > 0.0 && st.ci95 < 20.0, "{st:?}");
    assert!(!st.trend && !st.unsettled && st.long_enough(), "{st:?}");
    assert!(st.material_warm_up(), "{st:?}");
}

#[test]
fn a_level_from_the_start_has_no_warm_up_and_no_trend() {
    for seed in 1..20 {
        let st = steady(&level(120, 500.0, 40.0, seed)).unwrap();
        // MSER may cut some noise; what it cuts does not move the figure beyond its interval
        assert!(!st.material_warm_up(), "seed {seed}: {st:?}");
        assert!(!st.trend, "seed {seed}: a false trend: {st:?}");
        assert!(!st.unsettled, "seed {seed}: {st:?}");
    }
}

#[test]
fn a_drift_inside_the_window_is_a_trend() {
    // 1000 tx/s falling by 2 a second (−24 % over 120 s), ± 30
    let mut r = Noise(3);
    let s: Vec<f64> = (0..120)
        .map(|i| 1000.0 - 2.0 * i as f64 + 30.0 * r.next())
        .collect();
    let st = steady(&s).unwrap();
    assert!(st.trend || st.unsettled, "{st:?}");
    if st.trend {
        assert!(st.drift < 0.0, "{st:?}");
    }
}

#[test]
fn a_small_drift_within_the_noise_is_no_trend() {
    // 1 % over the run, ± 10 %
    let mut r = Noise(11);
    let s: Vec<f64> = (0..120)
        .map(|i| 1000.0 - 0.08 * i as f64 + 100.0 * r.next())
        .collect();
    assert!(!steady(&s).unwrap().trend);
}

#[test]
fn a_run_of_ten_seconds_is_too_short() {
    let st = steady(&level(10, 800.0, 20.0, 5)).unwrap();
    assert!(!st.long_enough(), "{st:?}");
    assert!(steady(&level(9, 800.0, 20.0, 5)).is_none());
}

#[test]
fn a_level_that_only_comes_late_is_unsettled() {
    // rising for 80 s, level for the last 20 s
    let mut s: Vec<f64> = (0..80).map(|i| 10.0 * i as f64).collect();
    s.extend(level(20, 800.0, 5.0, 9));
    let st = steady(&s).unwrap();
    assert!(st.unsettled, "{st:?}");
}

#[test]
fn zeros_and_a_constant_give_a_window_without_noise() {
    let st = steady(&[0.0; 60]).unwrap();
    assert_eq!(
        (st.warm_up, st.mean, st.ci95, st.trend),
        (0, 0.0, 0.0, false)
    );
    let st = steady(&[250.0; 60]).unwrap();
    assert_eq!((st.warm_up, st.mean, st.trend), (0, 250.0, false));
}

#[test]
fn the_truncation_minimises_mser_over_the_first_batches() {
    // batch means 0, 10, 10, 10, 10: cutting the first batch makes MSER 0
    let mut s = vec![0.0; 5];
    s.extend([10.0; 20]);
    assert_eq!(steady(&s).unwrap().warm_up, 5);
}

/// No false alarm on clean, steady runs: over 500 level series of 60 to 300 s with 2 to 20 %
/// noise, no warm-up that moves the figure, no trend, nothing unsettled.
#[test]
fn level_series_raise_no_false_alarm() {
    let mut alarms = Vec::new();
    for seed in 0..500u64 {
        let n = 60 + (seed as usize * 7) % 241;
        let noise = 10.0 + (seed % 10) as f64 * 10.0;
        let st = steady(&level(n, 500.0, noise, seed + 100)).unwrap();
        if st.material_warm_up() || st.trend || st.unsettled {
            alarms.push(format!("seed {seed}, {n} s, ± {noise}: {st:?}"));
        }
    }
    assert!(
        alarms.is_empty(),
        "{} false alarms:\n{}",
        alarms.len(),
        alarms.join("\n")
    );
}

/// A warm-up from a third of the level to the level, over 10 to 40 s, followed by 120 s at the
/// level with 2 to 10 % noise: found every time, cut at between half the ramp and the ramp
/// plus 30 s (MSER may cut some noise after it), and the window's mean within 2 % of the level.
#[test]
fn ramps_of_every_length_are_found() {
    for ramp in [10usize, 15, 20, 30, 40] {
        for (i, noise) in [10.0, 25.0, 50.0].into_iter().enumerate() {
            let mut s: Vec<f64> = (0..ramp)
                .map(|t| 170.0 + 330.0 * t as f64 / ramp as f64)
                .collect();
            s.extend(level(120, 500.0, noise, (ramp * 10 + i) as u64));
            let st = steady(&s).unwrap();
            let case = format!("ramp {ramp} s, ± {noise}: {st:?}");
            assert!(st.material_warm_up() && !st.unsettled, "{case}");
            assert!(st.warm_up >= ramp / 2 && st.warm_up <= ramp + 30, "{case}");
            assert!((st.mean - 500.0).abs() < 10.0, "{case}");
        }
    }
}
