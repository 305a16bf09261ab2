//! The run's output on the Lua path, with the native path's renderers
//! (`pgrig_workloads::sysbench::report`): the header, interval lines and final report — or,
//! when the script sets `sysbench.hooks.report_intermediate` / `report_cumulative`, a call of
//! the hook with sysbench's `stat` table instead.

use std::sync::atomic::Ordering::Relaxed;

use mlua::{Function, Lua, Table};
use pgrig_workloads::sysbench::report::{self as render, Header, Interval, Summary};

use crate::invocation::Invocation;
use crate::state::{self, Shared};

/// The run header (from "Running the test with following options:").
pub fn header(inv: &Invocation) -> String {
    render::header(&Header {
        threads: inv.threads,
        rate: inv.rate,
        report_interval: inv.report_interval,
        rand_seed: inv.rand_seed,
        forced_shutdown: inv.forced_shutdown,
    })
}

/// A report's figures (a period's or the run's).
pub struct Figures {
    pub time_total: f64,
    pub time_interval: f64,
    pub threads_running: u32,
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    /// the `--percentile` latency, ms
    pub latency_pct_ms: f64,
    pub summary: Option<Summary>,
}

impl Figures {
    /// The whole run's figures.
    pub fn of(sh: &Shared, elapsed: f64, per_thread: Vec<(u64, f64)>) -> Figures {
        let s = &sh.stats;
        let pct = sh.inv.percentile;
        let (summary, pct_ms) = match s.latency.lock() {
            Ok(l) => {
                let events = s.events.total();
                let pct_ms = if pct > 0 {
                    l.total.percentile(pct)
                } else {
                    0.0
                };
                let avg = if events > 0 {
                    l.sum_ms / events as f64
                } else {
                    0.0
                };
                let sum = Summary {
                    reads: s.reads.total(),
                    writes: s.writes.total(),
                    other: s.other.total(),
                    events,
                    errors: s.errors.total(),
                    reconnects: s.reconnects.total(),
                    time_s: elapsed,
                    min_ms: if events > 0 { l.min_ms } else { 0.0 },
                    avg_ms: avg,
                    max_ms: l.max_ms,
                    percentile: pct,
                    pct_ms,
                    sum_ms: l.sum_ms,
                    per_thread,
                    histogram: sh.inv.histogram.then(|| l.total.render()),
                    unfinished: None,
                };
                (Some(sum), pct_ms)
            }
            Err(_) => (None, 0.0),
        };
        Figures {
            time_total: elapsed,
            time_interval: elapsed,
            threads_running: 0,
            events: s.events.total(),
            reads: s.reads.total(),
            writes: s.writes.total(),
            other: s.other.total(),
            errors: s.errors.total(),
            reconnects: s.reconnects.total(),
            latency_pct_ms: pct_ms,
            summary,
        }
    }
}

/// The hook `name` of `sysbench.hooks`, if set.
fn hook(lua: &Lua, name: &str) -> Option<Function> {
    let sb: Table = lua.globals().get("sysbench").ok()?;
    let hooks: Table = sb.get("hooks").ok()?;
    hooks.get::<Option<Function>>(name).ok().flatten()
}

/// sysbench's `stat` table for a report hook.
fn stat_table(lua: &Lua, f: &Figures, cumulative: bool) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("time_total", f.time_total)?;
    t.set("time_interval", f.time_interval)?;
    t.set("threads_running", f.threads_running)?;
    t.set("events", f.events as f64)?;
    t.set("reads", f.reads as f64)?;
    t.set("writes", f.writes as f64)?;
    t.set("other", f.other as f64)?;
    t.set("errors", f.errors as f64)?;
    t.set("reconnects", f.reconnects as f64)?;
    t.set("latency_pct", f.latency_pct_ms / 1000.0)?;
    if cumulative {
        // only the cumulative report has the run's latency figures, in seconds
        let s = f.summary.as_ref();
        let sec = |ms: Option<f64>| ms.unwrap_or(0.0) / 1000.0;
        t.set("latency_min", sec(s.map(|s| s.min_ms)))?;
        t.set("latency_max", sec(s.map(|s| s.max_ms)))?;
        t.set("latency_avg", sec(s.map(|s| s.avg_ms)))?;
        t.set("latency_sum", sec(s.map(|s| s.sum_ms)))?;
    } else {
        // the --rate queue figures, intermediate reports only
        t.set("queue_length", 0)?;
        t.set("concurrency", 0)?;
    }
    Ok(t)
}

fn call_hook(lua: &Lua, f: &Function, fig: &Figures, cumulative: bool) {
    let msg = match stat_table(lua, fig, cumulative) {
        Ok(t) => state::call(lua, f, t),
        Err(e) => Some(state::message(&e)),
    };
    if let Some(m) = msg {
        println!("FATAL: report hook failed: {m}");
    }
}

/// The period ending at `time_s` (`seconds` long) with `threads` running; its events, ignored
/// errors, queries by class and reconnects are those of the run's series over the period
/// (`counted`), so the interval lines and the run document's seconds agree exactly.
pub fn intermediate(
    lua: &Lua,
    sh: &Shared,
    (time_s, seconds, threads): (f64, f64, u32),
    counted: &[crate::stats::SecondCounts],
) {
    let s = &sh.stats;
    let pct = sh.inv.percentile;
    let latency = match s.latency.lock() {
        Ok(mut l) => {
            let v = if pct > 0 {
                l.period.percentile(pct)
            } else {
                0.0
            };
            l.period = pgrig_workloads::sysbench::histogram::Slots::new();
            v
        }
        Err(_) => 0.0,
    };
    let fig = Figures {
        time_total: time_s,
        time_interval: seconds,
        threads_running: threads,
        events: {
            s.events.take_period();
            counted.iter().map(|c| c.events).sum()
        },
        reads: {
            s.reads.take_period();
            counted.iter().map(|c| c.reads).sum()
        },
        writes: {
            s.writes.take_period();
            counted.iter().map(|c| c.writes).sum()
        },
        other: {
            s.other.take_period();
            counted.iter().map(|c| c.other).sum()
        },
        errors: {
            s.errors.take_period();
            counted.iter().map(|c| c.errors).sum()
        },
        reconnects: {
            s.reconnects.take_period();
            counted.iter().map(|c| c.reconnects).sum()
        },
        latency_pct_ms: latency,
        summary: None,
    };
    if let Some(f) = hook(lua, "report_intermediate") {
        return call_hook(lua, &f, &fig, false);
    }
    if sh.inv.notices {
        print!(
            "{}",
            render::interval(&Interval {
                time_s,
                seconds,
                threads,
                events: fig.events as f64,
                reads: fig.reads as f64,
                writes: fig.writes as f64,
                other: fig.other as f64,
                percentile: pct,
                latency_ms: latency,
                errors: fig.errors as f64,
                reconnects: fig.reconnects as f64,
                queue: None,
            })
        );
    }
}

/// The final report (the SQL statistics only when the script used the database).
pub fn cumulative(lua: &Lua, sh: &Shared, fig: &Figures) {
    if let Some(f) = hook(lua, "report_cumulative") {
        return call_hook(lua, &f, fig, true);
    }
    if !sh.inv.notices {
        return;
    }
    if let Some(s) = &fig.summary {
        if sh.stats.sql_used.load(Relaxed) {
            print!("{}", render::summary(s));
        } else {
            print!("{}", render::general_statistics(s));
        }
    }
}
