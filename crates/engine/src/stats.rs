//! Counters and latency distributions of a run: per-thread accumulation (no sharing, no locks),
//! merged at the end and snapshotted every second for progress lines and the per-second series.

use hdrhistogram::Histogram;

/// Running sum / sum of squares / min / max of a series of microsecond samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    pub count: u64,
    pub sum: f64,
    pub sum2: f64,
    pub min: f64,
    pub max: f64,
}

impl Moments {
    #[inline]
    pub fn add(&mut self, v: f64) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        if self.count == 0 || v > self.max {
            self.max = v;
        }
        self.count += 1;
        self.sum += v;
        self.sum2 += v * v;
    }

    pub fn merge(&mut self, o: &Moments) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.min < self.min {
            self.min = o.min;
        }
        if self.count == 0 || o.max > self.max {
            self.max = o.max;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.sum2 += o.sum2;
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation, as pgbench prints it.
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let m = self.mean();
        let var = self.sum2 / self.count as f64 - m * m;
        if var > 0.0 {
            var.sqrt()
        } else {
            0.0
        }
    }

    /// Difference `self - earlier` of the additive parts (min/max are kept from `self`).
    pub fn since(&self, earlier: &Moments) -> Moments {
        Moments {
            count: self.count - earlier.count,
            sum: self.sum - earlier.sum,
            sum2: self.sum2 - earlier.sum2,
            min: self.min,
            max: self.max,
        }
    }
}

/// Transaction outcome counters (pgbench's `StatsData` minus the latency moments).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// successful transactions
    pub ok: u64,
    pub skipped: u64,
    pub serialization_failures: u64,
    pub deadlock_failures: u64,
    pub other_failures: u64,
    /// transactions retried at least once
    pub retried: u64,
    /// total number of retries
    pub retries: u64,
    /// successful transactions above the latency limit
    pub late: u64,
    /// successful native transactions that ended in the workload's own rollback
    pub rollbacks: u64,
    /// native workloads' statements that completed, by their reply
    pub replies: Replies,
}

/// Statements that completed, by what their reply holds — the classes sysbench's pgsql
/// driver counts queries in (read, write, other). Counted for native workloads only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replies {
    /// a row set (even empty): a SELECT, SHOW, FETCH, or a statement that sent rows
    pub rows: u64,
    /// no row set, and the command tag says rows were changed (`UPDATE 1`, `INSERT 0 3`)
    pub changed: u64,
    /// neither: BEGIN, COMMIT, SET, an UPDATE or DELETE that matched no row
    pub neither: u64,
}

impl Replies {
    /// One completed statement: `rowset` whether it returned a row set, `count` its tag's
    /// row count.
    #[inline]
    pub fn add(&mut self, rowset: bool, count: u64) {
        if rowset {
            self.rows += 1;
        } else if count > 0 {
            self.changed += 1;
        } else {
            self.neither += 1;
        }
    }

    pub fn total(&self) -> u64 {
        self.rows + self.changed + self.neither
    }

    fn merge(&mut self, o: &Replies) {
        self.rows += o.rows;
        self.changed += o.changed;
        self.neither += o.neither;
    }

    fn since(&self, e: &Replies) -> Replies {
        Replies {
            rows: self.rows - e.rows,
            changed: self.changed - e.changed,
            neither: self.neither - e.neither,
        }
    }
}

impl Counts {
    pub fn failed(&self) -> u64 {
        self.serialization_failures + self.deadlock_failures + self.other_failures
    }

    /// All transactions that count against `-t`: ok + skipped + failed.
    pub fn total(&self) -> u64 {
        self.ok + self.skipped + self.failed()
    }

    pub fn merge(&mut self, o: &Counts) {
        self.ok += o.ok;
        self.skipped += o.skipped;
        self.serialization_failures += o.serialization_failures;
        self.deadlock_failures += o.deadlock_failures;
        self.other_failures += o.other_failures;
        self.retried += o.retried;
        self.retries += o.retries;
        self.late += o.late;
        self.rollbacks += o.rollbacks;
        self.replies.merge(&o.replies);
    }

    pub fn since(&self, e: &Counts) -> Counts {
        Counts {
            ok: self.ok - e.ok,
            skipped: self.skipped - e.skipped,
            serialization_failures: self.serialization_failures - e.serialization_failures,
            deadlock_failures: self.deadlock_failures - e.deadlock_failures,
            other_failures: self.other_failures - e.other_failures,
            retried: self.retried - e.retried,
            retries: self.retries - e.retries,
            late: self.late - e.late,
            rollbacks: self.rollbacks - e.rollbacks,
            replies: self.replies.since(&e.replies),
        }
    }
}

/// Cheap-to-copy cumulative figures, snapshotted every second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub counts: Counts,
    /// latency of successful transactions, µs
    pub latency: Moments,
    /// schedule lag (`-R`), µs
    pub lag: Moments,
}

impl Snapshot {
    pub fn merge(&mut self, o: &Snapshot) {
        self.counts.merge(&o.counts);
        self.latency.merge(&o.latency);
        self.lag.merge(&o.lag);
    }
}

/// Per-command figures (`-r`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CommandStats {
    pub latency: Moments,
    pub failures: u64,
    pub retries: u64,
}

/// Per-script figures (a native workload's: per transaction type).
#[derive(Clone, Debug)]
pub struct ScriptStats {
    pub snap: Snapshot,
    pub histogram: Histogram<u64>,
    pub commands: Vec<CommandStats>,
    /// per command, its latency distribution (native workloads' statements, script commands
    /// under `-r`; empty until the first one is recorded)
    pub command_histograms: Vec<Histogram<u64>>,
}

/// The highest value a new histogram tracks before it first grows: 16.4 ms (µs). Histograms
/// start this small and grow (auto-resize, one bucket of 1,024 counts per doubling) only as
/// far as the values recorded reach: a thread holds several (per script, per second), and
/// sized for an hour up front each took 180 kB of counts, most of the client's memory per
/// thread at `-j 1000`. Growing keeps every recorded value exact to the same 3 significant
/// digits.
const INITIAL_HIGHEST_US: u64 = 16_384;

fn small_histogram() -> Histogram<u64> {
    let mut h =
        Histogram::new_with_bounds(1, INITIAL_HIGHEST_US, 3).expect("valid histogram bounds");
    h.auto(true);
    h
}

/// A statement's latency histogram: 1 µs upwards, 3 significant digits, growing as needed.
fn new_command_histogram() -> Histogram<u64> {
    small_histogram()
}

/// A latency histogram: 1 µs upwards, 3 significant digits, growing as needed.
pub fn new_histogram() -> Histogram<u64> {
    small_histogram()
}

impl ScriptStats {
    pub fn new(ncommands: usize) -> Self {
        ScriptStats {
            snap: Snapshot::default(),
            histogram: new_histogram(),
            commands: vec![CommandStats::default(); ncommands],
            command_histograms: Vec::new(),
        }
    }

    /// One execution of command `slot` that took `us` µs, into its mean and its histogram.
    #[inline]
    pub fn record_command(&mut self, slot: usize, us: f64) {
        self.commands[slot].latency.add(us);
        if self.command_histograms.len() < self.commands.len() {
            self.command_histograms
                .resize_with(self.commands.len(), new_command_histogram);
        }
        let _ = self.command_histograms[slot].record((us as u64).max(1));
    }

    pub fn merge(&mut self, o: &ScriptStats) {
        self.snap.merge(&o.snap);
        let _ = self.histogram.add(&o.histogram);
        for (a, b) in self.commands.iter_mut().zip(&o.commands) {
            a.latency.merge(&b.latency);
            a.failures += b.failures;
            a.retries += b.retries;
        }
        if self.command_histograms.len() < o.command_histograms.len() {
            self.command_histograms
                .resize_with(o.command_histograms.len(), new_command_histogram);
        }
        for (a, b) in self
            .command_histograms
            .iter_mut()
            .zip(&o.command_histograms)
        {
            let _ = a.add(b);
        }
    }
}

/// Everything one worker thread accumulates. The run's totals are not kept separately: they
/// are the scripts' figures merged ([`total`](Self::total), [`histogram`](Self::histogram)),
/// so a transaction is recorded once.
#[derive(Clone, Debug)]
pub struct ThreadStats {
    pub scripts: Vec<ScriptStats>,
    /// `-C`: accumulated connect + disconnect time, µs
    pub conn_time_us: f64,
    /// connections a native workload closed and opened again (sysbench's `--reconnect`)
    pub reconnects: u64,
}

impl ThreadStats {
    pub fn new(command_counts: &[usize]) -> Self {
        ThreadStats {
            scripts: command_counts
                .iter()
                .map(|&n| ScriptStats::new(n))
                .collect(),
            conn_time_us: 0.0,
            reconnects: 0,
        }
    }

    /// Counts and latency moments over all scripts.
    pub fn total(&self) -> Snapshot {
        let mut t = Snapshot::default();
        for s in &self.scripts {
            t.merge(&s.snap);
        }
        t
    }

    /// Latency histogram of successful transactions over all scripts.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for s in &self.scripts {
            let _ = h.add(&s.histogram);
        }
        h
    }

    pub fn merge(&mut self, o: &ThreadStats) {
        for (a, b) in self.scripts.iter_mut().zip(&o.scripts) {
            a.merge(b);
        }
        self.conn_time_us += o.conn_time_us;
        self.reconnects += o.reconnects;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stddev_is_population_stddev() {
        let mut m = Moments::default();
        for v in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            m.add(v);
        }
        assert_eq!(m.mean(), 5.0);
        assert!((m.stddev() - 2.0).abs() < 1e-12);
        assert_eq!((m.min, m.max), (2.0, 9.0));
    }

    #[test]
    fn counts_total_includes_skipped_and_failed() {
        let c = Counts {
            ok: 5,
            skipped: 2,
            deadlock_failures: 1,
            other_failures: 1,
            ..Default::default()
        };
        assert_eq!(c.failed(), 2);
        assert_eq!(c.total(), 9);
    }

    #[test]
    fn merged_moments_keep_extremes() {
        let mut a = Moments::default();
        a.add(3.0);
        let mut b = Moments::default();
        b.add(1.0);
        b.add(8.0);
        a.merge(&b);
        assert_eq!((a.count, a.min, a.max), (3, 1.0, 8.0));
    }
}
