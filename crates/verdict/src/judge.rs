//! The verdict on a run document: its steady window and the findings its own figures support
//! (warm-up, trend, too short, unsettled from the per-second series; aborted clients and failed
//! transactions from the counts), written into the document's `steady` and `findings`.
//! Findings that need the server (did it happen, checkpoints, configuration) are added by the
//! front ends that read it.

use pgrig_document::document::{RunDocument, SteadyWindow};

use crate::checks::{errors, Counts};
use crate::window::window_findings;

/// Sets `doc.steady` and replaces `doc.findings` with what the document's figures show.
pub fn judge(doc: &mut RunDocument) {
    let tps: Vec<f64> = doc.series.iter().map(|s| s.tps as f64).collect();
    let (steady, mut findings) = window_findings(&tps, 1.0);
    doc.steady = steady
        .filter(|st| !st.unsettled && st.long_enough())
        .map(|st| SteadyWindow {
            from_s: st.warm_up as f64,
            to_s: (st.warm_up + st.window) as f64,
            tps: st.mean,
            tps_ci95: st.ci95,
            drift_pct: if st.mean != 0.0 {
                100.0 * st.drift / st.mean
            } else {
                0.0
            },
        });
    let counts = Counts {
        client_tx: doc.transactions.ok,
        failed: doc.transactions.failed,
        retried: doc.transactions.retried,
        aborted_clients: u64::from(doc.aborted_clients),
        clients: u64::from(doc.options.clients),
        ..Counts::default()
    };
    findings.extend(errors(&counts));
    doc.findings = findings;
}
