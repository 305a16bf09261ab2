//! The coordinator's `-P SEC`: one merged progress line for the whole run every SEC seconds,
//! from the live figures fed by every segment's interval rows (pgbench's line, over all
//! segments: throughput and mean latency of the last SEC seconds, failures so far).

use std::time::Instant;

use crate::metrics::Figures;

/// Where the last line left off.
pub struct MergedProgress {
    every_s: f64,
    started: Instant,
    next_s: f64,
    ok: u64,
    latency_sum_s: f64,
}

impl MergedProgress {
    /// Lines every `every_s` seconds from `started` (the run's start).
    pub fn new(every_s: u32, started: Instant) -> MergedProgress {
        MergedProgress {
            every_s: every_s.max(1) as f64,
            started,
            next_s: every_s.max(1) as f64,
            ok: 0,
            latency_sum_s: 0.0,
        }
    }

    /// The line due by now, if any (`segments` reporting).
    pub fn line(&mut self, f: &Figures, segments: usize) -> Option<String> {
        let now = self.started.elapsed().as_secs_f64();
        if now < self.next_s {
            return None;
        }
        let span = self.every_s + (now - self.next_s);
        self.next_s = now + self.every_s;
        let ok = f.ok.saturating_sub(self.ok);
        let lat = (f.latency_sum_s - self.latency_sum_s).max(0.0);
        self.ok = f.ok;
        self.latency_sum_s = f.latency_sum_s;
        Some(progress_text(now, ok, lat, span, f.failed, segments))
    }
}

/// `progress: T s, X tps, lat Y ms, F failed (merged, N segments)`.
fn progress_text(now: f64, ok: u64, lat_s: f64, span: f64, failed: u64, n: usize) -> String {
    let tps = ok as f64 / span;
    let lat_ms = if ok > 0 {
        lat_s * 1000.0 / ok as f64
    } else {
        0.0
    };
    format!(
        "progress: {now:.1} s, {tps:.1} tps, lat {lat_ms:.3} ms, {failed} failed (merged, {n} segments)"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_gives_the_window_s_throughput_and_mean_latency() {
        let line = super::progress_text(5.0, 5000, 4.0, 5.0, 2, 3);
        assert_eq!(
            line,
            "progress: 5.0 s, 1000.0 tps, lat 0.800 ms, 2 failed (merged, 3 segments)"
        );
    }
}
