//! `pgrig replay --compare` runs: the statements ranked by how much slower the replay ran
//! them (slowest-getting first, as stored), the recorded and replayed medians side by side, and
//! a table with both sides' counts, medians and p95, the change, its verdict and
//! the errors one side had alone.

use crate::chart::{fmt, Axis, Chart, Kind, Pt, Series, Table};
use crate::model::Run;

/// Statements drawn per chart at most (the slowest-getting; the table lists them all).
const DRAWN: usize = 20;

/// A chart per run holding compared statements.
pub fn statements(id: &str, runs: &[Run]) -> Vec<Chart> {
    runs.iter()
        .filter_map(|r| Some((r, r.replay.as_ref()?)))
        .filter(|(_, p)| !p.statements.is_empty())
        .map(|(r, p)| chart(id, r, &p.statements))
        .collect()
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), fmt)
}

/// The table's row of the statement ranked `i` (from 0).
fn row(i: usize, s: &pgrig_results::replay_doc::StatementChange) -> Vec<String> {
    let errors: Vec<String> = (s.errors.iter())
        .map(|e| {
            format!(
                "{} {} (recorded {}, replayed {})",
                e.sqlstate, e.message, e.recorded, e.replayed
            )
        })
        .collect();
    vec![
        format!("{}", i + 1),
        s.verdict.clone(),
        s.change_pct.map_or("-".into(), |c| format!("{c:+.0} %")),
        s.recorded.count.to_string(),
        ms(s.recorded.median_ms),
        ms(s.recorded.p95_ms),
        s.replayed.count.to_string(),
        ms(s.replayed.median_ms),
        ms(s.replayed.p95_ms),
        errors.join("; "),
        s.statement.clone(),
    ]
}

fn chart(id: &str, run: &Run, list: &[pgrig_results::replay_doc::StatementChange]) -> Chart {
    let mut table = Table::new(
        "Statements, recorded against replayed: latency in ms, the change of the median and \
         its verdict (+ slower, - faster, ~ no change shown, ? too few executions)",
        &[
            "#",
            "verdict",
            "change",
            "recorded n",
            "recorded median",
            "recorded p95",
            "replayed n",
            "replayed median",
            "replayed p95",
            "errors on one side",
            "statement",
        ],
    );
    let (mut rec, mut rep, mut cats) = (Vec::new(), Vec::new(), Vec::new());
    for (i, s) in list.iter().enumerate() {
        let x = i as f64;
        if i < DRAWN {
            cats.push(format!("#{} {}", i + 1, s.verdict));
            if let Some(m) = s.recorded.median_ms {
                rec.push(Pt::new(x, m));
            }
            if let Some(m) = s.replayed.median_ms {
                rep.push(Pt::new(x, m));
            }
        }
        table.push(if i < DRAWN { x } else { f64::NAN }, row(i, s));
    }
    // linear: bars start at 0 (on a log axis they would start at 1 ms)
    let y = Axis::linear("median latency (ms)");
    Chart {
        id: format!("{id}-{}-replay-statements", crate::choose::slug(&run.id)),
        title: format!("{}: statements, recorded against replayed", run.id),
        desc: format!(
            "Median latency of each normalised statement in the log (recorded) and in the \
             replay, slowest-getting first{}",
            if list.len() > DRAWN {
                format!(" ({DRAWN} of {} drawn; the table lists all)", list.len())
            } else {
                String::new()
            }
        ),
        kind: Kind::Bars,
        x: Axis::categories("statement (rank, verdict)", cats),
        y,
        series: vec![
            Series {
                name: "recorded".into(),
                points: rec,
            },
            Series {
                name: "replayed".into(),
                points: rep,
            },
        ],
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: false,
        colors: Vec::new(),
    }
}
