//! A Lua script segment's result as the coordinator reads it back, checked before use (anyone
//! who can write the schema can write it): counts up to `check::MAX_COUNT`, finite times and
//! latencies within range, latency moments that agree with each other, a latency histogram and
//! sysbench's slots that hold exactly the result's events, threads that add up to them, and
//! exactly the segment's own block of global thread ids; an interval row likewise (its second's
//! queries by class and threads running, [`interval`]). Every refusal names the row.

use pgrig_lua::segment::threads_of;
use pgrig_lua::stats::SecondCounts;
use pgrig_lua::tally::Tally;

use crate::check::{a_count, a_figure, a_name, MAX_LATENCY_US, MAX_SECONDS};
use crate::protocol::{Interval, LuaSecond};
use crate::share::SegmentId;
use crate::FleetError;

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
    let mut classes = [0u64; 4];
    for (i, s) in t.seconds.iter().enumerate() {
        let n = i + 1;
        a_count(&format!("second {n} events"), s.events)?;
        a_count(&format!("second {n} errors"), s.errors)?;
        for (k, (name, v)) in second_classes(s).into_iter().enumerate() {
            a_count(&format!("second {n} {name}"), v)?;
            classes[k] = classes[k].saturating_add(v);
        }
        if s.threads as usize > t.threads.len() {
            return Err(format!(
                "second {n} has {} threads running, of its {}",
                s.threads,
                t.threads.len()
            ));
        }
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
    let totals = [t.reads, t.writes, t.other, t.reconnects];
    for ((name, total), sum) in ["reads", "writes", "other", "reconnects"]
        .iter()
        .zip(totals)
        .zip(classes)
    {
        if sum > total {
            return Err(format!(
                "its seconds hold {sum} {name}, more than its {total}"
            ));
        }
    }
    Ok(())
}

/// A second's queries by class and reconnects, named.
fn second_classes(s: &SecondCounts) -> [(&'static str, u64); 4] {
    [
        ("reads", s.reads),
        ("writes", s.writes),
        ("other", s.other),
        ("reconnects", s.reconnects),
    ]
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
) -> Result<(), FleetError> {
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
        FleetError::new(format!(
            "run {run}: refused the result of segment {} (host {host:?}): {why}",
            seg.index
        ))
    })
}

/// An interval row of segment `i.segment` of a Lua script's run of `total` threads (`id`: its
/// row; `crate::check::interval` has passed): it carries the second's queries by class,
/// reconnects and threads running, each count up to `MAX_COUNT`, at most the segment's
/// threads, and a second from 1 on.
pub fn interval(
    run: i64,
    id: i64,
    i: &Interval,
    count: u32,
    total: u32,
) -> Result<LuaSecond, FleetError> {
    let check = || -> Result<LuaSecond, String> {
        let l = i.lua.ok_or_else(|| {
            "it holds no queries by class (not a Lua script segment's row)".to_string()
        })?;
        if i.seq == 0 {
            return Err("its second is 0 (seconds count from 1)".into());
        }
        for (name, v) in [
            ("queries_read", l.reads),
            ("queries_write", l.writes),
            ("queries_other", l.other),
            ("reconnects", l.reconnects),
        ] {
            a_count(name, v)?;
        }
        let (_, n) = threads_of(i.segment, count.max(1), total);
        if l.threads > n {
            return Err(format!(
                "{} threads running, but the segment has {n}",
                l.threads
            ));
        }
        Ok(l)
    };
    check().map_err(|why| {
        FleetError::new(format!(
            "run {run}: refused interval row {id} (segment {}, second {}): {why}",
            i.segment, i.seq
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use pgrig_lua::stats::ThreadEnd;
    use pgrig_workloads::sysbench::histogram::Slots;

    /// Segment 1 of 2 of a run of 5 threads (threads 3 and 4), 3 events.
    fn sample() -> Tally {
        let mut hdr = Histogram::new(3).unwrap();
        let mut slots = Slots::new();
        for us in [1200u64, 1500, 9000] {
            hdr.record(us).unwrap();
            slots.add_us(us, 1);
        }
        let thread = |events| ThreadEnd {
            events,
            busy_s: 0.5,
            cpu: Default::default(),
            unfinished_s: None,
        };
        Tally {
            events: 3,
            reads: 3,
            writes: 0,
            other: 0,
            errors: 1,
            reconnects: 0,
            restarted: 1,
            sql_used: true,
            min_ms: 1.2,
            max_ms: 9.0,
            sum_ms: 11.7,
            sum_sq_us: 1200.0f64.powi(2) + 1500.0f64.powi(2) + 9000.0f64.powi(2),
            hdr,
            slots,
            lag: (0, 0.0, 0.0),
            elapsed_s: 1.5,
            started_unix_s: 1.7e9,
            seconds: vec![SecondCounts {
                events: 2,
                errors: 1,
                latency_sum_ms: 2.7,
                reads: 2,
                threads: 2,
                ..SecondCounts::default()
            }],
            threads: vec![thread(2), thread(1)],
            first_thread: 3,
            fatal: false,
            interrupted: false,
            options: vec![("rows".into(), "7".into())],
            forced: false,
        }
    }

    fn refusal(t: &Tally) -> String {
        let seg = SegmentId { index: 1, count: 2 };
        super::tally(4, seg, "h", t, 5).unwrap_err().0
    }

    #[test]
    fn a_sound_tally_passes_and_a_forged_one_is_refused_naming_the_row() {
        let seg = SegmentId { index: 1, count: 2 };
        super::tally(4, seg, "h", &sample(), 5).unwrap();
        let mut t = sample();
        t.events = 4;
        let why = refusal(&t);
        assert!(
            why.starts_with("run 4: refused the result of segment 1 (host \"h\"): "),
            "{why}"
        );
        assert!(why.contains("histogram holds 3 events, not its 4"), "{why}");
        let mut t = sample();
        t.first_thread = 0;
        assert!(refusal(&t).contains("not the segment's 3 to 4"));
        let mut t = sample();
        t.min_ms = 10.0;
        assert!(refusal(&t).contains("minimum"));
        let mut t = sample();
        t.sum_ms = f64::NAN;
        assert!(refusal(&t).contains("latency sum"));
        let mut t = sample();
        t.threads[0].events = 5;
        assert!(refusal(&t).contains("threads ran 6 events, not its 3"));
        let mut t = sample();
        t.reads = crate::check::MAX_COUNT + 1;
        assert!(refusal(&t).contains("reads is out of range"));
        let mut t = sample();
        t.seconds[0].events = 9;
        assert!(refusal(&t).contains("latency sum") || refusal(&t).contains("more than"));
    }

    #[test]
    fn an_interval_row_carries_bounded_queries_and_the_segments_threads_at_most() {
        // segment 1 of 2 of a run of 5 threads: 2 threads
        let row = |l: Option<LuaSecond>| Interval {
            segment: 1,
            seq: 3,
            ok: 4,
            lua: l,
            ..Interval::default()
        };
        let good = LuaSecond {
            reads: 8,
            writes: 4,
            other: 0,
            reconnects: 1,
            threads: 2,
        };
        assert_eq!(super::interval(4, 9, &row(Some(good)), 2, 5), Ok(good));
        let why = |l| super::interval(4, 9, &row(l), 2, 5).unwrap_err().0;
        let w = why(None);
        assert!(
            w.starts_with(
                "run 4: refused interval row 9 (segment 1, second 3): it holds no queries"
            ),
            "{w}"
        );
        let w = why(Some(LuaSecond { threads: 3, ..good }));
        assert!(
            w.contains("3 threads running, but the segment has 2"),
            "{w}"
        );
        let w = why(Some(LuaSecond {
            writes: crate::check::MAX_COUNT + 1,
            ..good
        }));
        assert!(w.contains("queries_write is out of range"), "{w}");
    }

    #[test]
    fn a_tally_survives_the_codec_and_two_merge_exactly() {
        let t = sample();
        let (back, version) =
            crate::lua_codec::decode(&crate::lua_codec::encode(&t, "15.18")).unwrap();
        assert_eq!(version, "15.18");
        assert_eq!(back.hdr, t.hdr);
        assert_eq!(back.slots, t.slots);
        assert_eq!(back.seconds, t.seconds);
        assert_eq!((back.events, back.errors, back.first_thread), (3, 1, 3));
        let mut first = sample();
        first.first_thread = 0;
        first.threads.push(first.threads[1]);
        first.min_ms = 0.9;
        let m = crate::lua_merge::merge(vec![(1, back), (0, first)]).unwrap();
        assert_eq!(
            (m.events, m.errors, m.hdr.len(), m.slots.total()),
            (6, 2, 6, 6)
        );
        assert_eq!((m.min_ms, m.max_ms, m.threads.len()), (0.9, 9.0, 5));
        assert_eq!(m.seconds[0].events, 4);
        let mut other = sample();
        other.options[0].1 = "8".into();
        assert!(crate::lua_merge::merge(vec![(0, sample()), (1, other)]).is_err());
        assert!(crate::lua_codec::decode(
            &crate::lua_codec::encode(&t, "x").replace("\"events\":3", "\"events\":-3")
        )
        .is_err());
    }
}
