//! What the coordinator reads back from the coordination schema, checked before it is used
//! (anyone who can write the schema can write these rows): a worker row's segment is one of the
//! run's, its figures finite; a worker's result holds counts up to [`MAX_COUNT`], finite
//! non-negative times within range, latency moments that agree with each other, and exactly the
//! client ids of its own segment, each once; an interval row likewise. Sums over segments are
//! `crate::merge`'s, with checked arithmetic. Every refusal names the row.

use std::collections::BTreeSet;

use pgrig_engine::result::RunResult;
use pgrig_engine::stats::{Moments, Snapshot};

use crate::protocol::{Interval, WorkerRow};
use crate::share::{clients_of, SegmentId};
use crate::FleetError;

/// The largest count accepted, in one row and summed over the run (2^53: a million
/// transactions a second for 285 years; every sum of such counts the report makes fits in 64
/// bits, and each is exact as a JSON number).
pub const MAX_COUNT: u64 = 1 << 53;
/// The longest time accepted, seconds (pgbench's `-T` is at most 2^31 − 1 s).
pub const MAX_SECONDS: f64 = 1e10;
/// The largest latency accepted, µs (about 11.6 days).
pub const MAX_LATENCY_US: f64 = 1e12;

/// A figure out of range: `what` and the value.
pub(crate) fn out_of_range(what: &str, v: impl std::fmt::Display) -> String {
    format!("{what} is out of range: {v}")
}

pub(crate) fn a_count(what: &str, v: u64) -> Result<(), String> {
    if v > MAX_COUNT {
        return Err(out_of_range(what, v));
    }
    Ok(())
}

/// A finite `v` in `0..=max`.
pub(crate) fn a_figure(what: &str, v: f64, max: f64) -> Result<(), String> {
    if !(v.is_finite() && (0.0..=max).contains(&v)) {
        return Err(out_of_range(what, v));
    }
    Ok(())
}

/// Text shown in a message or report: printable, at most 255 bytes.
pub(crate) fn a_name(what: &str, v: &str) -> Result<(), String> {
    if v.len() > 255 || v.chars().any(char::is_control) {
        return Err(format!("{what} is not a printable name: {v:?}"));
    }
    Ok(())
}

/// The worker rows of a run of `count` segments: each segment of the run, at most once, with a
/// printable host and version and finite clock figures.
pub fn workers(run: i64, ws: &[WorkerRow], count: u32) -> Result<(), FleetError> {
    let mut seen = BTreeSet::new();
    for w in ws {
        let row = |why: String| {
            FleetError::new(format!(
                "run {run}: refused the worker row of segment {}: {why}",
                w.segment
            ))
        };
        if w.segment >= count {
            return Err(row(format!(
                "the run has {count} segments (0 to {})",
                count - 1
            )));
        }
        if !seen.insert(w.segment) {
            return Err(row("the segment is registered twice".into()));
        }
        a_name("its host", &w.host).map_err(row)?;
        a_name("its version", &w.version).map_err(row)?;
        a_name("its target", &w.target).map_err(row)?;
        a_figure("its clock offset", w.offset_ms.abs(), MAX_SECONDS).map_err(row)?;
        a_figure("its clock error", w.error_ms, MAX_SECONDS).map_err(row)?;
        if w.cores > 1 << 20 {
            return Err(row(out_of_range("its core count", w.cores)));
        }
    }
    Ok(())
}

/// Moments of latencies in µs: counted within range, `0 <= min <= max <= MAX_LATENCY_US`, the
/// sums no more than `count` values of `max` make.
fn moments(what: &str, m: &Moments) -> Result<(), String> {
    a_count(&format!("{what} count"), m.count)?;
    if m.count == 0 {
        return Ok(());
    }
    a_figure(&format!("{what} maximum"), m.max, MAX_LATENCY_US)?;
    a_figure(&format!("{what} minimum"), m.min, m.max)?;
    let n = m.count as f64 * (1.0 + 1e-9);
    a_figure(&format!("{what} sum"), m.sum, n * m.max + 1.0)?;
    a_figure(
        &format!("{what} sum of squares"),
        m.sum2,
        n * m.max * m.max + 1.0,
    )
}

fn snapshot(what: &str, s: &Snapshot) -> Result<(), String> {
    let c = &s.counts;
    for (name, v) in [
        ("ok", c.ok),
        ("skipped", c.skipped),
        ("serialization failures", c.serialization_failures),
        ("deadlock failures", c.deadlock_failures),
        ("other failures", c.other_failures),
        ("retried", c.retried),
        ("retries", c.retries),
        ("late", c.late),
        ("rollbacks", c.rollbacks),
        ("rows replies", c.replies.rows),
        ("changed replies", c.replies.changed),
        ("other replies", c.replies.neither),
    ] {
        a_count(&format!("{what} {name}"), v)?;
    }
    moments(&format!("{what} latency"), &s.latency)?;
    moments(&format!("{what} lag"), &s.lag)
}

/// The figures of a result apart from its clients.
fn figures(r: &RunResult) -> Result<(), String> {
    for (i, s) in r.stats.scripts.iter().enumerate() {
        let what = format!("script {i}:");
        snapshot(&what, &s.snap)?;
        a_count(&format!("{what} histogram count"), s.histogram.len())?;
        for (j, c) in s.commands.iter().enumerate() {
            moments(&format!("{what} command {j} latency"), &c.latency)?;
            a_count(&format!("{what} command {j} failures"), c.failures)?;
            a_count(&format!("{what} command {j} retries"), c.retries)?;
        }
        for h in &s.command_histograms {
            a_count(&format!("{what} command histogram count"), h.len())?;
        }
    }
    for (i, s) in r.series.iter().enumerate() {
        snapshot(&format!("second {i}:"), s)?;
    }
    a_figure("bench_duration_s", r.bench_duration_s, MAX_SECONDS)?;
    a_figure("initial_conn_ms", r.initial_conn_ms, MAX_SECONDS * 1e3)?;
    a_figure("conn_time_us", r.stats.conn_time_us, MAX_SECONDS * 1e6)?;
    a_count("reconnects", r.stats.reconnects)?;
    for t in &r.threads_cpu {
        for (name, v) in [("user", t.user_s), ("system", t.sys_s), ("wait", t.wait_s)] {
            a_figure(&format!("thread {name} CPU seconds"), v, MAX_SECONDS)?;
        }
        a_figure("thread wall seconds", t.wall_s, MAX_SECONDS)?;
    }
    Ok(())
}

/// The clients of a result: exactly the global ids of segment `seg` among `total` clients, each
/// once, with counts and times in range.
fn clients(r: &RunResult, seg: SegmentId, total: u32) -> Result<(), String> {
    let (first, n) = clients_of(seg, total);
    let mut seen = BTreeSet::new();
    for c in &r.clients {
        if !(first..first + n).contains(&c.id) {
            return Err(format!(
                "client id {} is not one of this segment's ({first} to {})",
                c.id,
                first + n - 1
            ));
        }
        if !seen.insert(c.id) {
            return Err(format!("client id {} appears twice", c.id));
        }
        a_count(&format!("client {} transactions", c.id), c.transactions)?;
        a_figure(
            &format!("client {} busy seconds", c.id),
            c.busy_s,
            MAX_SECONDS,
        )?;
    }
    if seen.len() as u32 != n {
        return Err(format!("{} clients, not the segment's {n}", seen.len()));
    }
    if r.aborted_clients > n {
        return Err(out_of_range("aborted_clients", r.aborted_clients));
    }
    Ok(())
}

/// The result handed in for segment `seg` of a run of `total` clients.
pub fn result(
    run: i64,
    seg: SegmentId,
    host: &str,
    r: &RunResult,
    total: u32,
) -> Result<(), FleetError> {
    figures(r)
        .and_then(|()| clients(r, seg, total))
        .map_err(|why| {
            FleetError::new(format!(
                "run {run}: refused the result of segment {} (host {host:?}): {why}",
                seg.index
            ))
        })
}

/// An interval row (`id`) of a run of `count` segments.
pub fn interval(run: i64, id: i64, i: &Interval, count: u32) -> Result<(), FleetError> {
    let check = || -> Result<(), String> {
        if i.segment >= count {
            return Err(format!("the run has {count} segments (0 to {})", count - 1));
        }
        for (name, v) in [
            ("ok", i.ok),
            ("failed", i.failed),
            ("skipped", i.skipped),
            ("retried", i.retried),
            ("retries", i.retries),
        ] {
            a_count(name, v)?;
        }
        let most = i.ok as f64 * MAX_LATENCY_US * (1.0 + 1e-9) + 1.0;
        a_figure("latency_sum_us", i.latency_sum_us, most)?;
        a_figure("cpu_s", i.cpu_s, MAX_SECONDS)
    };
    check().map_err(|why| {
        FleetError::new(format!(
            "run {run}: refused interval row {id} (segment {}, second {}): {why}",
            i.segment, i.seq
        ))
    })
}
