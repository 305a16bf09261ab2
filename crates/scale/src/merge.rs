//! The segments' results merged into the whole run's: counters and moments added, HDR
//! histograms added (exact: a merged percentile is the percentile of all transactions), per
//! second series added second by second, every thread's CPU and every client's tally kept
//! (client ids are global, so the tallies of the segments do not overlap).

use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::RunResult;
use pgrig_engine::stats::Snapshot;

/// Merges the segments' results (at least one) under the whole run's configuration.
pub fn merge(cfg: BenchConfig, parts: Vec<RunResult>) -> Option<RunResult> {
    let mut it = parts.into_iter();
    let mut all = it.next()?;
    for p in it {
        all.stats.merge(&p.stats);
        all.bench_duration_s = all.bench_duration_s.max(p.bench_duration_s);
        all.initial_conn_ms = all.initial_conn_ms.max(p.initial_conn_ms);
        all.threads_cpu.extend(p.threads_cpu);
        if all.series.len() < p.series.len() {
            all.series.resize(p.series.len(), Snapshot::default());
        }
        for (a, b) in all.series.iter_mut().zip(&p.series) {
            a.merge(b);
        }
        all.aborted_clients += p.aborted_clients;
        all.clients.extend(p.clients);
        all.interrupted |= p.interrupted;
    }
    all.clients.sort_by_key(|c| c.id);
    all.config = cfg;
    Some(all)
}
