//! What the workers of a pgbench run hand in, as the coordinator reads it back: each segment's
//! result decoded and checked (`codec`, `check::result`), merged into the run's result
//! (`merge`), each host's client-CPU line, and a failed segment's line with the worker's words
//! made printable.

use std::collections::BTreeMap;

use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::RunResult;

use crate::protocol::WorkerRow;
use crate::FleetError;

/// The results handed in (of run `run` of `count` segments), checked and merged; the segments
/// without one; each host's CPU line ([`host_cpu`]).
#[allow(clippy::type_complexity)]
pub fn merged(
    (run, count): (i64, u32),
    ws: &[WorkerRow],
    cfg: BenchConfig,
) -> Result<(RunResult, Vec<u32>, BTreeMap<u32, String>), FleetError> {
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let mut cpu = BTreeMap::new();
    for w in ws {
        match w.result.as_deref().filter(|_| w.state == "done") {
            Some(text) => {
                let r = result_of((run, count), w, text, cfg.clients)?;
                cpu.insert(w.segment, host_cpu(&r.threads_cpu));
                parts.push((w.segment, r));
            }
            None => missing.push(w.segment),
        }
    }
    let merged =
        crate::merge::merge(cfg, parts).map_err(|e| FleetError::new(format!("run {run}: {e}")))?;
    Ok((merged, missing, cpu))
}

/// The result worker `w` handed in, decoded and checked.
fn result_of(
    (run, count): (i64, u32),
    w: &WorkerRow,
    text: &str,
    clients: u32,
) -> Result<RunResult, FleetError> {
    let r = crate::codec::decode(text).map_err(|e| {
        FleetError::new(format!(
            "run {}: refused the result of segment {} (host {:?}): {e}",
            run, w.segment, w.host
        ))
    })?;
    let seg = crate::share::SegmentId {
        index: w.segment,
        count,
    };
    crate::check::result(run, seg, &w.host, &r, clients)?;
    Ok(r)
}

/// One host's client CPU under the run document's two names: its threads' CPU time and
/// run-queue wait (seconds, and the busiest thread's share), flagged by the self-check's rules.
pub fn host_cpu(threads: &[pgrig_engine::result::ThreadCpu]) -> String {
    let max =
        |f: fn(&pgrig_engine::result::ThreadCpu) -> f64| threads.iter().map(f).fold(0.0, f64::max);
    let cpu: f64 = threads.iter().map(|t| t.cpu_time_s()).sum();
    let wait: f64 = threads.iter().map(|t| t.wait_s).sum();
    let mut flags = String::new();
    if threads.iter().any(|t| t.saturated()) {
        flags.push_str(" — client-saturated");
    }
    if threads.iter().any(|t| t.contended()) {
        flags.push_str(" — host-contended");
    }
    format!(
        "client CPU time {cpu:.2} s (busiest thread {:.0}%), run-queue wait {wait:.2} s (longest {:.0}%){flags}",
        100.0 * max(|t| t.cpu_time()),
        100.0 * max(|t| t.run_queue_wait()),
    )
}

/// `segment I on HOST failed: WHY`.
pub fn failure(w: &WorkerRow) -> String {
    // the worker's own words, but read from the schema: no control characters but newlines
    let why: String = (w.error.as_deref().unwrap_or("").chars())
        .map(|c| if c.is_control() && c != '\n' { '?' } else { c })
        .collect();
    format!("segment {} on {} failed: {why}", w.segment, w.host)
}

#[cfg(test)]
mod tests {
    use pgrig_engine::result::ThreadCpu;

    /// A host whose thread waited for a CPU is host-contended, not client-saturated.
    #[test]
    fn a_host_line_names_cpu_time_and_run_queue_wait() {
        let t = |user_s, wait_s| ThreadCpu {
            user_s,
            sys_s: 0.0,
            wait_s,
            wall_s: 5.0,
        };
        let line = super::host_cpu(&[t(0.79, 3.4), t(0.5, 0.0)]);
        assert_eq!(
            line,
            "client CPU time 1.29 s (busiest thread 16%), run-queue wait 3.40 s (longest 68%) — host-contended"
        );
        let busy = super::host_cpu(&[t(4.8, 0.1)]);
        assert!(busy.ends_with("— client-saturated"), "{busy}");
    }
}
