//! Counts that every worker thread adds to at each statement without sharing a cache line: a
//! cell per thread (threads beyond [`SHARDS`] share cells, still exact) holding its total;
//! reading sums the cells.
//!
//! A single shared atomic was written by both threads of a 2-thread run at every statement,
//! and its cache line moved between the cores each time (the `lock` increment was the hottest
//! instruction of a prepared statement's execute). sysbench keeps per-thread counters too.

use std::cell::Cell as StdCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Cells per counter.
const SHARDS: usize = 32;

/// One thread's cell, alone in its cache lines (128 bytes: adjacent-line prefetch pairs lines).
#[derive(Default, Debug)]
#[repr(align(128))]
struct Slot {
    total: AtomicU64,
}

/// Counts of one kind, total and since the last interval. The cells are inline (no pointer
/// to load from a line that other counters' writes keep moving); the period is the total less
/// the total at the period's start, so a count is one atomic add to the thread's own cell.
pub struct Pair {
    cells: [Slot; SHARDS],
    /// the total when the current period started
    period_start: AtomicU64,
}

impl Default for Pair {
    fn default() -> Self {
        Pair {
            cells: std::array::from_fn(|_| Slot::default()),
            period_start: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pair({})", self.total())
    }
}

static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: StdCell<usize> = const { StdCell::new(usize::MAX) };
}

/// This thread's cell index (given out in turn at its first count).
fn shard() -> usize {
    SHARD.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT_SHARD.fetch_add(1, Relaxed) % SHARDS);
        }
        s.get()
    })
}

impl Pair {
    pub fn add(&self, n: u64) {
        self.cells[shard()].total.fetch_add(n, Relaxed);
    }

    pub fn total(&self) -> u64 {
        self.cells.iter().map(|c| c.total.load(Relaxed)).sum()
    }

    /// The period's count, starting the next period. Each cell only grows, so a later sum is
    /// never below an earlier one: every count falls in exactly one period.
    pub fn take_period(&self) -> u64 {
        let now = self.total();
        now.saturating_sub(self.period_start.swap(now, Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_many_threads_add_up() {
        let p = std::sync::Arc::new(Pair::default());
        let threads: Vec<_> = (0..40)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        p.add(i % 3);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let want: u64 = (0..40).map(|i| 1000 * (i % 3)).sum();
        assert_eq!(p.total(), want);
        assert_eq!(p.take_period(), want);
        assert_eq!(p.take_period(), 0, "a period starts empty");
        p.add(5);
        assert_eq!((p.total(), p.take_period()), (want + 5, 5));
    }
}
