//! The insert key sequence all clients of a run share (YCSB's acknowledged counter): an insert
//! takes the next key number (starting at `recordcount`), and the highest key number below
//! which every insert has completed — the newest key reads may choose — advances only over
//! a contiguous run of completed inserts, so a read never picks a key still being inserted.
//! Completions are marked in a fixed window of flags; whoever gets the lock moves the limit.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

/// Inserts that may be in flight at once (YCSB: 2^20).
const WINDOW: usize = 1 << 16;

/// The shared insert sequence.
#[derive(Debug)]
pub struct InsertSequence {
    next: AtomicI64,
    limit: AtomicI64,
    done: Box<[AtomicBool]>,
    advance: Mutex<()>,
}

/// More inserts in flight than the window holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowFull;

impl InsertSequence {
    /// A sequence whose first insert gets key number `start` (keys below exist).
    pub fn new(start: i64) -> InsertSequence {
        InsertSequence {
            next: AtomicI64::new(start),
            limit: AtomicI64::new(start - 1),
            done: (0..WINDOW).map(|_| AtomicBool::new(false)).collect(),
            advance: Mutex::new(()),
        }
    }

    /// The key number of the next insert.
    pub fn take(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The key number the next insert will get.
    pub fn peek(&self) -> i64 {
        self.next.load(Ordering::Relaxed)
    }

    /// The highest key number below which every insert completed.
    pub fn limit(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Key number `n` (from [`take`](Self::take)) completed (or failed for good).
    pub fn acknowledge(&self, n: i64) -> Result<(), WindowFull> {
        let slot = &self.done[n as usize % WINDOW];
        if slot.swap(true, Ordering::AcqRel) {
            return Err(WindowFull);
        }
        if let Ok(_guard) = self.advance.try_lock() {
            let mut limit = self.limit.load(Ordering::Acquire);
            // at most one lap of the window
            for _ in 0..WINDOW {
                let s = &self.done[(limit + 1) as usize % WINDOW];
                if !s.swap(false, Ordering::AcqRel) {
                    break;
                }
                limit += 1;
            }
            self.limit.store(limit, Ordering::Release);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_waits_for_the_gap() {
        let s = InsertSequence::new(100);
        assert_eq!(s.limit(), 99);
        let (a, b, c) = (s.take(), s.take(), s.take());
        assert_eq!((a, b, c), (100, 101, 102));
        s.acknowledge(b).unwrap();
        assert_eq!(s.limit(), 99, "101 done but 100 still in flight");
        s.acknowledge(a).unwrap();
        assert_eq!(s.limit(), 101);
        s.acknowledge(c).unwrap();
        assert_eq!(s.limit(), 102);
    }
}
