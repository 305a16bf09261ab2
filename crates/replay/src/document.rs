//! The replay document (`pgrig_results::replay_doc`) of one `pgrig replay`: pgreplay's parse
//! and replay statistics, the lag summary and `--compare`'s statements; written by `--json`
//! (private, never through a link) and kept by `--store`.

use crate::error::Error;
use crate::replayer::ReplayStats;
use crate::stats::ParseStats;
use pgrig_compare::statements::MIN_CHANGE_PCT;
use pgrig_results::replay_doc::{
    LagSummary, ReplayDoc, ReplayDocument, ReplayFigures, ReplayOutcomes, StatementChange,
    REPLAY_SCHEMA_VERSION,
};

fn parse_map(p: &ParseStats) -> std::collections::BTreeMap<String, u64> {
    [
        ("lines", p.lines),
        ("simple", p.simple),
        ("copy", p.copy),
        ("param", p.param),
        ("named", p.named),
        ("exec_named", p.exec_named),
        ("fastpath", p.fastpath),
        ("cancel", p.cancel),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn lag(s: &ReplayStats) -> LagSummary {
    let l = s.lag_by_second.values();
    LagSummary {
        items: l.clone().map(|x| x.items).sum(),
        late: l.clone().map(|x| x.late).sum(),
        waiting_for_server_s: l.clone().map(|x| x.server.as_secs_f64()).sum(),
        replayer_busy_s: l.map(|x| x.replayer.as_secs_f64()).sum(),
    }
}

/// The document of a finished (or interrupted) replay; `statements` is `None` without
/// `--compare`.
pub fn of(
    inputs: &[String],
    parse: Option<&ParseStats>,
    s: &ReplayStats,
    interrupted: bool,
    statements: Option<Vec<StatementChange>>,
) -> ReplayDocument {
    let executed = s.results.saturating_sub(s.prepares);
    let run_time_s = s.run_time.as_secs_f64();
    let compare = statements.is_some();
    ReplayDocument {
        schema_version: REPLAY_SCHEMA_VERSION,
        pgrig_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: "replay".into(),
        tps: if run_time_s > 0.0 {
            s.results as f64 / run_time_s
        } else {
            0.0
        },
        duration_s: run_time_s,
        transactions: ReplayOutcomes {
            ok: s.results.saturating_sub(s.errors),
            failed: s.errors,
        },
        interrupted,
        replay: ReplayDoc {
            inputs: inputs.to_vec(),
            parse: parse.map(parse_map).unwrap_or_default(),
            figures: ReplayFigures {
                speed: s.speed,
                run_time_s,
                calls: s.actions,
                connections: s.sessions_total,
                max_connections: s.sessions_max,
                statements: executed,
                errors: s.errors,
                max_lag_s: s.secs_behind,
            },
            lag: lag(s),
            alpha: compare.then_some(pgrig_compare::ALPHA),
            min_change_pct: compare.then_some(MIN_CHANGE_PCT),
            statements: statements.unwrap_or_default(),
        },
    }
}

/// Writes the document to `path` (pretty JSON, private).
pub fn write(path: &str, doc: &ReplayDocument) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    pgrig_outfile::write(std::path::Path::new(path), text.as_bytes()).map_err(|e| {
        Error(format!(
            "could not write JSON result file \"{path}\": {}",
            pgrig_wire::strerror(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stats() -> ReplayStats {
        ReplayStats {
            speed: 2.0,
            run_time: Duration::from_secs(4),
            results: 10,
            prepares: 2,
            errors: 3,
            ..ReplayStats::default()
        }
    }

    #[test]
    fn the_document_counts_executions_and_outcomes_as_pgreplay() {
        let doc = of(&["a.log".into()], None, &stats(), false, None);
        assert_eq!(doc.tps, 2.5);
        assert_eq!((doc.transactions.ok, doc.transactions.failed), (7, 3));
        assert_eq!(doc.replay.figures.statements, 8, "results less prepares");
        assert_eq!(doc.replay.alpha, None, "no --compare");
        assert!(doc.replay.parse.is_empty());
        let compared = of(&[], None, &stats(), true, Some(Vec::new()));
        assert_eq!(compared.replay.min_change_pct, Some(MIN_CHANGE_PCT));
        assert!(compared.interrupted);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_named() {
        let doc = of(&[], None, &ReplayStats::default(), false, None);
        assert_eq!(doc.tps, 0.0, "no run time: no rate");
        let e = write("/nonexistent-dir/r.json", &doc).expect_err("refused");
        assert_eq!(
            e.to_string(),
            "could not write JSON result file \"/nonexistent-dir/r.json\": No such file or directory"
        );
    }
}
