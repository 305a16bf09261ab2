//! TPC-C's random values (clause 2.1, 4.3.2): a small seeded stream, uniform ranges, NURand
//! with its constants C (load-time and run-time, the run-time C_LAST constant kept within the
//! bounds of clause 2.1.6.1), a-strings and n-strings, the syllable last names, the "ORIGINAL"
//! marker, and a stateless permutation (the initial orders' customers).

/// A SplitMix64 stream: cheap, seedable from a row number (rows are generated independently).
#[derive(Clone, Debug)]
pub struct Rng(u64);

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(mix(seed))
    }

    /// The stream of row `k` of the table tagged `table`, under the dataset seed `seed`.
    pub fn for_row(seed: u64, table: u64, k: i64) -> Self {
        Rng(mix(
            mix(seed ^ table.wrapping_mul(0xA24B_AED4_963E_E407)) ^ k as u64
        ))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi]` (inclusive, as the specification writes `random(x, y)`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        // 128-bit multiply: unbiased enough and cheaper than a modulo
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as i64
    }

    /// Uniform in `(0, 1]`.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`.
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.range(0, a) | self.range(x, y)) + c) % (y - x + 1)) + x
    }

    /// An a-string (random alphanumeric characters) of `lo..=hi` characters appended to `out`.
    pub fn astring(&mut self, out: &mut Vec<u8>, lo: i64, hi: i64) {
        const ALNUM: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let n = self.range(lo, hi);
        for _ in 0..n {
            out.push(ALNUM[self.range(0, 61) as usize]);
        }
    }

    /// An n-string (random digits) of exactly `n` characters appended to `out`.
    pub fn nstring(&mut self, out: &mut Vec<u8>, n: usize) {
        for _ in 0..n {
            out.push(b'0' + self.range(0, 9) as u8);
        }
    }

    /// I_DATA / S_DATA: an a-string of 26..50 characters; in 10 % of rows "ORIGINAL" at a random
    /// position (clause 4.3.3.1).
    pub fn data_with_original(&mut self, out: &mut Vec<u8>) {
        let start = out.len();
        self.astring(out, 26, 50);
        if self.range(1, 100) <= 10 {
            let len = out.len() - start;
            let at = start + self.range(0, (len - 8) as i64) as usize;
            out[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
    }

    /// A zip code: 4 random digits then "11111".
    pub fn zip(&mut self, out: &mut Vec<u8>) {
        self.nstring(out, 4);
        out.extend_from_slice(b"11111");
    }
}

/// The syllables of clause 4.3.2.3.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): its three digits' syllables.
pub fn last_name(n: i64, out: &mut Vec<u8>) {
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[d as usize].as_bytes());
    }
}

/// The three NURand constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NurandC {
    /// for C_LAST (A = 255)
    pub c_last: i64,
    /// for C_ID (A = 1023)
    pub c_id: i64,
    /// for OL_I_ID (A = 8191)
    pub ol_i_id: i64,
}

impl NurandC {
    /// The load-time constants of a dataset seed.
    pub fn load(seed: u64) -> Self {
        let mut r = Rng::new(seed ^ 0x4C4F_4144);
        NurandC {
            c_last: r.range(0, 255),
            c_id: r.range(0, 1023),
            ol_i_id: r.range(0, 8191),
        }
    }

    /// Run-time constants for a run seed: C_LAST's differs from the load-time one by 65..=119
    /// but neither 96 nor 112 (clause 2.1.6.1); C_ID's and OL_I_ID's are drawn freely.
    pub fn run(load: NurandC, seed: u64) -> Self {
        let mut r = Rng::new(seed ^ 0x0052_554E);
        let c_last = loop {
            let c = r.range(0, 255);
            if valid_run_c_last(load.c_last, c) {
                break c;
            }
        };
        NurandC {
            c_last,
            c_id: r.range(0, 1023),
            ol_i_id: r.range(0, 8191),
        }
    }
}

/// Clause 2.1.6.1's bound on the C_LAST constants.
pub fn valid_run_c_last(load: i64, run: i64) -> bool {
    let delta = (run - load).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// A pseudo-random permutation of `0..n` (n ≤ 2^16), computable element by element: a 4-round
/// Feistel network on the smallest even number of bits covering `n`, walking cycles back into
/// range.
#[derive(Clone, Copy, Debug)]
pub struct Permutation {
    n: u32,
    half_bits: u32,
    key: u64,
}

impl Permutation {
    pub fn new(n: u32, key: u64) -> Self {
        let bits = 32 - (n.max(2) - 1).leading_zeros();
        Permutation {
            n,
            half_bits: bits.div_ceil(2),
            key,
        }
    }

    /// The image of `i` (< n).
    pub fn apply(&self, i: u32) -> u32 {
        let mut x = i;
        loop {
            x = self.round_trip(x);
            if x < self.n {
                return x;
            }
        }
    }

    fn round_trip(&self, x: u32) -> u32 {
        let mask = (1u32 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for round in 0..4u64 {
            let f = (mix(self.key ^ (round << 32) ^ u64::from(r)) as u32) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllables() {
        let mut b = Vec::new();
        last_name(371, &mut b);
        assert_eq!(b, b"PRICALLYOUGHT");
        b.clear();
        last_name(0, &mut b);
        assert_eq!(b, b"BARBARBAR");
    }

    #[test]
    fn permutation_is_a_bijection() {
        let p = Permutation::new(3000, 42);
        let mut seen = vec![false; 3000];
        for i in 0..3000 {
            let j = p.apply(i) as usize;
            assert!(!seen[j]);
            seen[j] = true;
        }
        assert!((0..3000).any(|i| p.apply(i) != i));
    }

    #[test]
    fn run_constant_keeps_the_specified_distance() {
        for seed in 0..200 {
            let l = NurandC::load(seed);
            let r = NurandC::run(l, seed * 7 + 1);
            assert!(valid_run_c_last(l.c_last, r.c_last), "{l:?} {r:?}");
        }
        assert!(!valid_run_c_last(0, 96) && !valid_run_c_last(10, 122) && valid_run_c_last(0, 65));
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut r = Rng::new(1);
        let mut hits = vec![0u32; 1000];
        for _ in 0..200_000 {
            let v = r.nurand(255, 0, 999, 123);
            assert!((0..=999).contains(&v));
            hits[v as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        let min = *hits.iter().min().unwrap();
        assert!(max > 4 * min.max(1), "max {max} min {min}");
    }

    #[test]
    fn original_appears_in_about_a_tenth() {
        let mut r = Rng::new(9);
        let mut n = 0;
        for _ in 0..10_000 {
            let mut b = Vec::new();
            r.data_with_original(&mut b);
            assert!((26..=50).contains(&b.len()));
            if b.windows(8).any(|w| w == b"ORIGINAL") {
                n += 1;
            }
        }
        assert!((800..1200).contains(&n), "{n}");
    }
}
