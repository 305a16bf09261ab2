//! `--rate` on the Lua path: one schedule shared by the threads, events arriving as a Poisson
//! process (exponential gaps of mean 1/rate, as sysbench's event generator makes them). A
//! thread takes the next scheduled time, waits for it, and the time it started late is the
//! event's schedule lag (the run document's `schedule_lag_ms`); the event's latency is
//! measured from its start, as sysbench measures it.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shared schedule.
pub struct Pace {
    mean_gap_s: f64,
    /// the next event's time (none before the first event) and the generator's state
    next: Mutex<(Option<Instant>, u64)>,
}

impl Pace {
    /// A schedule of `rate` events per second (none for 0; a segment of a multi-host run
    /// has its share, which need not be whole).
    pub fn new(rate: f64, seed: u64) -> Option<Pace> {
        (rate > 0.0 && rate.is_finite()).then(|| Pace {
            mean_gap_s: 1.0 / rate,
            next: Mutex::new((None, seed | 1)),
        })
    }

    /// The next event's scheduled time: the first event is due at once, each later one an
    /// exponential gap after the one before.
    pub fn next(&self) -> Instant {
        let Ok(mut g) = self.next.lock() else {
            return Instant::now();
        };
        let at = g.0.unwrap_or_else(Instant::now);
        let u = uniform(&mut g.1);
        let gap = -u.ln() * self.mean_gap_s;
        g.0 = Some(at + Duration::from_secs_f64(gap.min(3600.0)));
        at
    }
}

/// Waits until `at` (in short sleeps, so a stop is seen); false when stopped first.
pub fn wait_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(10)));
    }
}

/// A number in (0, 1] from a xorshift64* state.
fn uniform(s: &mut u64) -> f64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    let x = s.wrapping_mul(0x2545_F491_4F6C_DD1D);
    ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps average 1/rate and vary as an exponential distribution's do (its standard
    /// deviation equals its mean).
    #[test]
    fn gaps_are_exponential_with_the_rates_mean() {
        let p = Pace::new(1000.0, 42).unwrap();
        let first = p.next();
        let n = 20_000;
        let mut prev = first;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            let t = p.next();
            let g = (t - prev).as_secs_f64();
            sum += g;
            sq += g * g;
            prev = t;
        }
        let mean = sum / n as f64;
        let sd = (sq / n as f64 - mean * mean).sqrt();
        assert!((mean - 0.001).abs() < 0.00005, "mean gap {mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "sd {sd} mean {mean}");
    }

    #[test]
    fn no_rate_no_schedule() {
        assert!(Pace::new(0.0, 1).is_none());
    }
}
