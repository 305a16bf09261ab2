//! Background work inside the measured window (`no_checkpoint`, `no_autovacuum`) and the
//! schedule under a rate (`schedule_lag`: an open-loop run the server could not keep up with).

use crate::finding::{Finding, Severity};

/// What the server did in the background during a run's window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Background {
    /// the workload writes
    pub writes: bool,
    /// checkpoints (timed or requested) that started inside the window
    pub checkpoints: u64,
    /// autovacuum or autoanalyze runs on the run's tables inside the window (`None`: unknown)
    pub autovacuums: Option<u64>,
    pub window_s: f64,
    /// the server's `checkpoint_timeout`
    pub checkpoint_timeout_s: f64,
}

/// A write workload's window that missed the background work its throughput will pay for.
pub fn coverage(b: &Background) -> Vec<Finding> {
    let mut out = Vec::new();
    if !b.writes {
        return out;
    }
    if b.checkpoints == 0 {
        out.push(
            Finding::new(
                "no_checkpoint",
                Severity::Warning,
                format!(
                    "no checkpoint in the {:.0} s window: the figure excludes the cost of \
                     checkpoints (and of the full-page writes after one)",
                    b.window_s
                ),
                &format!(
                    "run for at least checkpoint_timeout ({:.0} s) plus the warm-up to include one",
                    b.checkpoint_timeout_s
                ),
            )
            .with("window", b.window_s, "s", "the run")
            .with(
                "checkpoint_timeout",
                b.checkpoint_timeout_s,
                "s",
                "pg_settings",
            ),
        );
    }
    if b.autovacuums == Some(0) {
        out.push(
            Finding::new(
                "no_autovacuum",
                Severity::Info,
                "no autovacuum ran on the workload's tables in the window: the figure excludes \
                 its cost"
                    .into(),
                "run longer to include it, or say the result excludes it",
            )
            .with(
                "autovacuum runs",
                0.0,
                "",
                "pg_stat_user_tables.autovacuum_count",
            ),
        );
    }
    out
}

/// Schedule lag under `--rate`: `lag_s` the lag at the end of each interval. A lag that grows
/// through the run to more than a second means the server could not keep the rate (open-loop
/// overload): the latencies then measure the queue, not the server.
pub fn schedule_lag(lag_s: &[f64], rate: f64) -> Option<Finding> {
    let n = lag_s.len();
    if n < 4 {
        return None;
    }
    let last = lag_s[n - 1];
    let half = lag_s[n / 2];
    if last <= 1.0 || last <= 1.5 * half {
        return None;
    }
    Some(
        Finding::new(
            "schedule_lag",
            Severity::Invalid,
            format!(
                "the schedule fell {last:.1} s behind and kept falling: the server could not \
                 keep the rate of {rate} tx/s, and the latencies measure the queue"
            ),
            "lower --rate below the throughput the server sustains",
        )
        .with("lag at the end", last, "s", "the client's schedule")
        .with("lag at half time", half, "s", "the client's schedule")
        .with("rate", rate, "tx/s", "the options"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes() -> Background {
        Background {
            writes: true,
            checkpoints: 2,
            autovacuums: Some(3),
            window_s: 600.0,
            checkpoint_timeout_s: 300.0,
        }
    }

    #[test]
    fn a_window_with_checkpoints_and_autovacuum_is_quiet() {
        assert!(coverage(&writes()).is_empty());
        let read_only = Background {
            writes: false,
            checkpoints: 0,
            ..writes()
        };
        assert!(coverage(&read_only).is_empty());
    }

    #[test]
    fn a_write_window_without_a_checkpoint_says_how_long_to_run() {
        let b = Background {
            checkpoints: 0,
            autovacuums: Some(0),
            window_s: 60.0,
            ..writes()
        };
        let f = coverage(&b);
        assert_eq!(f[0].check, "no_checkpoint");
        assert!(f[0].advice.contains("300 s"), "{:?}", f[0]);
        assert_eq!(f[1].check, "no_autovacuum");
    }

    #[test]
    fn a_growing_lag_is_overload_and_a_bounded_one_is_not() {
        let growing: Vec<f64> = (0..30).map(|i| 0.2 * i as f64).collect();
        let f = schedule_lag(&growing, 5000.0).unwrap();
        assert_eq!(f.severity, Severity::Invalid);
        assert!(f.summary.contains("5.8 s behind"), "{f:?}");
        let bounded: Vec<f64> = (0..30).map(|i| 0.001 * (i % 5) as f64).collect();
        assert_eq!(schedule_lag(&bounded, 5000.0), None);
        // a lag that rose once and stayed is not growing
        let step: Vec<f64> = (0..30).map(|i| if i < 5 { 0.0 } else { 2.0 }).collect();
        assert_eq!(schedule_lag(&step, 5000.0), None);
    }
}
