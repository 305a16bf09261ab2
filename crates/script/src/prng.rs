//! pg_prng (xoroshiro128** seeded through splitmix64), bit-exact with PostgreSQL 15+.
//!
//! Facts (see the reference, §8.1): the state is two 64-bit words filled by two splitmix64 steps
//! from the seed (an all-zero state is replaced by a fixed non-zero one); each output is
//! `rotl(s0 * 5, 7) * 9`; ranges use bitmask rejection; doubles take the top 52 bits.

/// One pg_prng state. Cheap to copy: the runner saves it at transaction start to replay a retried
/// transaction with the same random values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prng {
    pub s0: u64,
    pub s1: u64,
}

/// One splitmix64 step: advances `x` and returns the mixed output.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Position (0-based) of the most significant set bit; `x` must be non-zero.
#[inline]
pub(crate) fn leftmost_one_pos64(x: u64) -> u32 {
    63 - x.leading_zeros()
}

impl Prng {
    /// `pg_prng_seed`: a state derived from a 64-bit seed.
    pub fn seed(seed: u64) -> Prng {
        let mut x = seed;
        let s0 = splitmix64(&mut x);
        let s1 = splitmix64(&mut x);
        if s0 == 0 && s1 == 0 {
            Prng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            Prng { s0, s1 }
        }
    }

    /// `pg_prng_uint64`: the next raw 64-bit output (xoroshiro128**).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range`: uniform in `lo..=hi` (returns `lo` when `hi <= lo`).
    #[inline]
    pub fn uint64_range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let range = hi - lo;
        let rshift = 63 - leftmost_one_pos64(range);
        loop {
            let v = self.next_u64() >> rshift;
            if v <= range {
                return lo + v;
            }
        }
    }

    /// `pg_prng_double`: uniform in `[0, 1)` with 52 random bits.
    #[inline]
    pub fn double(&mut self) -> f64 {
        // (v >> 12) < 2^52 converts exactly; scaling by 2^-52 is exact (ldexp).
        (self.next_u64() >> 12) as f64 * (1.0 / 4_503_599_627_370_496.0)
    }

    /// `pg_prng_double_normal`: one Box-Muller normal variate (mean 0, stddev 1).
    pub fn double_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_zero_uses_splitmix_outputs() {
        // splitmix64 from 0: the published first outputs of the reference generator.
        let p = Prng::seed(0);
        assert_eq!(p.s0, 0xE220_A839_7B1D_CDAF);
        assert_eq!(p.s1, 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn range_with_empty_or_reversed_bounds_returns_lo() {
        let mut p = Prng::seed(1);
        let before = p;
        assert_eq!(p.uint64_range(7, 7), 7);
        assert_eq!(p.uint64_range(9, 3), 9);
        assert_eq!(p, before, "no draw for a one-value range");
    }

    #[test]
    fn range_stays_in_bounds() {
        let mut p = Prng::seed(42);
        for _ in 0..10_000 {
            let v = p.uint64_range(10, 19);
            assert!((10..=19).contains(&v));
        }
        for _ in 0..1000 {
            let _ = p.uint64_range(0, u64::MAX);
        }
    }

    #[test]
    fn double_is_in_unit_interval() {
        let mut p = Prng::seed(7);
        for _ in 0..10_000 {
            let d = p.double();
            assert!((0.0..1.0).contains(&d));
        }
    }

    #[test]
    fn normal_is_finite() {
        let mut p = Prng::seed(7);
        for _ in 0..10_000 {
            assert!(p.double_normal().is_finite());
        }
    }
}
