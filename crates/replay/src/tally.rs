//! Per normalised statement (keyed by [`crate::normalize::fingerprint`]): how often it ran, its
//! latency distribution (an HDR histogram in microseconds, 2 significant digits, growing as
//! needed) and its errors by SQLSTATE and message. The recorded side (durations from the log)
//! and the replayed side (latency measured by the replayer) are each one [`Tallies`].

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;

/// Significant digits of the latency histograms.
const SIGFIG: u8 = 2;

/// One normalised statement.
#[derive(Debug, Clone)]
pub struct Tally {
    /// the normalised text ([`crate::normalize::normalize`])
    pub text: String,
    /// completed executions' latency, µs
    pub latency_us: Histogram<u64>,
    /// errors by (SQLSTATE, empty when the log does not say; message)
    pub errors: BTreeMap<(String, String), u64>,
}

impl Tally {
    fn new(text: String) -> Tally {
        Tally {
            text,
            latency_us: Histogram::new(SIGFIG).expect("2 significant digits are valid"),
            errors: BTreeMap::new(),
        }
    }

    /// Executions that ended in an error.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// Every normalised statement of one side.
#[derive(Debug, Clone, Default)]
pub struct Tallies {
    by_key: HashMap<u64, Tally>,
}

impl Tallies {
    /// The statement `key`, made with the text `text` gives when it is new.
    pub fn entry(&mut self, key: u64, text: impl FnOnce() -> String) -> &mut Tally {
        self.by_key.entry(key).or_insert_with(|| Tally::new(text()))
    }

    /// Whether `key` has been seen.
    pub fn contains(&self, key: u64) -> bool {
        self.by_key.contains_key(&key)
    }

    /// One execution of `key` that took `us` µs (the statement must have been entered).
    pub fn record(&mut self, key: u64, us: u64) {
        if let Some(t) = self.by_key.get_mut(&key) {
            // the histogram grows to the value (saturating_record would clamp it)
            if t.latency_us.record(us).is_err() {
                t.latency_us.saturating_record(us);
            }
        }
    }

    /// One execution of `key` that failed.
    pub fn error(&mut self, key: u64, sqlstate: &str, message: &str) {
        if let Some(t) = self.by_key.get_mut(&key) {
            *t.errors
                .entry((sqlstate.to_string(), message.to_string()))
                .or_default() += 1;
        }
    }

    /// The statements, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&u64, &Tally)> {
        self.by_key.iter()
    }

    pub fn get_mut(&mut self, key: u64) -> Option<&mut Tally> {
        self.by_key.get_mut(&key)
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&u64, &mut Tally)> {
        self.by_key.iter_mut()
    }

    pub fn get(&self, key: u64) -> Option<&Tally> {
        self.by_key.get(&key)
    }

    /// Executions with a latency, over every statement.
    pub fn timed(&self) -> u64 {
        self.by_key.values().map(|t| t.latency_us.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_and_errors_are_counted_per_statement() {
        let mut t = Tallies::default();
        t.entry(1, || "select ?".into());
        t.record(1, 100);
        t.record(1, 300);
        t.record(2, 5); // not entered: ignored
        t.error(1, "42P01", "relation \"x\" does not exist");
        t.error(1, "42P01", "relation \"x\" does not exist");
        let s = t.get(1).unwrap();
        assert_eq!((s.latency_us.len(), s.error_count()), (2, 2));
        assert_eq!(t.timed(), 2);
        assert!(!t.contains(2));
        // the text of an existing entry is not made again
        t.entry(1, || unreachable!());
    }
}
