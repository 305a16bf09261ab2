//! One segment of a `run` spread over several client hosts: this process runs the threads
//! `first_thread..first_thread + threads` of `total_threads` (so `sysbench.tid`, the 0.5
//! `thread_id` and each thread's random stream are the ids one host running every thread would
//! give), its share of `--rate`, and begins its events at a shared instant (the threads'
//! `thread_init` runs before it, `--time` counts from it); a stop request from outside (the
//! coordinator's Ctrl-C, or a coordinator gone silent) ends the run as `--time` would.

use std::time::Instant;

use pgrig_engine::StopHandle;

/// What makes a run one segment of a larger one.
#[derive(Clone)]
pub struct SegmentPart {
    /// the global id of this segment's first thread
    pub first_thread: u32,
    /// threads of the whole run
    pub total_threads: u32,
    /// `--rate` of this segment's threads (events per second; 0: unlimited)
    pub rate: f64,
    /// when the events begin (none: as soon as every thread is initialised)
    pub start_at: Option<Instant>,
    /// stops the run from outside
    pub stop: StopHandle,
}

impl std::fmt::Debug for SegmentPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentPart")
            .field("first_thread", &self.first_thread)
            .field("total_threads", &self.total_threads)
            .field("rate", &self.rate)
            .field("start_at", &self.start_at)
            .finish_non_exhaustive()
    }
}

/// The block of threads of segment `index` of `count` among `total` threads: (first global id,
/// threads), the first `total % count` segments one thread more, as pgbench's clients are split.
pub fn threads_of(index: u32, count: u32, total: u32) -> (u32, u32) {
    let (base, extra) = (total / count, total % count);
    (
        index * base + index.min(extra),
        base + u32::from(index < extra),
    )
}

/// The share of `total` (`--events`) that threads `first..first + n` of `threads` get: the
/// shares of contiguous blocks add up to `total` exactly.
pub fn share_of(total: u64, first: u32, n: u32, threads: u32) -> u64 {
    let upto = |t: u32| (u128::from(total) * u128::from(t) / u128::from(threads.max(1))) as u64;
    upto(first + n) - upto(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_every_thread_and_event_once() {
        for (total, count, events) in [(8u32, 3u32, 1000u64), (5, 2, 7), (3, 3, 3), (10, 4, 1)] {
            let (mut next, mut sum) = (0, 0);
            for i in 0..count {
                let (first, n) = threads_of(i, count, total);
                assert_eq!(first, next);
                next += n;
                sum += share_of(events, first, n, total);
            }
            assert_eq!((next, sum), (total, events));
        }
    }
}
