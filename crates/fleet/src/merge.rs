//! The segments' results merged into the whole run's: counters and moments added, HDR
//! histograms added (exact: a merged percentile is the percentile of all transactions), per
//! second series added second by second, every thread's CPU and every client's tally kept
//! (client ids are global, so the tallies of the segments do not overlap). Each result has
//! passed `crate::check`; the merge refuses segments that ran other scripts, and every sum is
//! checked: a total beyond [`MAX_COUNT`] is refused, never wrapped.

use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::RunResult;
use pgrig_engine::stats::Snapshot;

use crate::check::MAX_COUNT;
use crate::FleetError;

/// Every count of a snapshot, in a fixed order.
fn snapshot_counts(s: &Snapshot, out: &mut Vec<u64>) {
    let c = &s.counts;
    out.extend([
        c.ok,
        c.skipped,
        c.serialization_failures,
        c.deadlock_failures,
        c.other_failures,
        c.retried,
        c.retries,
        c.late,
        c.rollbacks,
        c.replies.rows,
        c.replies.changed,
        c.replies.neither,
        s.latency.count,
        s.lag.count,
    ]);
}

/// Every count the merge adds, in a fixed order (the same for results of the same scripts).
fn counts(r: &RunResult) -> Vec<u64> {
    let mut out = vec![r.stats.reconnects, u64::from(r.aborted_clients)];
    for s in &r.stats.scripts {
        snapshot_counts(&s.snap, &mut out);
        out.push(s.histogram.len());
        out.push(s.command_histograms.iter().map(|h| h.len()).sum());
        for c in &s.commands {
            out.extend([c.latency.count, c.failures, c.retries]);
        }
    }
    out
}

/// `sums[i] += add[i]` for each count, refused beyond [`MAX_COUNT`].
fn add_checked(sums: &mut Vec<u64>, add: &[u64]) -> Result<(), ()> {
    if sums.len() < add.len() {
        sums.resize(add.len(), 0);
    }
    for (s, a) in sums.iter_mut().zip(add) {
        *s = s.checked_add(*a).filter(|v| *v <= MAX_COUNT).ok_or(())?;
    }
    Ok(())
}

/// Whether two results ran the same scripts (names, weights, commands).
fn same_scripts(a: &RunResult, b: &RunResult) -> bool {
    a.scripts.len() == b.scripts.len()
        && a.stats.scripts.len() == b.stats.scripts.len()
        && a.scripts.iter().zip(&b.scripts).all(|(x, y)| {
            x.desc == y.desc && x.weight == y.weight && x.command_texts == y.command_texts
        })
        && (a.stats.scripts.iter().zip(&b.stats.scripts))
            .all(|(x, y)| x.commands.len() == y.commands.len())
}

/// Refuses segments whose results do not add up: other scripts than the first's, or a total
/// (of the run, or of one second) beyond [`MAX_COUNT`]. `parts` are (segment, result).
fn check_sums(parts: &[(u32, RunResult)]) -> Result<(), FleetError> {
    let Some((_, first)) = parts.first() else {
        return Ok(());
    };
    let mut total = Vec::new();
    let mut seconds: Vec<Vec<u64>> = Vec::new();
    for (seg, p) in parts {
        let refuse =
            |why: &str| FleetError::new(format!("refused the result of segment {seg}: {why}"));
        if !same_scripts(first, p) {
            let other = format!("it ran other scripts than segment {} did", parts[0].0);
            return Err(refuse(&other));
        }
        let too_many = |_| refuse(&format!("the run's counts would exceed {MAX_COUNT}"));
        add_checked(&mut total, &counts(p)).map_err(too_many)?;
        if seconds.len() < p.series.len() {
            seconds.resize(p.series.len(), Vec::new());
        }
        for (sum, s) in seconds.iter_mut().zip(&p.series) {
            let mut c = Vec::new();
            snapshot_counts(s, &mut c);
            add_checked(sum, &c).map_err(too_many)?;
        }
    }
    Ok(())
}

/// Merges the segments' results (segment, result; at least one) under the whole run's
/// configuration.
pub fn merge(cfg: BenchConfig, parts: Vec<(u32, RunResult)>) -> Result<RunResult, FleetError> {
    check_sums(&parts)?;
    let mut it = parts.into_iter().map(|(_, p)| p);
    let mut all = it
        .next()
        .ok_or_else(|| FleetError::new("no segment handed in a result"))?;
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
    Ok(all)
}
