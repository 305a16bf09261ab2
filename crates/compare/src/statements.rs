//! `pgrig replay --compare`: one statement's recorded latencies against its replayed ones, with
//! the statistics `pgrig compare` uses — medians ([`crate::median_ci::median`]) and the
//! Mann–Whitney test ([`crate::mann_whitney`]) at [`crate::ALPHA`]. The verdict: `+` (slower)
//! or `-` (faster) when the test rejects *and* the medians differ by at least
//! [`MIN_CHANGE_PCT`] and [`MIN_CHANGE_MS`] (with thousands of executions a test rejects for
//! differences nobody would act on); `~`
//! otherwise; `?` when the executions are too few for any outcome to reach the level.

use pgrig_results::replay_doc::{ErrorChange, SideFigures, StatementChange};

use crate::mann_whitney;
use crate::median_ci::median;
use crate::ALPHA;

/// The smallest change of the median, in %, shown as `+` or `-`.
pub const MIN_CHANGE_PCT: f64 = 20.0;

/// The smallest change of the median, in ms, shown as `+` or `-`: statements under a
/// millisecond move by more than 20 % between two runs of the same workload on the same server
/// (pgbench's `UPDATE pgbench_accounts`, 1 000 executions, recorded twice five minutes apart
/// on a shared 2-core machine: medians 0.071 and 0.101 ms).
pub const MIN_CHANGE_MS: f64 = 0.1;

/// One side of a statement, as plain numbers.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// latencies of the executions without error, ms
    pub latencies_ms: Vec<f64>,
    /// executions timed (may exceed `latencies_ms.len()` when a large sample was thinned)
    pub count: u64,
    pub p95_ms: Option<f64>,
    /// errors: (SQLSTATE or empty, message, how many)
    pub errors: Vec<(String, String, u64)>,
}

fn figures(s: &Side) -> SideFigures {
    SideFigures {
        count: s.count,
        errors: s.errors.iter().map(|e| e.2).sum(),
        median_ms: median(&s.latencies_ms),
        p95_ms: s.p95_ms,
    }
}

/// The verdict and p-value of recorded `a` against replayed `b`.
fn verdict(a: &[f64], b: &[f64], change: Option<(f64, f64)>) -> (&'static str, Option<f64>) {
    let Some(t) = mann_whitney::test(a, b) else {
        return ("?", None);
    };
    if mann_whitney::min_p(a.len(), b.len()) >= ALPHA {
        return ("?", Some(t.p));
    }
    match change {
        Some((c, d)) if t.p < ALPHA && c >= MIN_CHANGE_PCT && d >= MIN_CHANGE_MS => {
            ("+", Some(t.p))
        }
        Some((c, d)) if t.p < ALPHA && c <= -MIN_CHANGE_PCT && d <= -MIN_CHANGE_MS => {
            ("-", Some(t.p))
        }
        _ => ("~", Some(t.p)),
    }
}

/// Errors whose count differs between the sides, matched by message (a log does not carry the
/// SQLSTATE); the SQLSTATE shown is the replay's where it has one.
fn error_changes(a: &Side, b: &Side) -> Vec<ErrorChange> {
    let mut out: Vec<ErrorChange> = Vec::new();
    for (replayed, side) in [(false, a), (true, b)] {
        for (code, message, n) in &side.errors {
            let i = match out.iter().position(|e| e.message == *message) {
                Some(i) => i,
                None => {
                    out.push(ErrorChange {
                        message: message.clone(),
                        ..ErrorChange::default()
                    });
                    out.len() - 1
                }
            };
            let e = &mut out[i];
            if e.sqlstate.is_empty() {
                e.sqlstate = code.clone();
            }
            if replayed {
                e.replayed += n;
            } else {
                e.recorded += n;
            }
        }
    }
    out.retain(|e| e.recorded != e.replayed);
    out
}

/// One statement compared.
pub fn compare(statement: &str, recorded: &Side, replayed: &Side) -> StatementChange {
    let (ra, rb) = (figures(recorded), figures(replayed));
    let change_pct = match (ra.median_ms, rb.median_ms) {
        (Some(a), Some(b)) if a > 0.0 => Some(100.0 * (b - a) / a),
        _ => None,
    };
    let delta = match (ra.median_ms, rb.median_ms) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let (v, p) = verdict(
        &recorded.latencies_ms,
        &replayed.latencies_ms,
        change_pct.zip(delta),
    );
    StatementChange {
        statement: statement.to_string(),
        recorded: ra,
        replayed: rb,
        change_pct,
        p_value: p,
        verdict: v.to_string(),
        errors: error_changes(recorded, replayed),
    }
}

/// Orders statements slowest-getting first: `+` by change (largest first), then those with
/// errors on one side, `~` and `?` by change, `-` last.
pub fn rank(changes: &mut [StatementChange]) {
    let class = |s: &StatementChange| match s.verdict.as_str() {
        "+" => 0,
        _ if !s.errors.is_empty() => 1,
        "-" => 3,
        _ => 2,
    };
    changes.sort_by(|a, b| {
        class(a).cmp(&class(b)).then_with(|| {
            let (x, y) = (
                a.change_pct.unwrap_or(f64::NEG_INFINITY),
                b.change_pct.unwrap_or(f64::NEG_INFINITY),
            );
            y.total_cmp(&x)
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(xs: &[f64]) -> Side {
        Side {
            latencies_ms: xs.to_vec(),
            count: xs.len() as u64,
            ..Side::default()
        }
    }

    #[test]
    fn a_large_significant_change_is_a_sign_a_small_or_noisy_one_is_not() {
        let a: Vec<f64> = (0..30).map(|i| 1.0 + f64::from(i) * 0.01).collect();
        let slow: Vec<f64> = a.iter().map(|x| x * 3.0).collect();
        let c = compare("select ?", &side(&a), &side(&slow));
        assert_eq!(c.verdict, "+");
        assert!(c.change_pct.unwrap() > 190.0);
        assert_eq!(compare("s", &side(&slow), &side(&a)).verdict, "-");
        // significant but 5 %: not shown
        let bit: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        assert_eq!(compare("s", &side(&a), &side(&bit)).verdict, "~");
        assert_eq!(compare("s", &side(&a), &side(&a)).verdict, "~");
        assert_eq!(compare("s", &side(&[1.0, 2.0]), &side(&[9.0])).verdict, "?");
        assert_eq!(compare("s", &side(&[]), &side(&a)).verdict, "?");
    }

    #[test]
    fn a_change_under_the_smallest_shown_in_ms_is_not_a_sign() {
        // 0.03 ms to 0.06 ms: +100 %, significant, but 0.03 ms
        let a: Vec<f64> = (0..200)
            .map(|i| 0.03 + f64::from(i % 10) * 0.0001)
            .collect();
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let c = compare("begin", &side(&a), &side(&b));
        assert!(c.change_pct.unwrap() > 90.0);
        assert_eq!(c.verdict, "~");
        // 0.3 ms to 0.6 ms is shown
        let a10: Vec<f64> = a.iter().map(|x| x * 10.0).collect();
        let b10: Vec<f64> = b.iter().map(|x| x * 10.0).collect();
        assert_eq!(compare("s", &side(&a10), &side(&b10)).verdict, "+");
        assert_eq!(compare("s", &side(&b10), &side(&a10)).verdict, "-");
    }

    #[test]
    fn errors_are_matched_by_message_and_only_differences_kept() {
        let mut a = side(&[1.0]);
        a.errors = vec![("".into(), "division by zero".into(), 2)];
        let mut b = side(&[1.0]);
        b.errors = vec![
            ("22012".into(), "division by zero".into(), 2),
            ("42P01".into(), "relation \"t\" does not exist".into(), 5),
        ];
        let c = compare("s", &a, &b);
        assert_eq!(c.errors.len(), 1);
        let e = &c.errors[0];
        assert_eq!(
            (e.sqlstate.as_str(), e.recorded, e.replayed),
            ("42P01", 0, 5)
        );
        assert_eq!(c.replayed.errors, 7);
    }

    #[test]
    fn slower_statements_come_first() {
        let mk = |v: &str, c: f64| StatementChange {
            verdict: v.into(),
            change_pct: Some(c),
            ..StatementChange::default()
        };
        let mut l = vec![mk("-", -50.0), mk("~", 3.0), mk("+", 40.0), mk("+", 400.0)];
        rank(&mut l);
        let got: Vec<f64> = l.iter().map(|s| s.change_pct.unwrap()).collect();
        assert_eq!(got, [400.0, 40.0, 3.0, -50.0]);
    }
}
