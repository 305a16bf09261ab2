//! The random streams oltp's `prepare` draws its rows from, as sysbench's does: on one thread
//! the main thread's stream fills `sbtest1..N` in order; on `--threads` threads, thread `i`'s
//! command stream fills tables `i + 1, i + 1 + threads, ...` in order (`seeding`). Each row
//! draws its `c`, then its `pad`, then its `k` (`sb_rand(1, table_size)`); `--rand-seed` plays
//! no part. Rows of a stream depend on every row before them, so the loader's row ranges start
//! from marks taken every [`MARK`] rows by one pass over the stream (the first time a row is
//! asked for), and each range then draws on sequentially ([`Cursors`]).

use std::sync::{Mutex, OnceLock};

use super::rand::{Dist, Rng};
use super::seeding::Stream;
use super::sql::{C_TEMPLATE, PAD_TEMPLATE};

/// Rows between two marks.
pub const MARK: i64 = 1024;

/// The draws a template's `#`/`@` characters take.
fn draws(template: &[u8]) -> usize {
    template.iter().filter(|&&c| c == b'#' || c == b'@').count()
}

/// xoroshiro128+ moved `n` steps at once: the generator is linear over GF(2), so `n` steps are
/// one 128×128 bit matrix, applied a byte of the state at a time (16 lookups in 64 KiB).
pub struct Jump {
    table: Vec<[u128; 256]>,
}

impl std::fmt::Debug for Jump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Jump")
    }
}

fn to_bits(r: &Rng) -> u128 {
    let [a, b] = r.state();
    u128::from(a) | (u128::from(b) << 64)
}

fn from_bits(x: u128) -> Rng {
    Rng::from_state([x as u64, (x >> 64) as u64])
}

impl Jump {
    pub fn new(n: usize) -> Jump {
        // column i: where state bit i goes in n steps
        let columns: Vec<u128> = (0..128)
            .map(|i| {
                let mut r = from_bits(1u128 << i);
                for _ in 0..n {
                    r.next_u64();
                }
                to_bits(&r)
            })
            .collect();
        let table = (0..16)
            .map(|byte| {
                let mut t = [0u128; 256];
                for v in 1..256usize {
                    let low = v.trailing_zeros() as usize;
                    t[v] = t[v & (v - 1)] ^ columns[byte * 8 + low];
                }
                t
            })
            .collect();
        Jump { table }
    }

    #[inline]
    pub fn apply(&self, r: &mut Rng) {
        let x = to_bits(r);
        let mut out = 0u128;
        for (byte, t) in self.table.iter().enumerate() {
            out ^= t[((x >> (8 * byte)) & 0xff) as usize];
        }
        *r = from_bits(out);
    }
}

/// One prepare thread's stream and the tables it fills, in order.
#[derive(Debug)]
pub struct PrepareStream {
    /// a row's `c` and `pad` draws at once
    strings: Jump,
    start: Rng,
    /// rows of each table the stream fills, in order
    rows: Vec<i64>,
    table_size: u32,
    dist: Dist,
    marks: OnceLock<Vec<Vec<Rng>>>,
}

/// One row's values, drawn from `rng` in sysbench's order.
pub struct RowValues {
    pub k: u32,
    pub c: [u8; C_TEMPLATE.len()],
    pub pad: [u8; PAD_TEMPLATE.len()],
}

impl PrepareStream {
    pub fn new(stream: Stream, rows: Vec<i64>, table_size: u32, dist: Dist) -> PrepareStream {
        PrepareStream {
            strings: Jump::new(draws(C_TEMPLATE) + draws(PAD_TEMPLATE)),
            start: stream.rng(),
            rows,
            table_size,
            dist,
            marks: OnceLock::new(),
        }
    }

    /// The next row's values.
    #[inline]
    pub fn row(&self, rng: &mut Rng) -> RowValues {
        let mut v = RowValues {
            k: 0,
            c: [0; C_TEMPLATE.len()],
            pad: [0; PAD_TEMPLATE.len()],
        };
        rng.string_fill(C_TEMPLATE, &mut v.c);
        rng.string_fill(PAD_TEMPLATE, &mut v.pad);
        v.k = self.dist.default_value(rng, 1, self.table_size);
        v
    }

    /// Moves `rng` past one row.
    #[inline]
    fn skip_row(&self, rng: &mut Rng) {
        self.strings.apply(rng);
        self.dist.default_value(rng, 1, self.table_size);
    }

    /// The states before every `MARK`-th row of every table (one pass, the first time).
    fn marks(&self) -> &Vec<Vec<Rng>> {
        self.marks.get_or_init(|| {
            let mut rng = self.start.clone();
            self.rows
                .iter()
                .map(|&n| {
                    let mut marks = Vec::with_capacity((n / MARK + 1) as usize);
                    for row in 0..n {
                        if row % MARK == 0 {
                            marks.push(rng.clone());
                        }
                        self.skip_row(&mut rng);
                    }
                    marks
                })
                .collect()
        })
    }

    /// The stream's state before row `row` of its `index`-th table.
    pub fn rng_at(&self, index: usize, row: i64) -> Rng {
        let marks = &self.marks()[index];
        let m = (row / MARK) as usize;
        let mut rng = marks[m.min(marks.len().saturating_sub(1))].clone();
        for _ in (m as i64 * MARK)..row {
            self.skip_row(&mut rng);
        }
        rng
    }
}

/// The states where the loader's row ranges stand: a range asks for its rows in order, so the
/// state after row `k` is kept for row `k + 1`.
#[derive(Debug, Default)]
pub struct Cursors(Mutex<Vec<(i64, Rng)>>);

impl Cursors {
    /// Ranges in flight kept at most.
    const KEEP: usize = 256;

    /// The state before row `row`, if a range left it.
    pub fn take(&self, row: i64) -> Option<Rng> {
        let mut v = self.0.lock().ok()?;
        let i = v.iter().position(|(r, _)| *r == row)?;
        Some(v.swap_remove(i).1)
    }

    /// Keeps the state before row `row`.
    pub fn put(&self, row: i64, rng: Rng) {
        if let Ok(mut v) = self.0.lock() {
            if v.len() >= Self::KEEP {
                v.remove(0);
            }
            v.push((row, rng));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysbench::rand::RandType;

    #[test]
    fn a_jump_is_that_many_steps() {
        let j = Jump::new(165);
        let mut a = Stream::Main.rng();
        for _ in 0..50 {
            let mut b = a.clone();
            for _ in 0..165 {
                b.next_u64();
            }
            j.apply(&mut a);
            assert_eq!(a.state(), b.state());
        }
    }

    #[test]
    fn rows_from_marks_and_cursors_are_the_sequential_rows() {
        let dist = Dist::new(RandType::Special, 12, 1, 75, 0.2, 0.8);
        let s = PrepareStream::new(Stream::Command(1), vec![2500, 3000], 3000, dist);
        let mut rng = s.start.clone();
        let mut seq = Vec::new();
        for _ in 0..5500 {
            let v = s.row(&mut rng);
            seq.push((v.k, v.c, v.pad));
        }
        for (index, row) in [
            (0, 0),
            (0, 1023),
            (0, 1024),
            (0, 2499),
            (1, 0),
            (1, 2999),
            (1, 1500),
        ] {
            let v = s.row(&mut s.rng_at(index, row));
            let want = &seq[index * 2500 + row as usize];
            assert_eq!((v.k, v.c, v.pad), *want, "table {index} row {row}");
        }
    }
}
