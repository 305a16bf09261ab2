//! Random distributions, hash functions and `permute()`, bit-exact with pgbench 15+ (reference
//! §8.3–8.4), plus the per-thread helpers of the runner: Poisson throttling delays, weighted script
//! choice and log sampling.
//!
//! C's `(int64)` casts of doubles are reproduced as x86-64 performs them ([`c_double_to_i64`]),
//! and int64 arithmetic that is undefined in C but wraps in practice wraps here.

use crate::error::EvalError;
use crate::prng::{leftmost_one_pos64, Prng};
use crate::value::c_double_to_i64;

/// `random()` family argument check: `lb <= ub` and `ub - lb + 1` must fit in int64.
#[inline]
pub fn check_range(lb: i64, ub: i64) -> Result<(), EvalError> {
    if lb > ub {
        return Err(EvalError::msg("empty range given to random"));
    }
    match ub.checked_sub(lb).and_then(|d| d.checked_add(1)) {
        Some(_) => Ok(()),
        None => Err(EvalError::msg("random range is too large")),
    }
}

/// `getrand`: uniform in `min..=max` (caller guarantees `min <= max`).
#[inline]
pub fn uniform(rng: &mut Prng, min: i64, max: i64) -> i64 {
    let span = max.wrapping_sub(min) as u64;
    min.wrapping_add(rng.uint64_range(0, span) as i64)
}

/// `(max - min + 1)` as the C code computes it (int64, then converted to double).
#[inline]
fn width(min: i64, max: i64) -> f64 {
    max.wrapping_sub(min).wrapping_add(1) as f64
}

/// `getExponentialRand` (`param > 0` is checked by the caller; NaN passes like in C).
pub fn exponential(rng: &mut Prng, min: i64, max: i64, param: f64) -> i64 {
    let cut = (-param).exp();
    let u = 1.0 - rng.double();
    let r = -(cut + (1.0 - cut) * u).ln() / param;
    min.wrapping_add(c_double_to_i64(width(min, max) * r))
}

/// `getGaussianRand` (`param >= 2` is checked by the caller; NaN passes like in C).
pub fn gaussian(rng: &mut Prng, min: i64, max: i64, param: f64) -> i64 {
    let z = loop {
        let z = rng.double_normal();
        // C: `while (z < -param || z >= param)`; NaN comparisons are false, so NaN exits.
        if !(z < -param || z >= param) {
            break z;
        }
    };
    let r = (z + param) / (param * 2.0);
    min.wrapping_add(c_double_to_i64(width(min, max) * r))
}

/// `getZipfianRand`: Devroye's rejection method for `s` in [1.001, 1000] (checked by the caller
/// with [`check_zipfian`]; NaN would make pgbench loop forever, so it is rejected there).
pub fn zipfian(rng: &mut Prng, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    let x = if n <= 1 {
        1
    } else {
        let b = 2f64.powf(s - 1.0);
        loop {
            let u = rng.double();
            let v = rng.double();
            let x = u.powf(-1.0 / (s - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(s - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
                break c_double_to_i64(x);
            }
        }
    };
    min.wrapping_sub(1).wrapping_add(x)
}

/// Parameter checks of the three non-uniform distributions, with pgbench's messages.
pub fn check_exponential(param: f64) -> Result<(), EvalError> {
    if param <= 0.0 {
        return Err(EvalError::text(format!(
            "exponential parameter must be greater than zero (not {})",
            crate::format::F6(param)
        )));
    }
    Ok(())
}

pub fn check_gaussian(param: f64) -> Result<(), EvalError> {
    if param < 2.0 {
        return Err(EvalError::text(format!(
            "gaussian parameter must be at least 2.000000 (not {})",
            crate::format::F6(param)
        )));
    }
    Ok(())
}

/// Deviation: pgbench accepts NaN (its range test is false for NaN) and then never returns; we
/// report it as out of range instead of hanging the client.
pub fn check_zipfian(param: f64) -> Result<(), EvalError> {
    if !(1.001..=1000.0).contains(&param) {
        return Err(EvalError::text(format!(
            "zipfian parameter must be in range [1.001, 1000] (not {})",
            crate::format::F6(param)
        )));
    }
    Ok(())
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// `hash_fnv1a(val, seed)`: FNV-1a over the 8 little-endian bytes of `val`, basis xor `seed`.
pub fn hash_fnv1a(val: i64, seed: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS ^ seed as u64;
    let mut v = val;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        h ^= octet;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h as i64
}

/// `hash_murmur2(val, seed)` (`hash()`): MurmurHash64A of one 8-byte block.
pub fn hash_murmur2(val: i64, seed: i64) -> i64 {
    let mut h = (seed as u64) ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    h ^= k;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h as i64
}

/// One "multiply by an odd number, xor, rotate left by one" step on the low `masklen` bits.
#[inline]
fn scramble(x: u64, m: u64, r: u64, mask: u64, masklen: u32) -> u64 {
    let x = (x.wrapping_mul(m) ^ r) & mask;
    ((x << 1) & mask) | (x >> (masklen - 1))
}

/// `permute(val, size, seed)`: a pseudorandom permutation of `0..size` (size > 0 is checked by
/// the caller; sizes below 2 give 0).
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rs = Prng::seed(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    let masklen = leftmost_one_pos64(size);
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (rs.next_u64() & mask) | 1;
        let r = rs.next_u64() & mask;
        if v <= mask {
            v = scramble(v, m, r, mask, masklen);
        }
        let m = (rs.next_u64() & mask) | 1;
        let r = rs.next_u64() & mask;
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - scramble(t, m, r, mask, masklen);
        }
        let r = rs.uint64_range(0, size - 1);
        // v, r < size <= 2^63 - 1: the sum cannot overflow
        v = (v + r) % size;
    }
    v as i64
}

/// `getPoissonRand`: the next throttling delay (µs) for mean `center`:
/// `(int64)(-ln(1 - double()) * center + 0.5)`.
pub fn poisson(rng: &mut Prng, center: f64) -> i64 {
    let u = 1.0 - rng.double();
    c_double_to_i64(-u.ln() * center + 0.5)
}

/// `chooseScript`: index of the script for the next transaction, given each script's weight.
/// With one script no random number is drawn. `total` must be the sum of the weights (> 0).
pub fn choose_script(rng: &mut Prng, weights: &[i64], total: i64) -> usize {
    if weights.len() <= 1 {
        return 0;
    }
    let mut w = uniform(rng, 0, total - 1);
    for (i, &wt) in weights.iter().enumerate() {
        w -= wt;
        if w < 0 {
            return i;
        }
    }
    weights.len() - 1
}

/// Log sampling (`--sampling-rate`): true when this transaction's log line is kept.
/// pgbench skips the entry when `double() > rate`.
pub fn sample_keep(rng: &mut Prng, rate: f64) -> bool {
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let keep = !(rng.double() > rate);
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_is_inverse_transform_rounded() {
        let mut a = Prng::seed(3);
        let mut b = a;
        for _ in 0..100 {
            let u = 1.0 - b.double();
            let want = (-u.ln() * 1000.0 + 0.5) as i64;
            assert_eq!(poisson(&mut a, 1000.0), want);
        }
    }

    #[test]
    fn poisson_mean_is_close_to_center() {
        let mut r = Prng::seed(11);
        let n = 20_000;
        let sum: i64 = (0..n).map(|_| poisson(&mut r, 500.0)).sum();
        let mean = sum as f64 / n as f64;
        assert!((mean - 500.0).abs() < 15.0, "mean {mean}");
    }

    #[test]
    fn zero_weight_scripts_are_never_chosen() {
        let mut r = Prng::seed(5);
        for _ in 0..1000 {
            assert_ne!(choose_script(&mut r, &[2, 0, 3], 5), 1);
        }
    }

    #[test]
    fn sampling_keeps_everything_at_rate_one() {
        let mut r = Prng::seed(5);
        assert!((0..1000).all(|_| sample_keep(&mut r, 1.0)));
        let kept = (0..10_000).filter(|_| sample_keep(&mut r, 0.1)).count();
        assert!((800..1200).contains(&kept), "{kept}");
    }

    #[test]
    fn range_checks() {
        assert!(check_range(1, 1).is_ok());
        assert!(check_range(i64::MIN + 1, i64::MAX - 1).is_err());
        assert!(check_range(-(1 << 62), (1 << 62) - 2).is_ok());
        assert_eq!(
            check_range(2, 1).unwrap_err().to_string(),
            "empty range given to random"
        );
    }

    #[test]
    fn uniform_covers_full_width_ranges() {
        let mut r = Prng::seed(9);
        for _ in 0..1000 {
            let v = uniform(&mut r, i64::MIN + 1, i64::MAX - 1);
            assert!(v > i64::MIN && v < i64::MAX);
        }
    }
}
