//! sysbench 1.0's random numbers: a xoroshiro128+ stream per thread (the original 2016
//! xoroshiro128+, rotations 55/14/36, as sysbench 1.0.20 has it; seeded as sysbench seeds it:
//! `seeding`), doubles in [0, 1) built from the top 52 bits, and `--rand-type`'s distributions with sysbench's formulas and its C conversions
//! (`uint32_t` arithmetic wraps, doubles convert to `uint32_t` as x86-64 C does: through a
//! 64-bit integer, modulo 2^32): uniform, gaussian (`--rand-spec-iter`
//! averaged uniforms), special (`--rand-spec-pct`/`--rand-spec-res`: 75% of the values in the
//! middle 1% of the range, the rest gaussian), pareto (`--rand-pareto-h`), and zipfian
//! (`--rand-zipfian-exp`, rejection-inversion sampling as in sysbench 1.1; 1.0.20 rejects the
//! name). Also the `#`/`@` string templates and the shared unique-number sequence
//! (`sysbench.rand.unique`).

use std::sync::atomic::{AtomicU32, Ordering};

/// The `--rand-type` distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl RandType {
    /// The names `--rand-type` accepts.
    pub const NAMES: [&'static str; 5] = ["uniform", "gaussian", "special", "pareto", "zipfian"];

    pub fn parse(name: &str) -> Option<RandType> {
        Some(match name {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return None,
        })
    }
}

/// One xoroshiro128+ stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 2],
}

/// splitmix64: turns any seed into well-mixed state words.
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream with state `s` (not all zero).
    pub fn from_state(s: [u64; 2]) -> Rng {
        Rng { s }
    }

    /// The state.
    pub fn state(&self) -> [u64; 2] {
        self.s
    }

    /// An arbitrary stream from `seed` and a stream number (not one of sysbench's: those
    /// come from `seeding::Stream`).
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut s = [splitmix64(&mut x), splitmix64(&mut x)];
        if s == [0, 0] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, mut s1] = self.s;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s[0] = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s[1] = s1.rotate_left(36);
        result
    }

    /// A double in [0, 1): the top 52 bits as the mantissa of a number in [1, 2), minus 1
    /// (sysbench's `sb_rand_uniform_double`).
    #[inline]
    pub fn double(&mut self) -> f64 {
        f64::from_bits((0x3FF << 52) | (self.next_u64() >> 12)) - 1.0
    }

    /// `sysbench.rand.uniform(a, b)`: `a + u * (b - a + 1)`, truncated.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        uniform_at(self.double(), a, b)
    }

    /// Fills `out` from `template`: `#` = a random digit, `@` = a random lowercase letter,
    /// anything else copied (`sysbench.rand.string`).
    #[inline]
    pub fn string_into(&mut self, template: &[u8], out: &mut Vec<u8>) {
        for &t in template {
            out.push(match t {
                b'#' => self.uniform(u32::from(b'0'), u32::from(b'9')) as u8,
                b'@' => self.uniform(u32::from(b'a'), u32::from(b'z')) as u8,
                other => other,
            });
        }
    }
}

impl Rng {
    /// `string_into` into `out` (as long as `template`).
    #[inline]
    pub fn string_fill(&mut self, template: &[u8], out: &mut [u8]) {
        for (o, &t) in out.iter_mut().zip(template) {
            *o = match t {
                b'#' => self.uniform(u32::from(b'0'), u32::from(b'9')) as u8,
                b'@' => self.uniform(u32::from(b'a'), u32::from(b'z')) as u8,
                other => other,
            };
        }
    }
}

/// The uniform formula at a given double `u` in [0, 1).
#[inline]
pub fn uniform_at(u: f64, a: u32, b: u32) -> u32 {
    c_u32(f64::from(a) + u * f64::from(b.wrapping_sub(a).wrapping_add(1)))
}

/// C's `(uint32_t) x` on x86-64 (truncation through a 64-bit integer: values past the range
/// wrap where Rust's `as u32` would saturate).
#[inline]
pub fn c_u32(x: f64) -> u32 {
    x as i64 as u32
}

/// A distribution's parameters, with sysbench's precomputed constants.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist {
    pub kind: RandType,
    /// `--rand-spec-iter`
    pub iter: u32,
    /// `--rand-spec-pct`
    pub pct: u32,
    /// `--rand-spec-res`
    pub res: u32,
    /// `--rand-pareto-h`
    pub pareto_h: f64,
    /// `--rand-zipfian-exp`
    pub zipf_exp: f64,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_s: f64,
    zipf_hx1: f64,
}

impl Dist {
    pub fn new(
        kind: RandType,
        iter: u32,
        pct: u32,
        res: u32,
        pareto_h: f64,
        zipf_exp: f64,
    ) -> Dist {
        Dist {
            kind,
            iter,
            pct,
            res,
            pareto_h,
            zipf_exp,
            iter_mult: 1.0 / f64::from(iter),
            pct_mult: f64::from(pct) / 100.0,
            pct_2_mult: f64::from(pct) / 200.0,
            res_mult: 100.0 / (100.0 - f64::from(res)),
            pareto_power: pareto_h.ln() / (1.0 - pareto_h).ln(),
            zipf_s: 2.0
                - h_integral_inverse(h_integral(2.5, zipf_exp) - h(2.0, zipf_exp), zipf_exp),
            zipf_hx1: h_integral(1.5, zipf_exp) - 1.0,
        }
    }

    /// `sysbench.rand.default(a, b)`: a value in `[a, b]` from the `--rand-type` distribution.
    #[inline]
    pub fn default_value(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => rng.uniform(a, b),
            RandType::Gaussian => self.gaussian(rng, a, b),
            RandType::Special => self.special(rng, a, b),
            RandType::Pareto => a.wrapping_add(c_u32(
                f64::from(b.wrapping_sub(a).wrapping_add(1)) * rng.double().powf(self.pareto_power),
            )),
            RandType::Zipfian => a
                .wrapping_add(self.zipfian(rng, b.wrapping_sub(a).wrapping_add(1)))
                .wrapping_sub(1),
        }
    }

    fn gaussian(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let t = f64::from(b.wrapping_sub(a).wrapping_add(1));
        let mut sum = 0.0;
        for _ in 0..self.iter {
            sum += rng.double() * t;
        }
        a.wrapping_add(c_u32(sum * self.iter_mult))
    }

    fn special(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let t = f64::from(b.wrapping_sub(a));
        let rnd = rng.double();
        if rnd * (t * self.res_mult) < t {
            let mut sum = 0.0;
            for _ in 0..self.iter {
                sum += rng.double();
            }
            return c_u32(f64::from(a) + sum * t * self.iter_mult);
        }
        self.special_hot(rnd, a, b)
    }

    /// The special distribution's value in the hot spot for the first double `rnd` (which was
    /// at least `t / range_size`).
    pub fn special_hot(&self, rnd: f64, a: u32, b: u32) -> u32 {
        let t = f64::from(b.wrapping_sub(a));
        let d = t * self.pct_mult;
        // sysbench adds the offset as one term: `res += t / 2 - t * pct_2_mult`
        let res = rnd * (d + 1.0) + (t / 2.0 - t * self.pct_2_mult);
        a.wrapping_add(c_u32(res))
    }

    /// Zipf-distributed value in `[1, n]` (rejection-inversion, Hörmann & Derflinger).
    fn zipfian(&self, rng: &mut Rng, n: u32) -> u32 {
        let e = self.zipf_exp;
        let h_n = h_integral(f64::from(n) + 0.5, e);
        loop {
            let u = h_n + rng.double() * (self.zipf_hx1 - h_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u32).clamp(1, n.max(1));
            let kf = f64::from(k);
            if kf - x <= self.zipf_s || u >= h_integral(kf + 0.5, e) - h(kf, e) {
                return k;
            }
        }
    }
}

/// H(x) = (x^(1-e) - 1) / (1 - e), or ln x when e = 1: the integral of h.
pub fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    expm1_over_x((1.0 - e) * log_x) * log_x
}

/// h(x) = x^-e.
pub fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// The inverse of H.
pub fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (log1p_over_x(t) * x).exp()
}

/// ln(1 + x) / x, by its Taylor series near 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, by its Taylor series near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// `sysbench.rand.unique()`: a permutation of the 32-bit numbers shared by all clients (each
/// call returns a value no other call of the run returns, until 2^32 calls).
#[derive(Debug)]
pub struct Unique {
    index: AtomicU32,
    offset: u32,
}

const UNIQUE_PRIME: u32 = 4_294_967_291;

/// The quadratic-residue permutation of [0, 2^32) (the 5 values above the prime map to
/// themselves).
pub fn permute(x: u32) -> u32 {
    if x >= UNIQUE_PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(UNIQUE_PRIME)) as u32;
    if x <= UNIQUE_PRIME / 2 {
        residue
    } else {
        UNIQUE_PRIME - residue
    }
}

impl Unique {
    /// The sequence from the two seed words (sysbench's come from `seeding::unique`).
    pub fn seeded(index: u32, offset: u32) -> Unique {
        Unique {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(i).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}
