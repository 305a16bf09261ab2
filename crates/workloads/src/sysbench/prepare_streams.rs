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

/// One prepare thread's stream and the tables it fills, in order.
#[derive(Debug)]
pub struct PrepareStream {
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
        for _ in 0..draws(C_TEMPLATE) + draws(PAD_TEMPLATE) {
            rng.next_u64();
        }
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
