//! `pgrig replay --compare`: the recorded side (the log's durations) against the replayed side
//! (the replayer's measured latency), per normalised statement — each statement's histograms
//! turned into samples for `pgrig_compare::statements` — and the table printed after the lag
//! report.

use std::fmt::Write;

use hdrhistogram::Histogram;
use pgrig_compare::statements::{self, Side, MIN_CHANGE_MS, MIN_CHANGE_PCT};
use pgrig_results::replay_doc::StatementChange;

use crate::tally::{Tallies, Tally};

/// Samples per side handed to the test at most; a larger side is thinned in proportion
/// (every histogram bucket keeps its share), which keeps the test's cost bounded.
const MAX_SAMPLES: u64 = 20_000;

/// Longest statement text shown in the table (the document keeps it whole).
const SHOWN_CHARS: usize = 100;

/// The histogram's executions as latencies in ms (thinned past [`MAX_SAMPLES`]).
fn samples(h: &Histogram<u64>) -> Vec<f64> {
    let total = h.len();
    let scale = if total > MAX_SAMPLES {
        MAX_SAMPLES as f64 / total as f64
    } else {
        1.0
    };
    let mut out = Vec::with_capacity(total.min(MAX_SAMPLES) as usize + 64);
    for v in h.iter_recorded() {
        let n = (v.count_at_value() as f64 * scale).round() as usize;
        let ms = h.median_equivalent(v.value_iterated_to()) as f64 / 1000.0;
        out.extend(std::iter::repeat_n(ms, n));
    }
    out
}

fn side(t: Option<&Tally>) -> Side {
    let Some(t) = t else {
        return Side::default();
    };
    let h = &t.latency_us;
    Side {
        latencies_ms: samples(h),
        count: h.len(),
        p95_ms: (!h.is_empty()).then(|| h.value_at_quantile(0.95) as f64 / 1000.0),
        errors: t
            .errors
            .iter()
            .map(|((code, msg), n)| (code.clone(), msg.clone(), *n))
            .collect(),
    }
}

/// The replayed latencies taken from the replay server's own log (`served`) instead of the
/// client's; the errors stay the client's (they carry the SQLSTATE).
pub fn use_served(measured: &mut Tallies, served: Tallies) {
    for (_, t) in measured.iter_mut() {
        t.latency_us.reset();
    }
    for (k, t) in served.iter() {
        measured.entry(*k, || t.text.clone()).latency_us = t.latency_us.clone();
    }
}

/// What the replayed side measured, for the table's legend.
pub enum Replayed {
    /// the replay server's logged durations, from this file
    Served(String),
    /// send to ReadyForQuery less the connections' round trip (median, µs)
    Client(Option<u64>),
}

/// Every statement either side ran (or failed), compared and ranked slowest-getting first.
pub fn build(recorded: &Tallies, replayed: &Tallies) -> Vec<StatementChange> {
    let mut keys: Vec<u64> = recorded
        .iter()
        .chain(replayed.iter())
        .map(|(k, _)| *k)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::new();
    for k in keys {
        let (a, b) = (recorded.get(k), replayed.get(k));
        let used = |t: Option<&Tally>| t.is_some_and(|t| t.latency_us.len() + t.error_count() > 0);
        if !used(a) && !used(b) {
            continue;
        }
        let text = a.or(b).map(|t| t.text.as_str()).unwrap_or_default();
        out.push(statements::compare(text, &side(a), &side(b)));
    }
    statements::rank(&mut out);
    out
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

fn shown(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > SHOWN_CHARS {
        let cut: String = one_line.chars().take(SHOWN_CHARS - 3).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

/// The "What changed" table.
pub fn table(changes: &[StatementChange], replayed: &Replayed) -> String {
    let mut s = String::new();
    let title = "What changed: recorded against replayed latency (pgrig)";
    let _ = write!(s, "\n{title}\n{}\n\n", "=".repeat(title.len()));
    let count = |v: &str| changes.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        s,
        "{} statements: {} slower (+), {} faster (-), {} without a change shown (~), {} with too \
         few executions to tell (?)",
        changes.len(),
        count("+"),
        count("-"),
        count("~"),
        count("?")
    );
    let side = match replayed {
        Replayed::Served(f) => format!("the replay server's logged durations ({f})"),
        Replayed::Client(rtt) => format!(
            "send to completion less the connection's round trip ({} ms, median of the \
             connections' least of 5 empty round trips)",
            ms(rtt.map(|us| us as f64 / 1000.0))
        ),
    };
    let _ = writeln!(
        s,
        "(+/-: Mann-Whitney p < 0.05, the median changed by {MIN_CHANGE_PCT:.0} % or more and \
         by {MIN_CHANGE_MS} ms or more; recorded: the log's durations, replayed: {side})"
    );
    let _ = writeln!(
        s,
        "   change  recorded: n  median ms   p95 ms  replayed: n  median ms   p95 ms  statement"
    );
    for c in changes {
        let change = c.change_pct.map_or("-".into(), |p| format!("{p:+.0}%"));
        let _ = writeln!(
            s,
            "{} {:>7} {:>12} {:>10} {:>8} {:>12} {:>10} {:>8}  {}",
            c.verdict,
            change,
            c.recorded.count,
            ms(c.recorded.median_ms),
            ms(c.recorded.p95_ms),
            c.replayed.count,
            ms(c.replayed.median_ms),
            ms(c.replayed.p95_ms),
            shown(&c.statement)
        );
        for e in &c.errors {
            let only = match (e.recorded, e.replayed) {
                (0, _) => "only in the replay",
                (_, 0) => "only in the recording",
                _ => "in both, not as often",
            };
            let code = if e.sqlstate.is_empty() {
                String::new()
            } else {
                format!("{} ", e.sqlstate)
            };
            let _ = writeln!(
                s,
                "           error {only}: {code}{} (recorded {}, replayed {})",
                shown(&e.message),
                e.recorded,
                e.replayed
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tallies(rows: &[(u64, &str, &[u64])]) -> Tallies {
        let mut t = Tallies::default();
        for (key, text, us) in rows {
            t.entry(*key, || text.to_string());
            for v in *us {
                t.record(*key, *v);
            }
        }
        t
    }

    #[test]
    fn a_statement_four_times_slower_is_ranked_first_and_marked_slower() {
        let same: Vec<u64> = (0..200).map(|i| 1_000 + i).collect();
        let slow: Vec<u64> = (0..200).map(|i| 4_000 + i).collect();
        let recorded = tallies(&[(1, "SELECT 1", &same), (2, "SELECT 2", &same)]);
        let replayed = tallies(&[(1, "SELECT 1", &same), (2, "SELECT 2", &slow)]);
        let changes = build(&recorded, &replayed);
        assert_eq!(changes.len(), 2);
        assert_eq!(
            (changes[0].statement.as_str(), changes[0].verdict.as_str()),
            ("SELECT 2", "+")
        );
        assert_eq!(changes[1].verdict, "~");
        let t = table(&changes, &Replayed::Client(Some(150)));
        assert!(
            t.contains("2 statements: 1 slower (+), 0 faster (-), 1 without"),
            "{t}"
        );
        assert!(t.contains("round trip (0.150 ms,"), "{t}");
    }

    #[test]
    fn unused_statements_are_left_out_and_long_ones_cut_in_the_table() {
        let long = format!("SELECT '{}'", "x".repeat(200));
        let recorded = tallies(&[(1, "SELECT never", &[]), (2, &long, &[900])]);
        let changes = build(&recorded, &Tallies::default());
        assert_eq!(changes.len(), 1, "the unused statement is left out");
        assert_eq!(changes[0].statement, long, "the document keeps it whole");
        let t = table(&changes, &Replayed::Served("r.log".into()));
        let row = t.lines().last().expect("a row");
        assert!(row.ends_with("..."), "{row}");
        assert_eq!(
            row.split("  ").last().map(|s| s.trim().chars().count()),
            Some(100)
        );
        assert!(
            t.contains("the replay server's logged durations (r.log)"),
            "{t}"
        );
    }

    #[test]
    fn served_durations_replace_the_clients_latencies() {
        let mut measured = tallies(&[(1, "a", &[5_000]), (2, "b", &[7_000])]);
        let served = tallies(&[(1, "a", &[100, 200])]);
        use_served(&mut measured, served);
        assert_eq!(measured.get(1).map(|t| t.latency_us.len()), Some(2));
        assert_eq!(measured.get(2).map(|t| t.latency_us.len()), Some(0));
    }
}
