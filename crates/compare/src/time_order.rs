//! Whether the two sides' runs interleave in time. Runs of A all done before B's first (or the
//! reverse) measure the machine at two moments as well as two configurations: a drifting
//! machine (thermal state, caches, neighbours, background work) then shows as a difference with a
//! convincing p-value. Said beside the verdict, with the remedy: one study holding both
//! configurations with `order = "interleaved"`, whose repetitions alternate the points (a
//! study's default order runs each point's repetitions together, so its points do not interleave
//! either).

use crate::select::Side;

/// The earliest start and latest finish of a side's runs, when every run records both.
fn span(s: &Side) -> Option<(&str, &str)> {
    let starts = s.samples.iter().map(|r| r.started_at.as_deref());
    let ends = s.samples.iter().map(|r| r.finished_at.as_deref());
    let first = starts.collect::<Option<Vec<_>>>()?.into_iter().min()?;
    let last = ends.collect::<Option<Vec<_>>>()?.into_iter().max()?;
    Some((first, last))
}

/// The warning when one side's runs all ran before the other's; `None` when they interleave or
/// when the times are not recorded.
pub fn warning(a: &Side, b: &Side) -> Option<String> {
    let (sa, sb) = (span(a)?, span(b)?);
    let (before, after, (first, _), (_, last)) = if sa.1 <= sb.0 {
        (a, b, sa, sb)
    } else if sb.1 <= sa.0 {
        (b, a, sb, sa)
    } else {
        return None;
    };
    Some(format!(
        "{} ran entirely before {} ({first} to {last}): the two selections do not interleave in \
         time, so a machine that drifted between them shows as a difference; to compare \
         configurations, run them as points of one study with `order = \"interleaved\"` (its \
         repetitions then alternate the points) and compare its points",
        before.which, after.which
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Sample;
    use serde_json::json;

    fn side(which: &str, times: &[(&str, &str)]) -> Side {
        let docs: Vec<_> = times
            .iter()
            .enumerate()
            .map(|(i, (s, f))| json!({"run_id": i, "started_at": s, "finished_at": f}))
            .collect();
        Side {
            which: which.into(),
            text: which.into(),
            samples: docs.iter().map(Sample::from_doc).collect(),
        }
    }

    #[test]
    fn sides_run_one_after_the_other_are_named_and_interleaved_ones_are_not() {
        let t = |m: u32| format!("2026-11-25T10:{m:02}:00.000Z");
        let (t0, t1, t2, t3, t4, t5) = (t(0), t(1), t(2), t(3), t(4), t(5));
        let a = side("A", &[(&t0, &t1), (&t1, &t2)]);
        let b = side("B", &[(&t3, &t4), (&t4, &t5)]);
        let w = warning(&a, &b).unwrap();
        assert!(w.starts_with("A ran entirely before B"), "{w}");
        let w = warning(&b, &a).unwrap();
        assert!(w.starts_with("A ran entirely before B"), "{w}");
        let a = side("A", &[(&t0, &t1), (&t2, &t3)]);
        let b = side("B", &[(&t1, &t2), (&t3, &t4)]);
        assert_eq!(warning(&a, &b), None);
        let untimed = Side {
            which: "B".into(),
            text: "B".into(),
            samples: vec![Sample::from_doc(&json!({"run_id": 9}))],
        };
        assert_eq!(warning(&a, &untimed), None);
    }
}
