//! How sysbench 1.0.20 seeds its random streams, so that a `--rand-seed` gives sysbench's own
//! numbers. Every thread's xoroshiro128+ state is four values of the C library's `random()`
//! (two per 64-bit word, high half first), taken when the thread starts:
//!
//! * `random()` is glibc's additive feedback generator as `srandom(seed)` sets it up (31 words
//!   from the 16807 multiplicative generator, 310 values discarded, then
//!   `r[i] = r[i-3] + r[i-31]`, each value `r[i] >> 1`); unseeded, it is `srandom(1)`'s.
//! * The main thread (the script's body, `init`, `done`, and every command that is not run on
//!   several threads, `prepare` on one thread included) takes the first four values of the
//!   unseeded generator, the unique sequence the next two (the second one is its index, the
//!   first its offset); `--rand-seed` plays no part in them.
//! * A command run on several threads (oltp's parallel `prepare`): thread `i` takes values
//!   `6 + 4i ..`, still unseeded.
//! * `run`: `srandom(--rand-seed)` (`time(NULL)` when 0) after `init()`, then the background
//!   threads take four values each (the `--report-interval` thread, the `--rate` event
//!   generator, the `--report-checkpoints` thread, in that order), then worker `i`.
//!
//! (A LuaJIT that calls `random()` itself when it loads, as OpenResty's does, moves the
//! unseeded values in sysbench: its main-thread and command streams then change from run to
//! run. sysbench with its bundled LuaJIT, and pgrig, give the values above.)

use super::rand::{Rng, Unique};

/// glibc's `random()` generator (the default `TYPE_3` state of 31 words).
#[derive(Clone, Debug)]
pub struct LibcRandom {
    r: [u32; 31],
    front: usize,
    rear: usize,
}

impl LibcRandom {
    /// The generator after `srandom(seed)` (0 counts as 1, as in glibc).
    pub fn new(seed: u32) -> LibcRandom {
        const M: i64 = 2_147_483_647;
        let mut r = [0u32; 31];
        let mut word = i64::from(seed.max(1) as i32);
        r[0] = word as u32;
        for slot in r.iter_mut().skip(1) {
            word = (16_807 * word).rem_euclid(M);
            *slot = word as u32;
        }
        let mut g = LibcRandom {
            r,
            front: 3,
            rear: 0,
        };
        g.skip(310);
        g
    }

    /// The next value, in `[0, 2^31)`.
    pub fn random(&mut self) -> u32 {
        let v = self.r[self.front].wrapping_add(self.r[self.rear]);
        self.r[self.front] = v;
        self.front = if self.front == 30 { 0 } else { self.front + 1 };
        self.rear = if self.rear == 30 { 0 } else { self.rear + 1 };
        v >> 1
    }

    /// Discards `n` values.
    pub fn skip(&mut self, n: u64) {
        for _ in 0..n {
            self.random();
        }
    }

    /// A thread's xoroshiro128+ state from the next four values.
    pub fn rng(&mut self) -> Rng {
        let mut word = || (u64::from(self.random()) << 32) | u64::from(self.random());
        let s0 = word();
        let s1 = word();
        Rng::from_state([s0, s1])
    }
}

/// Which of sysbench's threads a stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// the main thread: the script's body, `init`, `done`, one-thread commands
    Main,
    /// thread `n` of a command run on several threads
    Command(u32),
    /// worker `thread` of a `run` seeded with `seed` after `background` background threads
    Run {
        seed: u32,
        background: u32,
        thread: u32,
    },
}

impl Stream {
    /// The stream's generator, as sysbench seeds it.
    pub fn rng(self) -> Rng {
        let (seed, skip) = match self {
            Stream::Main => (1, 0),
            Stream::Command(n) => (1, 6 + 4 * u64::from(n)),
            Stream::Run {
                seed,
                background,
                thread,
            } => (seed, 4 * (u64::from(background) + u64::from(thread))),
        };
        let mut g = LibcRandom::new(seed);
        g.skip(skip);
        g.rng()
    }
}

/// The run-wide unique sequence, as sysbench seeds it (the same in every process).
pub fn unique() -> Unique {
    let mut g = LibcRandom::new(1);
    g.skip(4);
    let offset = g.random();
    let index = g.random();
    Unique::seeded(index, offset)
}

/// The seed `run` passes to `srandom`: `--rand-seed`, or the clock's seconds when it is 0.
pub fn run_seed(rand_seed: u32) -> u32 {
    if rand_seed != 0 {
        return rand_seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs() as u32)
}

/// The background threads that take their seeds before `run`'s workers.
pub fn background_threads(report_interval: bool, rate: bool, checkpoints: bool) -> u32 {
    u32::from(report_interval) + u32::from(rate) + u32::from(checkpoints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unseeded_random_is_glibcs() {
        let mut g = LibcRandom::new(1);
        let v: Vec<u32> = (0..3).map(|_| g.random()).collect();
        assert_eq!(v, [1_804_289_383, 846_930_886, 1_681_692_777]);
        assert_eq!(LibcRandom::new(0).random(), 1_804_289_383);
    }

    #[test]
    fn seed_7_worker_0_draws_sysbenchs_uniforms() {
        let mut r = Stream::Run {
            seed: 7,
            background: 0,
            thread: 0,
        }
        .rng();
        let v: Vec<u32> = (0..8).map(|_| r.uniform(1, 1000)).collect();
        assert_eq!(v, [540, 658, 408, 866, 103, 541, 754, 596]);
    }
}
