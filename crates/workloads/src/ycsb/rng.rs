//! The random stream each client (and each loaded row) draws from: SplitMix64, seeded from the
//! run's seed and the client's number (or the row's), so the same seed issues the same work.
//! Java's `ThreadLocalRandom` calls YCSB makes map onto [`Rng::next_f64`] (`nextDouble`) and
//! [`Rng::below`] (`Math.abs(nextLong()) % n`).

/// SplitMix64 (Steele, Lea and Flood): one 64-bit state, one add and a mix per value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    /// A stream for `(seed, stream)`: different streams of one seed do not overlap in practice.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng {
            state: seed ^ mix(stream.wrapping_add(1).wrapping_mul(GOLDEN)),
        };
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[0, n)` as YCSB draws it (a non-negative 63-bit value modulo `n`); `n > 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 1) % n
    }

    /// Uniform in `[lo, hi]` (YCSB's `UniformLongGenerator`).
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64 + 1) as i64
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(1, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::new(1, 0).next_u64(), Rng::new(1, 1).next_u64());
        let mut r = Rng::new(7, 3);
        for _ in 0..1000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
            assert!((5..=9).contains(&r.between(5, 9)));
        }
    }
}
