//! YCSB's Zipfian generator (Gray et al., "Quickly Generating Billion-Record Synthetic
//! Databases", SIGMOD 1994) with YCSB's constants: item `base + i` is drawn with probability
//! proportional to `1 / (i + 1)^θ`; ζ(n, θ) = Σ_{i=1..n} i^-θ is computed once and, when the
//! item count grows (the `latest` distribution), extended incrementally, keeping η's `2 / items`
//! term at the item count the generator was made with, as YCSB does. The scrambled variant
//! draws from 10^10 items (ζ precomputed by YCSB for θ = 0.99) and hashes the draw down to the
//! key space with FNV-64.

use super::keys::fnv_hash64;
use super::rng::Rng;

/// YCSB's default Zipfian constant θ.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// The scrambled generator's item space (YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`).
pub const SCRAMBLED_ITEMS: i64 = 10_000_000_000;
/// ζ(10^10, 0.99) as YCSB hard-codes it (`ScrambledZipfianGenerator.ZETAN`).
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// Item counts up to this have ζ summed term by term; beyond, the first `EXACT_TERMS` are
/// summed and the rest by the Euler–Maclaurin formula (relative error far below 1e-12).
const EXACT_LIMIT: i64 = 10_000_000;
const EXACT_TERMS: i64 = 1_000_000;

/// Σ_{i=from..to-1} 1 / (i + 1)^θ added to `initial` (YCSB's `zetastatic(st, n, θ, sum)`).
pub fn zeta_range(from: i64, to: i64, theta: f64, initial: f64) -> f64 {
    if to - from <= EXACT_LIMIT {
        let mut sum = initial;
        for i in from..to {
            sum += 1.0 / ((i + 1) as f64).powf(theta);
        }
        return sum;
    }
    let mid = from + EXACT_TERMS;
    let head = zeta_range(from, mid, theta, initial);
    head + euler_maclaurin((mid + 1) as f64, to as f64, theta)
}

/// ζ(n, θ).
pub fn zeta(n: i64, theta: f64) -> f64 {
    zeta_range(0, n, theta, 0.0)
}

/// Σ_{k=a..b} k^-θ for integers a ≤ b, by Euler–Maclaurin up to the third derivative.
fn euler_maclaurin(a: f64, b: f64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        b.ln() - a.ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
}

/// A Zipfian distribution over `base..base + items`.
#[derive(Clone, Debug, PartialEq)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    /// the item count `zetan` covers
    count_for_zeta: i64,
}

impl Zipfian {
    /// Items `min..=max` with constant `theta`, ζ summed here.
    pub fn new(min: i64, max: i64, theta: f64) -> Zipfian {
        Zipfian::with_zeta(min, max, theta, zeta(max - min + 1, theta))
    }

    /// Items `min..=max` with a given ζ (YCSB's precomputed one for the scrambled space).
    pub fn with_zeta(min: i64, max: i64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(2, theta);
        let mut z = Zipfian {
            items,
            base: min,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: 0.0,
            zeta2theta,
            count_for_zeta: items,
        };
        z.eta = z.eta_for(zetan);
        z
    }

    fn eta_for(&self, zetan: f64) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / zetan)
    }

    /// The next value over the generator's own item count (ζ as made: no state changes).
    pub fn next(&self, rng: &mut Rng) -> i64 {
        self.draw(self.items, rng)
    }

    /// The next value over `item_count` items (ζ extended when it grew; a smaller count keeps
    /// ζ, as YCSB does unless told otherwise).
    pub fn next_of(&mut self, item_count: i64, rng: &mut Rng) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta_range(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = self.eta_for(self.zetan);
        }
        self.draw(item_count, rng)
    }

    fn draw(&self, item_count: i64, rng: &mut Rng) -> i64 {
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    /// The probability of the `rank`-th most likely item (0-based) under the exact Zipf law
    /// this generator approximates: `1 / ((rank + 1)^θ · ζ(n))`.
    pub fn share(&self, rank: i64) -> f64 {
        1.0 / ((rank + 1) as f64).powf(self.theta) / self.zetan
    }
}

/// YCSB's scrambled Zipfian: a Zipfian draw over 10^10 items, hashed onto `min..=max`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: i64,
    item_count: i64,
}

impl ScrambledZipfian {
    pub fn new(min: i64, max: i64, theta: f64) -> ScrambledZipfian {
        let zetan = if theta == ZIPFIAN_CONSTANT {
            SCRAMBLED_ZETAN
        } else {
            zeta(SCRAMBLED_ITEMS, theta)
        };
        ScrambledZipfian {
            gen: Zipfian::with_zeta(0, SCRAMBLED_ITEMS, theta, zetan),
            min,
            item_count: max - min + 1,
        }
    }

    pub fn next(&self, rng: &mut Rng) -> i64 {
        let r = self.gen.next(rng);
        self.min + fnv_hash64(r) % self.item_count
    }

    /// The underlying 10^10-item generator.
    pub fn inner(&self) -> &Zipfian {
        &self.gen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeta_of_the_scrambled_space_matches_ycsbs_constant() {
        let z = zeta(SCRAMBLED_ITEMS, ZIPFIAN_CONSTANT);
        assert!(
            (z - SCRAMBLED_ZETAN).abs() < 1e-9,
            "ζ(10^10, 0.99) = {z}, YCSB says {SCRAMBLED_ZETAN}"
        );
    }

    #[test]
    fn euler_maclaurin_agrees_with_the_exact_sum() {
        let exact = zeta_range(0, 3_000_000, 0.8, 0.0);
        let mixed = zeta_range(0, EXACT_TERMS, 0.8, 0.0)
            + euler_maclaurin((EXACT_TERMS + 1) as f64, 3_000_000.0, 0.8);
        assert!((exact - mixed).abs() / exact < 1e-12, "{exact} vs {mixed}");
    }

    #[test]
    fn incremental_zeta_equals_a_fresh_one() {
        let mut z = Zipfian::new(0, 999, 0.99);
        let mut rng = Rng::new(1, 1);
        z.next_of(1500, &mut rng);
        assert!((z.zetan - zeta(1500, 0.99)).abs() < 1e-9);
    }
}
