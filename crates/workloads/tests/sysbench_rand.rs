//! sysbench's random numbers: each `--rand-type` formula against the value computed here from
//! sysbench's published formula for the same uniform draws, and each distribution's shape
//! (special's hot spot, pareto's 80/20, zipfian's 1/k^e, gaussian's spread); digit templates;
//! the unique sequence.

use std::collections::HashSet;

use pgrig_workloads::sysbench::rand::{permute, Dist, RandType, Rng, Unique};
use pgrig_workloads::sysbench::seeding::Stream;
use pgrig_workloads::sysbench::sql::{C_TEMPLATE, PAD_TEMPLATE};

fn dist(kind: RandType) -> Dist {
    Dist::new(kind, 12, 1, 75, 0.2, 0.8)
}

/// `n` draws from `d` over `[a, b]`, each checked against `expect` computed from a clone of
/// the stream (the same doubles).
fn check_formula(d: &Dist, a: u32, b: u32, expect: impl Fn(&mut Rng) -> u32) {
    let mut rng = Rng::new(99, 1);
    for i in 0..20_000 {
        let mut twin = rng.clone();
        let got = d.default_value(&mut rng, a, b);
        assert_eq!(got, expect(&mut twin), "draw {i}");
        assert!((a..=b).contains(&got), "draw {i}: {got} outside [{a}, {b}]");
    }
}

#[test]
fn uniform_is_a_plus_u_times_the_range_width() {
    check_formula(&dist(RandType::Uniform), 1, 10_000, |r| {
        (1.0 + r.double() * 10_000.0).floor() as u32
    });
    check_formula(&dist(RandType::Uniform), 7, 7, |r| {
        r.double();
        7
    });
}

#[test]
fn gaussian_averages_rand_spec_iter_uniforms() {
    check_formula(&dist(RandType::Gaussian), 1, 1000, |r| {
        let sum: f64 = (0..12).map(|_| r.double() * 1000.0).sum();
        1 + (sum / 12.0).floor() as u32
    });
}

#[test]
fn special_sends_rand_spec_res_percent_to_the_middle_rand_spec_pct() {
    let (a, b) = (1u32, 100_000u32);
    check_formula(&dist(RandType::Special), a, b, |r| {
        let t = f64::from(b - a);
        let rnd = r.double();
        // 75% special: range_size = t * 100 / (100 - 75)
        if rnd * t * 4.0 < t {
            let sum: f64 = (0..12).map(|_| r.double()).sum();
            (f64::from(a) + sum * t / 12.0).floor() as u32
        } else {
            a + (rnd * (t * 0.01 + 1.0) + (t / 2.0 - t * 0.005)).floor() as u32
        }
    });
}

#[test]
fn pareto_is_the_range_times_u_to_the_power_ln_h_over_ln_1_minus_h() {
    let power = 0.2f64.ln() / 0.8f64.ln();
    check_formula(&dist(RandType::Pareto), 5, 5004, |r| {
        5 + (5000.0 * r.double().powf(power)).floor() as u32
    });
}

fn histogram(d: &Dist, a: u32, b: u32, n: usize) -> Vec<usize> {
    let mut rng = Rng::new(7, 2);
    let mut h = vec![0usize; (b - a + 1) as usize];
    for _ in 0..n {
        h[(d.default_value(&mut rng, a, b) - a) as usize] += 1;
    }
    h
}

#[test]
fn special_puts_three_quarters_of_the_values_in_the_middle_percent() {
    let h = histogram(&dist(RandType::Special), 1, 10_000, 200_000);
    let hot: usize = h[4949..5051].iter().sum();
    let share = hot as f64 / 200_000.0;
    assert!((0.75..0.78).contains(&share), "hot share {share}");
}

#[test]
fn pareto_with_h_0_2_puts_eighty_percent_in_the_first_fifth() {
    let h = histogram(&dist(RandType::Pareto), 1, 1000, 200_000);
    let low: usize = h[..200].iter().sum();
    let share = low as f64 / 200_000.0;
    assert!((share - 0.8).abs() < 0.005, "share {share}");
}

#[test]
fn zipfian_frequencies_follow_one_over_k_to_the_exponent() {
    let n = 100u32;
    let draws = 400_000;
    for e in [0.8, 1.0, 1.5] {
        let d = Dist::new(RandType::Zipfian, 12, 1, 75, 0.2, e);
        let h = histogram(&d, 1, n, draws);
        let norm: f64 = (1..=n).map(|k| f64::from(k).powf(-e)).sum();
        for k in [1u32, 2, 3, 10, 50] {
            let want = f64::from(k).powf(-e) / norm;
            let got = h[(k - 1) as usize] as f64 / draws as f64;
            assert!(
                (got - want).abs() < 0.004 + want * 0.03,
                "e={e} k={k}: {got} vs {want}"
            );
        }
    }
    // exponent 0: every value equally likely
    let d = Dist::new(RandType::Zipfian, 12, 1, 75, 0.2, 0.0);
    let h = histogram(&d, 1, 10, 100_000);
    assert!(h.iter().all(|c| (9_000..11_000).contains(c)), "{h:?}");
}

#[test]
fn gaussian_centres_on_the_middle_with_sysbenchs_spread() {
    let h = histogram(&dist(RandType::Gaussian), 1, 1000, 100_000);
    let mean: f64 = h
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1) as f64 * *c as f64)
        .sum::<f64>()
        / 100_000.0;
    let var: f64 = h
        .iter()
        .enumerate()
        .map(|(i, c)| ((i + 1) as f64 - mean).powi(2) * *c as f64)
        .sum::<f64>()
        / 100_000.0;
    assert!((mean - 500.5).abs() < 2.0, "mean {mean}");
    // the mean of 12 uniforms over 1000 values: sd = 1000 / sqrt(12 * 12)
    let sd = var.sqrt();
    assert!((sd - 1000.0 / 12.0).abs() < 2.0, "sd {sd}");
}

#[test]
fn digit_templates_give_uniform_digits_in_sysbenchs_groups() {
    assert_eq!(C_TEMPLATE.len(), 119);
    assert_eq!(PAD_TEMPLATE.len(), 59);
    let mut rng = Rng::new(1, 1);
    let mut counts = [0usize; 10];
    let mut out = Vec::new();
    for _ in 0..2000 {
        out.clear();
        rng.string_into(C_TEMPLATE, &mut out);
        let s = std::str::from_utf8(&out).unwrap();
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10);
        for g in groups {
            assert_eq!(g.len(), 11);
            for b in g.bytes() {
                counts[usize::from(b - b'0')] += 1;
            }
        }
    }
    let total: usize = counts.iter().sum();
    for c in counts {
        assert!((c as f64 / total as f64 - 0.1).abs() < 0.005, "{counts:?}");
    }
    out.clear();
    rng.string_into(b"@@-#", &mut out);
    assert!(
        out[..2].iter().all(u8::is_ascii_lowercase) && out[2] == b'-' && out[3].is_ascii_digit()
    );
}

#[test]
fn unique_numbers_never_repeat() {
    let u = Unique::seeded(5, 6);
    let mut seen = HashSet::new();
    for _ in 0..200_000 {
        assert!(seen.insert(u.next()));
    }
    // the permutation is a bijection on the numbers below the prime
    let sample: HashSet<u32> = (0..100_000u32)
        .map(|x| permute(x.wrapping_mul(40_503)))
        .collect();
    assert_eq!(sample.len(), 100_000);
    assert_eq!(permute(4_294_967_295), 4_294_967_295);
}

#[test]
fn streams_differ_by_thread_and_repeat_by_seed() {
    let draw = |seed, thread| {
        let mut r = Stream::Run {
            seed,
            background: 0,
            thread,
        }
        .rng();
        (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
    };
    assert_eq!(draw(1, 1), draw(1, 1));
    assert_ne!(draw(1, 1), draw(1, 2));
    assert_ne!(draw(1, 1), draw(2, 1));
    // a background thread takes the first worker's seed
    let after_one = Stream::Run {
        seed: 1,
        background: 1,
        thread: 0,
    }
    .rng()
    .next_u64();
    assert_eq!(after_one, draw(1, 1)[0]);
}
