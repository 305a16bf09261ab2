//! A Lua script segment's [`Tally`] as text for the coordination schema, and back: counters,
//! latency moments and the per-second series (events, ignored errors, latency sum, queries by
//! class, reconnects, threads running) as JSON, the HDR latency histogram in
//! hdrhistogram's V2 serialisation (base64, [`crate::codec::histogram_text`]) and sysbench's
//! latency slots as their non-empty `[slot, count]` pairs, so the coordinator's merge is exact.
//! Decoding checks types only (counts are non-negative integers, other figures finite numbers);
//! ranges are `crate::lua_check`'s.

use pgrig_engine::result::ThreadCpu;
use pgrig_lua::stats::{SecondCounts, ThreadEnd};
use pgrig_lua::tally::Tally;
use pgrig_workloads::sysbench::histogram::Slots;
use serde_json::{json, Value};

use crate::codec::{histogram_of, histogram_text};
use crate::json_read::{bad, count, f_at, flag, list, num, shown, u_at};
use crate::FleetError;

/// The most options a result may carry.
const MAX_OPTIONS: usize = 1024;

/// A segment's tally, and the version of the server it ran against, as JSON text.
pub fn encode(t: &Tally, server_version: &str) -> String {
    let slots: Vec<Value> = (t.slots.counts().iter().enumerate())
        .filter(|(_, n)| **n > 0)
        .map(|(i, n)| json!([i, n]))
        .collect();
    json!({
        "events": t.events, "reads": t.reads, "writes": t.writes, "other": t.other,
        "errors": t.errors, "reconnects": t.reconnects, "restarted": t.restarted,
        "sql_used": t.sql_used,
        "latency": [t.min_ms, t.max_ms, t.sum_ms, t.sum_sq_us],
        "hdr": histogram_text(&t.hdr), "slots": slots,
        "lag": [t.lag.0, t.lag.1, t.lag.2],
        "elapsed_s": t.elapsed_s, "started_unix_s": t.started_unix_s,
        "seconds": t.seconds.iter().map(|s| json!([s.events, s.errors, s.latency_sum_ms,
            s.reads, s.writes, s.other, s.reconnects, s.threads])).collect::<Vec<_>>(),
        "threads": t.threads.iter().map(|c| json!([c.events, c.busy_s, c.cpu.user_s,
            c.cpu.sys_s, c.cpu.wait_s, c.cpu.wall_s])).collect::<Vec<_>>(),
        "first_thread": t.first_thread, "fatal": t.fatal, "interrupted": t.interrupted,
        "options": t.options.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "server_version": server_version,
    })
    .to_string()
}

fn slots_of(v: &Value) -> Result<Slots, FleetError> {
    let mut counts = vec![0u64; Slots::new().counts().len()];
    for p in list(v, "slots")? {
        let (i, n) = (u_at(p, 0, "slots")?, u_at(p, 1, "slots")?);
        let slot = usize::try_from(i)
            .ok()
            .filter(|i| *i < counts.len())
            .ok_or_else(|| bad(&format!("slot {i} is not one of sysbench's")))?;
        counts[slot] = n;
    }
    let mut s = Slots::new();
    if !s.add_counts(&counts) {
        return Err(bad("slots"));
    }
    Ok(s)
}

fn thread_of(c: &Value) -> Result<ThreadEnd, FleetError> {
    let f = |i| f_at(c, i, "threads");
    Ok(ThreadEnd {
        events: u_at(c, 0, "threads")?,
        busy_s: f(1)?,
        cpu: ThreadCpu {
            user_s: f(2)?,
            sys_s: f(3)?,
            wait_s: f(4)?,
            wall_s: f(5)?,
        },
        // a segment's forced shutdown is not carried to the coordinator
        unfinished_s: None,
    })
}

fn second_of(s: &Value) -> Result<SecondCounts, FleetError> {
    let u = |i| u_at(s, i, "seconds");
    let threads = u(7)?;
    Ok(SecondCounts {
        events: u(0)?,
        errors: u(1)?,
        latency_sum_ms: f_at(s, 2, "seconds")?,
        reads: u(3)?,
        writes: u(4)?,
        other: u(5)?,
        reconnects: u(6)?,
        threads: u32::try_from(threads)
            .map_err(|_| bad(&format!("seconds: {threads} threads is out of range")))?,
    })
}

fn options_of(v: &Value) -> Result<Vec<(String, String)>, FleetError> {
    let l = list(v, "options")?;
    if l.len() > MAX_OPTIONS {
        return Err(bad(&format!("{} options, at most {MAX_OPTIONS}", l.len())));
    }
    l.iter()
        .map(|p| {
            match (
                p.get(0).and_then(Value::as_str),
                p.get(1).and_then(Value::as_str),
            ) {
                (Some(k), Some(v)) => Ok((k.to_string(), v.to_string())),
                _ => Err(bad(&format!(
                    "an option is not a name and a value: {}",
                    shown(Some(p))
                ))),
            }
        })
        .collect()
}

/// The tally and server version of [`encode`] (a version is printable, at most 64 bytes).
pub fn decode(text: &str) -> Result<(Tally, String), FleetError> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let version = v["server_version"].as_str().unwrap_or("");
    if version.len() > 64 || version.chars().any(char::is_control) {
        return Err(bad(&format!(
            "server_version {}",
            shown(v.get("server_version"))
        )));
    }
    Ok((tally_of(&v)?, version.to_string()))
}

fn tally_of(v: &Value) -> Result<Tally, FleetError> {
    let lat = &v["latency"];
    let lag = &v["lag"];
    let hdr = histogram_of(v["hdr"].as_str().ok_or_else(|| bad("hdr is not text"))?)?;
    let first = count(v, "first_thread")?;
    Ok(Tally {
        events: count(v, "events")?,
        reads: count(v, "reads")?,
        writes: count(v, "writes")?,
        other: count(v, "other")?,
        errors: count(v, "errors")?,
        reconnects: count(v, "reconnects")?,
        restarted: count(v, "restarted")?,
        sql_used: flag(v, "sql_used")?,
        min_ms: f_at(lat, 0, "latency")?,
        max_ms: f_at(lat, 1, "latency")?,
        sum_ms: f_at(lat, 2, "latency")?,
        sum_sq_us: f_at(lat, 3, "latency")?,
        hdr,
        slots: slots_of(v)?,
        lag: (
            u_at(lag, 0, "lag")?,
            f_at(lag, 1, "lag")?,
            f_at(lag, 2, "lag")?,
        ),
        elapsed_s: num(v, "elapsed_s")?,
        started_unix_s: num(v, "started_unix_s")?,
        seconds: (list(v, "seconds")?.iter())
            .map(second_of)
            .collect::<Result<_, _>>()?,
        threads: (list(v, "threads")?.iter())
            .map(thread_of)
            .collect::<Result<_, _>>()?,
        first_thread: u32::try_from(first)
            .map_err(|_| bad(&format!("first_thread {first} is out of range")))?,
        fatal: flag(v, "fatal")?,
        interrupted: flag(v, "interrupted")?,
        options: options_of(v)?,
        forced: false,
    })
}
