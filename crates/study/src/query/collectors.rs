//! The study's collectors around a query run's measured executions: server counter deltas,
//! wait events sampled meanwhile and the throwaway server's process usage (warm cache), and
//! relation sizes after, and with `[collect] profile` the perf profile of the server's processes
//! over the measured executions (as script runs record it). With a cold cache the server restarts between executions, so only the
//! relation sizes are taken (counters and processes do not survive the restarts).

use std::time::{Duration, Instant};

use crate::collect::sampler::{proc_usage, WaitSampler};
use crate::collect::stats::{relation_sizes, StatsSnapshot};
use crate::error::StudyError;
use crate::managed::Managed;
use crate::record::Collected;
use crate::spec::CollectSpec;
use crate::workload::CacheState;

/// Runs `f` with the collectors around it.
pub fn around<T>(
    m: &mut Managed,
    collect: &CollectSpec,
    cache: CacheState,
    f: impl FnOnce(&mut Managed) -> Result<T, StudyError>,
) -> Result<(T, Collected), StudyError> {
    let mut c = Collected::default();
    if cache == CacheState::Cold {
        let out = f(m)?;
        c.relation_sizes = relation_sizes(&mut m.admin()?, &collect.relation_sizes)?;
        return Ok((out, c));
    }
    let before = match collect.server_stats {
        true => Some(StatsSnapshot::take(&mut m.admin()?)?),
        false => None,
    };
    let pids = |m: &Managed| {
        m.server
            .as_ref()
            .filter(|_| collect.server_processes)
            .map(|s| proc_usage(&s.pids()))
    };
    let proc_before = pids(m);
    let sampler = match collect.wait_events {
        true => Some(WaitSampler::start(
            m.admin()?,
            Duration::from_millis(collect.sample_interval_ms.max(10)),
        )),
        false => None,
    };
    let profiling = crate::collect::profile::start(m, collect)?;
    let t0 = Instant::now();
    let out = f(m);
    let wall = t0.elapsed().as_secs_f64();
    let waits = sampler.map(WaitSampler::finish);
    let profiles = profiling.map(|p| p.finish());
    let out = out?;
    if let Some(p) = profiles {
        c.profiles = p?;
    }
    if let (Some(b), Some(a)) = (proc_before, pids(m)) {
        c.server_processes = a.delta_json(&b, wall);
    }
    if let Some(w) = waits {
        c.lock_share = w.lock_share();
        c.wait_events = w.to_json();
    }
    let mut admin = m.admin()?;
    if let Some(b) = before {
        c.server_stats = StatsSnapshot::take(&mut admin)?.delta_json(&b);
    }
    c.relation_sizes = relation_sizes(&mut admin, &collect.relation_sizes)?;
    Ok((out, c))
}
