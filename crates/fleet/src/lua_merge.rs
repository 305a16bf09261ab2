//! The segments' tallies of a Lua script run merged into the whole run's, exactly: counters and
//! latency sums added, the extremes kept, HDR histograms and sysbench's latency slots added
//! (so the merged percentiles are those of every event), the per-second series added second by
//! second, every thread kept in global id order. Each tally has passed `crate::lua_check`;
//! every sum is checked (a total beyond [`MAX_COUNT`] is refused, never wrapped), and segments
//! whose script options differ are refused.

use pgrig_lua::stats::SecondCounts;
use pgrig_lua::tally::Tally;

use crate::check::MAX_COUNT;
use crate::FleetError;

fn add(a: u64, b: u64) -> Result<u64, ()> {
    a.checked_add(b).filter(|v| *v <= MAX_COUNT).ok_or(())
}

/// `all += t`.
fn add_tally(all: &mut Tally, t: Tally) -> Result<(), ()> {
    let had_events = all.events > 0;
    all.events = add(all.events, t.events)?;
    all.reads = add(all.reads, t.reads)?;
    all.writes = add(all.writes, t.writes)?;
    all.other = add(all.other, t.other)?;
    all.errors = add(all.errors, t.errors)?;
    all.reconnects = add(all.reconnects, t.reconnects)?;
    all.restarted = add(all.restarted, t.restarted)?;
    all.sql_used |= t.sql_used;
    if t.events > 0 {
        all.min_ms = if had_events {
            all.min_ms.min(t.min_ms)
        } else {
            t.min_ms
        };
    }
    all.max_ms = all.max_ms.max(t.max_ms);
    all.sum_ms += t.sum_ms;
    all.sum_sq_us += t.sum_sq_us;
    all.hdr.add(&t.hdr).map_err(drop)?;
    if !all.slots.add_counts(t.slots.counts()) {
        return Err(());
    }
    all.lag = (
        add(all.lag.0, t.lag.0)?,
        all.lag.1 + t.lag.1,
        all.lag.2.max(t.lag.2),
    );
    all.elapsed_s = all.elapsed_s.max(t.elapsed_s);
    all.started_unix_s = all.started_unix_s.min(t.started_unix_s);
    if all.seconds.len() < t.seconds.len() {
        all.seconds.resize(t.seconds.len(), SecondCounts::default());
    }
    for (a, b) in all.seconds.iter_mut().zip(&t.seconds) {
        a.events = add(a.events, b.events)?;
        a.errors = add(a.errors, b.errors)?;
        a.latency_sum_ms += b.latency_sum_ms;
        a.reads = add(a.reads, b.reads)?;
        a.writes = add(a.writes, b.writes)?;
        a.other = add(a.other, b.other)?;
        a.reconnects = add(a.reconnects, b.reconnects)?;
        a.threads = a.threads.checked_add(b.threads).ok_or(())?;
    }
    all.threads.extend(t.threads);
    all.fatal |= t.fatal;
    all.interrupted |= t.interrupted;
    Ok(())
}

/// Merges the segments' tallies (segment, tally; at least one, each checked).
pub fn merge(mut parts: Vec<(u32, Tally)>) -> Result<Tally, FleetError> {
    parts.sort_by_key(|(_, t)| t.first_thread);
    let mut it = parts.into_iter();
    let (first_seg, mut all) = it
        .next()
        .ok_or_else(|| FleetError::new("no segment handed in a result"))?;
    for (seg, t) in it {
        let refuse =
            |why: String| FleetError::new(format!("refused the result of segment {seg}: {why}"));
        if t.options != all.options {
            return Err(refuse(format!(
                "its script options differ from segment {first_seg}'s"
            )));
        }
        add_tally(&mut all, t)
            .map_err(|()| refuse(format!("the run's counts would exceed {MAX_COUNT}")))?;
    }
    Ok(all)
}
