//! The steady-state findings of a per-second series: `warm_up` (a transient was cut: the
//! figures over the window differ from the whole run's), `too_short`, `unsettled` and `trend`.

use crate::finding::{Finding, Severity};
use crate::steady::{steady, Steady, BATCH, MIN_BATCHES};

/// The series' steady window and what it says about the run (`interval_s`: seconds per value).
pub fn window_findings(tps: &[f64], interval_s: f64) -> (Option<Steady>, Vec<Finding>) {
    let src = "per-second series, MSER-5";
    let Some(st) = steady(tps) else {
        let f = Finding::new(
            "too_short",
            Severity::Warning,
            format!(
                "{:.0} s is too short to tell warm-up from steady state",
                tps.len() as f64 * interval_s
            ),
            "run for at least a minute, and longer with a warm-up",
        )
        .with("run", tps.len() as f64 * interval_s, "s", src);
        return (None, vec![f]);
    };
    let mut out = Vec::new();
    if st.unsettled {
        out.push(
            Finding::new(
                "unsettled",
                Severity::Warning,
                "the throughput kept changing: no steady state was reached".into(),
                "run longer, or warm up first (pg_prewarm, a warm-up run)",
            )
            .with("cut by MSER-5", st.warm_up as f64 * interval_s, "s", src)
            .with("run", tps.len() as f64 * interval_s, "s", src),
        );
    } else if !st.long_enough() {
        out.push(
            Finding::new(
                "too_short",
                Severity::Warning,
                format!(
                    "the steady window is {:.0} s, under the {} s the figures need",
                    st.window as f64 * interval_s,
                    (MIN_BATCHES * BATCH) as f64 * interval_s
                ),
                "run longer",
            )
            .with("steady window", st.window as f64 * interval_s, "s", src),
        );
    }
    if st.material_warm_up() && !st.unsettled {
        out.push(warm_up(&st, interval_s, src));
    }
    if st.trend && !st.unsettled {
        out.push(trend(&st, src));
    }
    (Some(st), out)
}

fn warm_up(st: &Steady, interval_s: f64, src: &str) -> Finding {
    let share = if st.mean != 0.0 {
        100.0 * (st.whole_mean - st.mean) / st.mean
    } else {
        0.0
    };
    let severity = if share.abs() > 5.0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    Finding::new(
        "warm_up",
        severity,
        format!(
            "the first {:.0} s were warm-up: {:.1} tx/s over the steady window (± {:.1}), \
             {:.1} over the whole run ({share:+.1} %)",
            st.warm_up as f64 * interval_s,
            st.mean,
            st.ci95,
            st.whole_mean
        ),
        "quote the steady window's figure, or warm up before measuring",
    )
    .with("warm-up", st.warm_up as f64 * interval_s, "s", src)
    .with("steady mean", st.mean, "tx/s", src)
    .with("whole-run mean", st.whole_mean, "tx/s", src)
}

fn trend(st: &Steady, src: &str) -> Finding {
    let share = if st.mean != 0.0 {
        100.0 * st.drift / st.mean
    } else {
        0.0
    };
    Finding::new(
        "trend",
        Severity::Warning,
        format!(
            "the throughput drifted by {share:+.1} % across the steady window (t = {:.1}): the \
             figure depends on the run's length",
            st.drift_t
        ),
        "look for growth (bloat, a cache filling, autovacuum falling behind) and run long enough \
         to include it",
    )
    .with("drift", st.drift, "tx/s", src)
    .with("t statistic", st.drift_t, "", src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_and_a_trend_are_named_and_a_level_is_quiet() {
        let mut s: Vec<f64> = (0..20).map(|i| 50.0 * i as f64).collect();
        s.extend((0..100).map(|i| 1000.0 + if i % 2 == 0 { 20.0 } else { -20.0 }));
        let (st, f) = window_findings(&s, 1.0);
        assert!(st.is_some());
        let names: Vec<&str> = f.iter().map(|f| f.check.as_str()).collect();
        assert_eq!(names, ["warm_up"], "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);

        let level: Vec<f64> = (0..90).map(|i| 700.0 + (i % 3) as f64).collect();
        assert!(window_findings(&level, 1.0).1.is_empty());

        let falling: Vec<f64> = (0..120)
            .map(|i| 1000.0 - 3.0 * i as f64 + (i % 2) as f64)
            .collect();
        let f = window_findings(&falling, 1.0).1;
        assert!(
            f.iter()
                .any(|f| f.check == "trend" || f.check == "unsettled"),
            "{f:?}"
        );
    }

    #[test]
    fn short_runs_are_too_short() {
        let f = window_findings(&[100.0; 8], 1.0).1;
        assert_eq!(f[0].check, "too_short");
        let f = window_findings(&[100.0; 20], 1.0).1;
        assert_eq!(f[0].check, "too_short");
        assert!(f[0].summary.contains("20 s"), "{f:?}");
    }
}
