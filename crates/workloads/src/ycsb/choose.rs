//! The per-client choices YCSB's core workload makes: the operation (its `DiscreteGenerator`:
//! one uniform draw walked over the normalised proportions), the key number of a read,
//! update, scan or read-modify-write (uniform, scrambled Zipfian, latest or hotspot, redrawn
//! while above the newest completed insert), the scan length and the field length. Built once
//! per workload and cloned into each client (ζ is computed once).

use super::config::{Config, Distribution, LengthDistribution, Op};
use super::rng::Rng;
use super::sequence::InsertSequence;
use super::zipf::{ScrambledZipfian, Zipfian};

/// The operation chooser: the operations with a share above 0 and their normalised shares.
#[derive(Clone, Debug, PartialEq)]
pub struct OpChooser {
    /// (operation, share), in YCSB's order
    pub ops: Vec<(Op, f64)>,
}

impl OpChooser {
    pub fn new(c: &Config) -> OpChooser {
        let total: f64 = c.proportions.iter().sum();
        let ops = Op::ALL
            .iter()
            .zip(c.proportions)
            .filter(|(_, p)| *p > 0.0)
            .map(|(op, p)| (*op, p / total))
            .collect();
        OpChooser { ops }
    }

    /// The index into `ops` of the next operation.
    pub fn next(&self, rng: &mut Rng) -> usize {
        let mut u = rng.next_f64();
        for (i, (_, share)) in self.ops.iter().enumerate() {
            if u < *share {
                return i;
            }
            u -= share;
        }
        // rounding left u just above the last share
        self.ops.len() - 1
    }
}

/// How a request's key number is drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyChooser {
    Uniform {
        lo: i64,
        hi: i64,
    },
    Zipfian(ScrambledZipfian),
    /// a Zipfian over `0..limit`, subtracted from the newest completed insert
    Latest(Zipfian),
    Hotspot {
        hot: i64,
        cold: i64,
        opn: f64,
    },
}

impl KeyChooser {
    pub fn new(c: &Config) -> KeyChooser {
        let n = c.recordcount;
        match c.requestdistribution {
            Distribution::Uniform => KeyChooser::Uniform { lo: 0, hi: n - 1 },
            Distribution::Zipfian => {
                KeyChooser::Zipfian(ScrambledZipfian::new(0, c.zipfian_max(), c.zipfianconstant))
            }
            // YCSB makes it over the initial limit (recordcount - 1) items
            Distribution::Latest => KeyChooser::Latest(Zipfian::new(0, n - 2, c.zipfianconstant)),
            Distribution::Hotspot { data, opn } => {
                let hot = (n as f64 * data) as i64;
                KeyChooser::Hotspot {
                    hot,
                    cold: n - hot,
                    opn,
                }
            }
        }
    }

    /// One draw, before the check against the inserts.
    fn draw(&mut self, rng: &mut Rng, limit: i64) -> i64 {
        match self {
            KeyChooser::Uniform { lo, hi } => rng.between(*lo, *hi),
            KeyChooser::Zipfian(z) => z.next(rng),
            KeyChooser::Latest(z) => limit - z.next_of(limit, rng),
            KeyChooser::Hotspot { hot, cold, opn } => {
                if rng.next_f64() < *opn {
                    rng.below(*hot as u64) as i64
                } else {
                    *hot + rng.below(*cold as u64) as i64
                }
            }
        }
    }

    /// The next key number: drawn again while above the newest completed insert.
    pub fn next(&mut self, rng: &mut Rng, inserts: &InsertSequence) -> i64 {
        loop {
            let limit = inserts.limit();
            let k = self.draw(rng, limit);
            if k <= limit {
                return k;
            }
        }
    }
}

/// A length drawn from `min..=max` (field lengths, scan lengths).
#[derive(Clone, Debug, PartialEq)]
pub enum Length {
    Constant(i64),
    Uniform { min: i64, max: i64 },
    Zipfian(Zipfian),
}

impl Length {
    pub fn new(d: LengthDistribution, min: i64, max: i64) -> Length {
        match d {
            LengthDistribution::Constant => Length::Constant(max),
            LengthDistribution::Uniform => Length::Uniform { min, max },
            LengthDistribution::Zipfian => {
                Length::Zipfian(Zipfian::new(min, max, super::zipf::ZIPFIAN_CONSTANT))
            }
        }
    }

    pub fn next(&self, rng: &mut Rng) -> i64 {
        match self {
            Length::Constant(n) => *n,
            Length::Uniform { min, max } => rng.between(*min, *max),
            Length::Zipfian(z) => z.next(rng),
        }
    }
}
