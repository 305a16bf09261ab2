//! sysbench's latency histogram: 1024 logarithmic slots from 0.001 ms to 100 000 ms, a value
//! going to the nearest slot; percentiles are read from the slots (so they carry sysbench's
//! quantisation) and `--histogram` prints the non-empty slots with a 40-star bar. pgrig's
//! HDR buckets (upper ends in µs, with their counts) are poured into the slots. Other sizes
//! and ranges are `sysbench.histogram.new(size, min, max)`'s (the Lua API).

const SLOTS: usize = 1024;
const MIN_MS: f64 = 1e-3;
const MAX_MS: f64 = 1e5;

/// Counts per sysbench slot.
#[derive(Clone, Debug, PartialEq)]
pub struct Slots {
    counts: Vec<u64>,
    /// ln(min)
    deduct: f64,
    /// (slots - 1) / ln(max / min)
    mult: f64,
}

impl Default for Slots {
    fn default() -> Self {
        Slots::new()
    }
}

impl Slots {
    /// The slots of `buckets`: `(upper end in µs, count)` pairs.
    pub fn from_us_buckets(buckets: &[(u64, u64)]) -> Slots {
        let mut s = Slots::new();
        for &(us, n) in buckets {
            s.add_us(us, n);
        }
        s
    }

    /// An empty latency histogram (sysbench's: 1024 slots, 0.001 to 100 000 ms).
    pub fn new() -> Slots {
        Slots::with_range(SLOTS, MIN_MS, MAX_MS)
    }

    /// An empty histogram of `size` slots from `min` to `max` (both above 0; `size` at
    /// least 2 — other values are raised to those).
    pub fn with_range(size: usize, min: f64, max: f64) -> Slots {
        let size = size.max(2);
        let min = if min > 0.0 { min } else { 1e-3 };
        let max = if max > min { max } else { min * 10.0 };
        Slots {
            counts: vec![0u64; size],
            deduct: min.ln(),
            mult: (size as f64 - 1.0) / (max.ln() - min.ln()),
        }
    }

    /// The value slot `i` stands for.
    fn slot_value(&self, i: usize) -> f64 {
        (i as f64 / self.mult + self.deduct).exp()
    }

    fn slot_of(&self, v: f64) -> usize {
        if v <= 0.0 {
            return 0;
        }
        let i = ((v.ln() - self.deduct) * self.mult + 0.5).floor();
        (i.max(0.0) as usize).min(self.counts.len() - 1)
    }

    /// Adds one value (in the histogram's unit).
    pub fn add(&mut self, v: f64) {
        let i = self.slot_of(v);
        self.counts[i] += 1;
    }

    /// Adds `n` values of `us` microseconds.
    pub fn add_us(&mut self, us: u64, n: u64) {
        let i = self.slot_of(us as f64 / 1000.0);
        self.counts[i] += n;
    }

    /// The count in each slot, lowest first (to ship the histogram elsewhere: a multi-host
    /// run's segments hand theirs to the coordinator, which adds them with [`Slots::add_counts`]).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Adds another histogram's [`Slots::counts`] slot by slot; false (nothing added) when it
    /// has another number of slots or a slot's sum would overflow.
    pub fn add_counts(&mut self, counts: &[u64]) -> bool {
        if counts.len() != self.counts.len()
            || (self.counts.iter().zip(counts)).any(|(a, b)| a.checked_add(*b).is_none())
        {
            return false;
        }
        for (a, b) in self.counts.iter_mut().zip(counts) {
            *a += b;
        }
        true
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The `pct` percentile in ms as sysbench computes it (0 when empty).
    pub fn percentile(&self, pct: u32) -> f64 {
        let n = self.total();
        if n == 0 {
            return 0.0;
        }
        let target = (n as f64 * f64::from(pct) / 100.0 + 0.5).floor() as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= target {
                return self.slot_value(i);
            }
        }
        self.slot_value(self.counts.len() - 1)
    }

    /// `--histogram`'s table (empty when nothing was recorded).
    pub fn render(&self) -> String {
        let max = self.counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return String::new();
        }
        let mut s = String::from("       value  ------------- distribution ------------- count\n");
        let stars = "*".repeat(40);
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let width = (c as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
            s.push_str(&format!(
                "{:12.3} |{:<40} {}\n",
                self.slot_value(i),
                &stars[..width.min(40)],
                c
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_sysbench_values() {
        // sysbench prints these slot values in its histograms
        let s = Slots::new();
        assert_eq!(format!("{:.3}", s.slot_value(s.slot_of(0.354))), "0.354");
        assert_eq!(format!("{:.3}", s.slot_value(s.slot_of(2.03))), "2.032");
    }

    #[test]
    fn other_ranges_are_the_lua_apis() {
        // sysbench.histogram.new(1000, 1, 10): the values sysbench's own test prints
        let mut s = Slots::with_range(1000, 1.0, 10.0);
        for v in [1.0, 2.0, 0.0, 10.0, 100.0, 5.001] {
            s.add(v);
        }
        let r = s.render();
        let values: Vec<&str> = r
            .lines()
            .skip(1)
            .map(|l| l.split('|').next().unwrap_or("").trim())
            .collect();
        assert_eq!(values, ["1.000", "2.001", "4.997", "10.000"]);
    }

    #[test]
    fn percentile_counts_to_the_rounded_rank() {
        let s = Slots::from_us_buckets(&[(100, 50), (1000, 45), (10_000, 5)]);
        assert!(
            (s.percentile(95) - 1.0).abs() < 0.02,
            "{}",
            s.percentile(95)
        );
        assert!((s.percentile(99) - 10.0).abs() < 0.2);
    }

    #[test]
    fn bars_scale_to_forty_stars() {
        let s = Slots::from_us_buckets(&[(100, 4), (1000, 1)]);
        let r = s.render();
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with(&format!("|{} 4", "*".repeat(40))));
        assert!(lines[2].contains(&format!("|{}{} 1", "*".repeat(10), " ".repeat(30))));
    }
}
