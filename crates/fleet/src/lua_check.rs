//! A Lua script segment's result as the coordinator reads it back, checked before use (anyone
//! who can write the schema can write it): counts up to `check::MAX_COUNT`, finite times and
//! latencies within range, latency moments that agree with each other, a latency histogram and
//! sysbench's slots that hold exactly the result's events, threads that add up to them, and
//! exactly the segment's own block of global thread ids. Every refusal names the row.

use pgrig_lua::segment::threads_of;
use pgrig_lua::tally::Tally;

use crate::check::{a_count, a_figure, a_name, MAX_LATENCY_US, MAX_SECONDS};
use crate::share::SegmentId;
use crate::ScaleError;

/// The counters of a tally, named.
fn counters(t: &Tally) -> [(&'static str, u64); 7] {
    [
        ("events", t.events),
        ("reads", t.reads),
        ("writes", t.writes),
        ("other", t.other),
        ("errors", t.errors),
        ("reconnects", t.reconnects),
        ("restarted", t.restarted),
    ]
}

/// The event latencies: `0 <= min <= max` within range, the sums no more than `events` values
/// of `max` make; the histogram and the slots hold every event once.
fn latencies(t: &Tally) -> Result<(), String> {
    let max_ms = MAX_LATENCY_US / 1e3;
    a_figure("the latency maximum (ms)", t.max_ms, max_ms)?;
    a_figure("the latency minimum (ms)", t.min_ms, t.max_ms)?;
    let n = t.events as f64 * (1.0 + 1e-9);
    a_figure("the latency sum (ms)", t.sum_ms, n * t.max_ms + 1.0)?;
    let max_us = t.max_ms * 1e3;
    a_figure(
        "the latency sum of squares",
        t.sum_sq_us,
        n * max_us * max_us + 1.0,
    )?;
    if t.hdr.len() != t.events {
        return Err(format!(
            "its latency histogram holds {} events, not its {}",
            t.hdr.len(),
            t.events
        ));
    }
    if t.slots.total() != t.events {
        return Err(format!(
            "its latency slots hold {} events, not its {}",
            t.slots.total(),
            t.events
        ));
    }
    if t.restarted > t.errors {
        return Err(format!(
            "{} events restarted but {} errors ignored",
            t.restarted, t.errors
        ));
    }
    Ok(())
}

/// The run's time, schedule lag and per-second series.
fn times(t: &Tally) -> Result<(), String> {
    a_figure("elapsed_s", t.elapsed_s, MAX_SECONDS)?;
    a_figure("started_unix_s", t.started_unix_s, MAX_SECONDS)?;
    a_count("lag count", t.lag.0)?;
    a_figure("lag maximum (ms)", t.lag.2, MAX_LATENCY_US / 1e3)?;
    a_figure(
        "lag sum (ms)",
        t.lag.1,
        t.lag.0 as f64 * t.lag.2 * (1.0 + 1e-9) + 1.0,
    )?;
    if t.seconds.len() as f64 > t.elapsed_s + 2.0 {
        return Err(format!(
            "{} seconds in its series, for a run of {:.1} s",
            t.seconds.len(),
            t.elapsed_s
        ));
    }
    let mut events = 0u64;
    for (i, s) in t.seconds.iter().enumerate() {
        a_count(&format!("second {} events", i + 1), s.events)?;
        a_count(&format!("second {} errors", i + 1), s.errors)?;
        let most = s.events as f64 * t.max_ms * (1.0 + 1e-9) + 1.0;
        a_figure(
            &format!("second {} latency sum", i + 1),
            s.latency_sum_ms,
            most,
        )?;
        events = events.saturating_add(s.events);
    }
    if events > t.events {
        return Err(format!(
            "its seconds hold {events} events, more than its {}",
            t.events
        ));
    }
    Ok(())
}

/// The threads: exactly the block of segment `seg` among `total` threads, their events adding
/// up to the result's.
fn threads(t: &Tally, seg: SegmentId, total: u32) -> Result<(), String> {
    let (first, n) = threads_of(seg.index, seg.count, total);
    if t.first_thread != first || t.threads.len() as u64 != u64::from(n) {
        return Err(format!(
            "it holds threads {} to {}, not the segment's {first} to {}",
            t.first_thread,
            i64::from(t.first_thread) + t.threads.len() as i64 - 1,
            first + n - 1
        ));
    }
    let mut events = 0u64;
    for (i, c) in t.threads.iter().enumerate() {
        let id = first + i as u32;
        a_count(&format!("thread {id} events"), c.events)?;
        a_figure(&format!("thread {id} busy seconds"), c.busy_s, MAX_SECONDS)?;
        let cpu = &c.cpu;
        for (name, v) in [
            ("user", cpu.user_s),
            ("system", cpu.sys_s),
            ("wait", cpu.wait_s),
        ] {
            a_figure(&format!("thread {id} {name} CPU seconds"), v, MAX_SECONDS)?;
        }
        a_figure(
            &format!("thread {id} wall seconds"),
            cpu.wall_s,
            MAX_SECONDS,
        )?;
        events = events.saturating_add(c.events);
    }
    if events != t.events {
        return Err(format!(
            "its threads ran {events} events, not its {}",
            t.events
        ));
    }
    Ok(())
}

/// The result handed in for segment `seg` of a run of `total` threads (its row: `host`).
pub fn tally(
    run: i64,
    seg: SegmentId,
    host: &str,
    t: &Tally,
    total: u32,
) -> Result<(), ScaleError> {
    let check = || -> Result<(), String> {
        for (name, v) in counters(t) {
            a_count(name, v)?;
        }
        latencies(t)?;
        times(t)?;
        threads(t, seg, total)?;
        for (k, v) in &t.options {
            a_name("an option's name", k)?;
            a_name(&format!("option {k}'s value"), v)?;
        }
        Ok(())
    };
    check().map_err(|why| {
        ScaleError::new(format!(
            "run {run}: refused the result of segment {} (host {host:?}): {why}",
            seg.index
        ))
    })
}
