//! The coordinator's `--report-interval` lines of a sysbench Lua script's run over several
//! hosts: what one host running every thread prints, from the segments' interval rows. Each
//! row (checked by `crate::lua_check::interval`: queries by class, reconnects, threads
//! running; each segment's second once, and not beyond the time the run has run) is added into
//! its second; the line for seconds `(k-1)·N+1 ..= k·N` is printed, in order, once every segment
//! has its rows for them in or has ended (its last, partial second — threads running 0 — is
//! not part of its series, as on one host; a failed or silent segment counts as ended a look
//! after it was seen so, every row it wrote read by then). A line's figures are the sums of
//! its seconds over the segments: the merged run document's series over those seconds; its
//! threads are those still running at its last second, its percentile that of sysbench's
//! latency slots filled from the seconds' merged HDR histograms (as the native path does). A
//! line whose last second no segment ran is not printed (the run had ended). `--verbosity`
//! below 3: no line, nor `Threads started!` (printed here when the run starts). Printed through the
//! output the caller gives (the cli's standard output): nothing here writes to a stream.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::protocol::{Interval, WorkerRow};
use crate::FleetError;
use hdrhistogram::Histogram;
use pgrig_lua::Invocation;
use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::report::{self as render, THREADS_STARTED};

use crate::follower::Follower;

/// Seconds a row may be ahead of the time the coordinator has followed the run (the workers'
/// clocks are within `--max-clock-offset` of the database's; the start is 2 s after the run
/// began to be followed).
const AHEAD_S: u64 = 5;

/// One second merged over the segments that ran all of it.
#[derive(Default)]
struct Merged {
    events: u64,
    errors: u64,
    reads: u64,
    writes: u64,
    other: u64,
    reconnects: u64,
    threads: u64,
    /// the second's latencies, µs (none until a row brings one)
    hdr: Option<Histogram<u64>>,
}

/// The interval lines of one run.
pub struct SegmentLines {
    run: i64,
    /// segments and the whole run's threads
    count: u32,
    threads: u32,
    /// `--report-interval` (0: no lines), `--percentile`, `--verbosity` 3 or more
    every: u32,
    percentile: u32,
    notices: bool,
    /// when the run was first seen running (the start follows it)
    started: Option<Instant>,
    /// `Threads started!` printed
    announced: bool,
    seconds: BTreeMap<u32, Merged>,
    /// (segment, second) of every row read
    seen: BTreeSet<(u32, u32)>,
    /// a segment's last, partial second (its series ends before it)
    last: BTreeMap<u32, u32>,
    /// segments failed or silent (ended) / seen so at the latest look (ended at the next)
    gone: BTreeSet<u32>,
    going: BTreeSet<u32>,
    /// the next line's number (its last second: `next * every`)
    next: u32,
    /// where the lines (and `Threads started!`) are printed
    out: Box<dyn FnMut(&str)>,
}

impl SegmentLines {
    /// The lines of run `run` of `count` segments, for the whole run's options `inv`, printed
    /// through `out`.
    pub fn new(run: i64, count: u32, inv: &Invocation, out: Box<dyn FnMut(&str)>) -> SegmentLines {
        SegmentLines {
            run,
            count,
            threads: inv.threads,
            every: inv.report_interval,
            percentile: inv.percentile,
            notices: inv.notices,
            started: None,
            announced: false,
            seconds: BTreeMap::new(),
            seen: BTreeSet::new(),
            last: BTreeMap::new(),
            gone: BTreeSet::new(),
            going: BTreeSet::new(),
            next: 1,
            out,
        }
    }

    /// Whether segment `seg` has said all it will about second `q`.
    fn ready(&self, seg: u32, q: u32) -> bool {
        self.seen.contains(&(seg, q))
            || self.gone.contains(&seg)
            || self.last.get(&seg).is_some_and(|l| q >= *l)
    }

    /// Prints the lines whose seconds every segment has reported, in order.
    fn print_ready(&mut self) {
        if self.every == 0 || !self.notices {
            return;
        }
        loop {
            let end = self.next.saturating_mul(self.every);
            let span = end - self.every + 1..=end;
            if !span
                .clone()
                .all(|q| (0..self.count).all(|s| self.ready(s, q)))
            {
                return;
            }
            let running = self.seconds.get(&end).map_or(0, |m| m.threads);
            if running == 0 {
                // no segment ran its last second: the run had ended there
                return;
            }
            let line = self.line(span);
            (self.out)(&line);
            self.next += 1;
        }
    }

    /// The line of the seconds `span`.
    fn line(&self, span: std::ops::RangeInclusive<u32>) -> String {
        let end = *span.end();
        let mut slots = Slots::new();
        let mut sum = Merged::default();
        for m in span.filter_map(|q| self.seconds.get(&q)) {
            sum.events += m.events;
            sum.errors += m.errors;
            sum.reads += m.reads;
            sum.writes += m.writes;
            sum.other += m.other;
            sum.reconnects += m.reconnects;
            for v in m.hdr.iter().flat_map(|h| h.iter_recorded()) {
                slots.add_us(v.value_iterated_to(), v.count_at_value());
            }
        }
        let threads = self.seconds.get(&end).map_or(0, |m| m.threads);
        render::interval(&render::Interval {
            time_s: f64::from(end),
            seconds: f64::from(self.every),
            threads: threads as u32,
            events: sum.events as f64,
            reads: sum.reads as f64,
            writes: sum.writes as f64,
            other: sum.other as f64,
            percentile: self.percentile,
            latency_ms: if self.percentile > 0 {
                slots.percentile(self.percentile)
            } else {
                0.0
            },
            errors: sum.errors as f64,
            reconnects: sum.reconnects as f64,
            queue: None,
        })
    }

    /// Adds a full second's row into its merged second (sums checked against the catalogue's
    /// bound).
    fn add(&mut self, i: &Interval, l: crate::protocol::LuaSecond) -> Result<(), String> {
        let hdr = match i.histogram.as_deref() {
            Some(t) => Some(crate::codec::histogram_of(t).map_err(|e| e.0)?),
            None => None,
        };
        let m = self.seconds.entry(i.seq).or_default();
        let add = |a: &mut u64, b: u64| -> Result<(), String> {
            *a = (a.checked_add(b))
                .filter(|v| *v <= crate::check::MAX_COUNT)
                .ok_or("the second's counts would exceed 2^53")?;
            Ok(())
        };
        add(&mut m.events, i.ok)?;
        add(&mut m.errors, i.retries)?;
        add(&mut m.reads, l.reads)?;
        add(&mut m.writes, l.writes)?;
        add(&mut m.other, l.other)?;
        add(&mut m.reconnects, l.reconnects)?;
        add(&mut m.threads, u64::from(l.threads))?;
        if let Some(h) = hdr {
            match &mut m.hdr {
                Some(all) => all.add(&h).map_err(|e| format!("its histogram: {e:?}"))?,
                None => m.hdr = Some(h),
            }
        }
        Ok(())
    }

    /// Why row `i` cannot be taken beyond its own figures: its segment's second twice, after
    /// the segment's last second, or ahead of the run's time.
    fn misplaced(&mut self, i: &Interval, l: crate::protocol::LuaSecond) -> Option<String> {
        if !self.seen.insert((i.segment, i.seq)) {
            return Some("the segment reported this second twice".into());
        }
        if let Some(last) = self.last.get(&i.segment).filter(|l| i.seq >= **l) {
            return Some(format!("it follows the segment's last second ({last})"));
        }
        let later = self.seen.range((i.segment, i.seq + 1)..).next();
        if l.threads == 0 && later.is_some_and(|(s, _)| *s == i.segment) {
            return Some("the segment reported later seconds".into());
        }
        let ran = self
            .started
            .get_or_insert_with(Instant::now)
            .elapsed()
            .as_secs();
        if u64::from(i.seq) > ran + AHEAD_S {
            return Some(format!(
                "the run has run for {ran} s: second {} has not begun",
                i.seq
            ));
        }
        None
    }
}

impl Follower for SegmentLines {
    fn row(&mut self, id: i64, i: &Interval) -> Result<(), FleetError> {
        let l = crate::lua_check::interval(self.run, id, i, self.count, self.threads)?;
        let run = self.run;
        let refused = |why: String| {
            FleetError::new(format!(
                "run {run}: refused interval row {id} (segment {}, second {}): {why}",
                i.segment, i.seq
            ))
        };
        if let Some(why) = self.misplaced(i, l) {
            return Err(refused(why));
        }
        if l.threads == 0 {
            self.last.insert(i.segment, i.seq);
            return Ok(());
        }
        self.add(i, l).map_err(refused)
    }

    fn round(&mut self, ws: &[WorkerRow], silent: &BTreeMap<u32, f64>) {
        self.started.get_or_insert_with(Instant::now);
        if !self.announced && self.notices {
            (self.out)(THREADS_STARTED);
        }
        self.announced = true;
        // seen failed or silent at the last look: every row it wrote has been read since
        self.gone.extend(std::mem::take(&mut self.going));
        self.going = (ws.iter())
            .filter(|w| w.state == "failed" || silent.contains_key(&w.segment))
            .map(|w| w.segment)
            .collect();
        self.print_ready();
    }

    fn finish(&mut self) {
        self.gone
            .extend((0..self.count).filter(|s| !self.last.contains_key(s)));
        self.print_ready();
    }
}
