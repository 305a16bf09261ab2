//! `pgrig bench --segments N --coordinator URL [pgbench options]`: the coordinator of a run
//! spread over N `pgrig worker`s. Writes the run (its run options — no connection option or
//! path —, its scripts as text, its seed) into the coordination schema, waits until every
//! segment registered, sets the shared start instant, follows the intervals (live metrics of the
//! merged run, silent workers), stops the workers on Ctrl-C, checks every row it reads back,
//! merges the statistics exactly and prints pgbench's report of the whole run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, Sink};
use pgrig_engine::StopHandle;
use pgrig_fleet::check::MAX_COUNT;
use pgrig_fleet::db::Db;
use pgrig_fleet::follower::Follower;
use pgrig_fleet::handed_in;
use pgrig_fleet::open_run::{self, INTERVAL_MS};
use pgrig_fleet::protocol::{self, WorkerRow};
use pgrig_fleet::FleetError;

use crate::args::{OutputOptions, SegmentsOptions};
use crate::metrics::{Live, RunState};
use crate::sink::StderrSink;

/// From all registered to the start: time for every worker to see the start instant.
const LEAD_MS: u32 = 2000;

/// The coordinator's side of a segmented `bench`; returns the exit status.
pub fn main(prefix: &str, args: &[String], cfg: BenchConfig, output: OutputOptions) -> i32 {
    let sink = StderrSink::simple(prefix);
    let Some(seg) = output.segments.clone() else {
        return 1;
    };
    match coordinate(&sink, args, cfg, &output, &seg) {
        Ok(code) => code,
        Err(e) => {
            sink.message(Level::Error, &e.0);
            1
        }
    }
}

fn coordinate(
    sink: &StderrSink,
    args: &[String],
    mut cfg: BenchConfig,
    output: &OutputOptions,
    seg: &SegmentsOptions,
) -> Result<i32, FleetError> {
    if output.profile.is_some() {
        return Err(FleetError::new(
            "--profile does not combine with --segments",
        ));
    }
    if cfg.clients < seg.count {
        return Err(FleetError::new(format!(
            "--segments {} needs at least {} clients (-c {})",
            seg.count, seg.count, cfg.clients
        )));
    }
    let json = match output
        .json
        .as_deref()
        .map(crate::json::JsonOut::open)
        .transpose()
    {
        Ok(j) => j,
        Err(e) => return Err(FleetError::new(e)),
    };
    let stored = open_run::worker_args(args)?;
    let (db, run) = open_run::create_run(sink, &mut cfg, seg, &stored)?;
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let mut c = Coordinator::new(db, run, (seg.count, seg.wait_s), sink, stop);
    c.progress_every = cfg.progress;
    let server = serve_metrics(sink, output, &c.live)?;
    let outcome = c.follow();
    let code = c.finish(outcome, cfg, output, json, &stored);
    if let Some(s) = server {
        let linger = output.metrics.as_ref().map_or(0, |m| m.linger_s);
        s.finish(Duration::from_secs(linger as u64));
    }
    code
}

/// `--metrics-addr`: the merged run's live metrics, served while the run lasts.
fn serve_metrics(
    sink: &StderrSink,
    output: &OutputOptions,
    live: &Arc<Live>,
) -> Result<Option<crate::metrics::Server>, FleetError> {
    let Some(m) = &output.metrics else {
        return Ok(None);
    };
    let s = crate::metrics::Server::start(&m.addr, live.clone()).map_err(FleetError)?;
    sink.message(
        Level::Info,
        &format!("serving OpenMetrics on http://{}/metrics", s.addr),
    );
    Ok(Some(s))
}

/// How following the run ended.
pub(crate) enum Outcome {
    /// every worker handed its result in (some may have failed or gone silent)
    Ended(Vec<WorkerRow>),
    /// Ctrl-C before the start
    StoppedEarly,
}

pub(crate) struct Coordinator<'a> {
    pub(crate) db: Db,
    pub(crate) run: i64,
    count: u32,
    /// `--segments-wait`: seconds to wait for every segment to register
    wait_s: u32,
    /// `-P SEC`: a merged progress line every SEC seconds
    progress_every: Option<u32>,
    /// the target every worker proved it reaches (`pgrig_fleet::target`)
    pub(crate) target: String,
    pub(crate) live: Arc<Live>,
    stop: StopHandle,
    sink: &'a StderrSink,
    /// interval rows up to this id are read (none of a lower id can still appear)
    last_interval: i64,
    /// the rows above `last_interval` read already
    taken: std::collections::BTreeSet<i64>,
    /// each registered segment's host name (the `host` label of its CPU line)
    hosts: BTreeMap<u32, String>,
    /// segments marked silent, with the seconds they had been
    silent: BTreeMap<u32, f64>,
    /// segments whose failure was reported
    failed: std::collections::BTreeSet<u32>,
    /// told every interval row and every look at the workers
    pub(crate) follower: Option<Box<dyn Follower + 'a>>,
}

impl<'a> Coordinator<'a> {
    /// Follows run `run` of `count` segments, waiting at most `wait_s` for them to register
    /// (its messages through `sink`; `stop`: Ctrl-C).
    pub(crate) fn new(
        db: Db,
        run: i64,
        (count, wait_s): (u32, u32),
        sink: &'a StderrSink,
        stop: StopHandle,
    ) -> Coordinator<'a> {
        // the coordinator runs no client: its CPU lines are the segments' (host and segment labels)
        let live = Arc::new(Live::new(crate::metrics::Figures {
            cpu: Vec::new(),
            ..Default::default()
        }));
        Coordinator {
            db,
            run,
            count,
            wait_s,
            progress_every: None,
            target: String::new(),
            live,
            stop,
            sink,
            last_interval: 0,
            taken: Default::default(),
            hosts: BTreeMap::new(),
            silent: BTreeMap::new(),
            failed: Default::default(),
            follower: None,
        }
    }
}

impl Coordinator<'_> {
    /// Registration, the start, then the run until every worker ended or went silent.
    pub(crate) fn follow(&mut self) -> Result<Outcome, FleetError> {
        if !self.wait_for_all()? {
            return Ok(Outcome::StoppedEarly);
        }
        protocol::set_state(&mut self.db, self.run, "running", Some(LEAD_MS))?;
        self.live.update(|f| f.state = RunState::Running);
        let started = std::time::Instant::now();
        let lead = Duration::from_millis(LEAD_MS as u64);
        let mut progress = (self.progress_every)
            .map(|p| crate::segments_progress::MergedProgress::new(p, started + lead));
        let mut stopping = false;
        loop {
            std::thread::sleep(Duration::from_millis(250));
            if self.stop.requested() && !stopping {
                protocol::set_state(&mut self.db, self.run, "stopping", None)?;
                stopping = true;
            }
            protocol::coordinator_alive(&mut self.db, self.run)?;
            self.read_intervals()?;
            if let Some(line) = progress.as_mut().and_then(|p| {
                let live = self.count as usize - self.silent.len();
                p.line(&self.live.snapshot(), live)
            }) {
                self.sink.message(Level::Info, &line);
            }
            let ws = protocol::workers(&mut self.db, self.run)?;
            pgrig_fleet::check::workers(self.run, &ws, self.count)?;
            self.hosts
                .extend(ws.iter().map(|w| (w.segment, w.host.clone())));
            let grace = started.elapsed().as_millis() as u32 > LEAD_MS + 2 * INTERVAL_MS;
            self.check(&ws, grace)?;
            self.tell_round(&ws);
            let ended = ws.iter().all(|w| {
                w.state == "done" || w.state == "failed" || self.silent.contains_key(&w.segment)
            });
            if ended {
                return Ok(Outcome::Ended(ws));
            }
        }
    }

    /// Tells the follower, if any, the workers' rows after a look at them.
    pub(crate) fn tell_round(&mut self, ws: &[WorkerRow]) {
        if let Some(f) = self.follower.as_mut() {
            f.round(ws, &self.silent);
        }
    }

    /// Tells the follower, if any, that the run has ended and every row was read.
    pub(crate) fn tell_finish(&mut self) {
        if let Some(f) = self.follower.as_mut() {
            f.finish();
        }
    }

    /// Waits until every segment registered, at most `--segments-wait` (false: Ctrl-C first);
    /// a failed worker, or workers reaching different targets, is the run's error.
    fn wait_for_all(&mut self) -> Result<bool, FleetError> {
        let until = std::time::Instant::now() + Duration::from_secs(self.wait_s as u64);
        loop {
            protocol::coordinator_alive(&mut self.db, self.run)?;
            let ws = protocol::workers(&mut self.db, self.run)?;
            pgrig_fleet::check::workers(self.run, &ws, self.count)?;
            if let Some(w) = ws.iter().find(|w| w.state == "failed") {
                return Err(FleetError::new(handed_in::failure(w)));
            }
            self.same_target(&ws)?;
            if self.stop.requested() {
                return Ok(false);
            }
            if ws.len() as u32 == self.count {
                return Ok(true);
            }
            if std::time::Instant::now() >= until {
                let have: Vec<String> = ws.iter().map(|w| w.segment.to_string()).collect();
                return Err(FleetError::new(format!(
                    "run {}: only {} of {} segments registered within {} s (--segments-wait){}; \
                     the run is cancelled",
                    self.run,
                    ws.len(),
                    self.count,
                    self.wait_s,
                    if have.is_empty() {
                        String::new()
                    } else {
                        format!(" (segments {})", have.join(", "))
                    }
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Refuses the run when the registered workers reach different targets (system identifier,
    /// database, dataset); remembers the common one.
    fn same_target(&mut self, ws: &[WorkerRow]) -> Result<(), FleetError> {
        let targets: Vec<(u32, String, String)> = ws
            .iter()
            .map(|w| (w.segment, w.host.clone(), w.target.clone()))
            .collect();
        if let Some(diff) = pgrig_fleet::target::differing(&targets) {
            return Err(FleetError::new(format!(
                "run {}: refused: the workers reach different targets ({diff}); every worker \
                 must benchmark the same database",
                self.run
            )));
        }
        if let Some(t) = ws.iter().find(|w| !w.target.is_empty()) {
            self.target = t.target.clone();
        }
        Ok(())
    }

    /// Reports failed workers once, and marks the run incomplete when a running worker has
    /// been silent for two intervals (after the start's `grace`).
    fn check(&mut self, ws: &[WorkerRow], grace: bool) -> Result<(), FleetError> {
        for w in ws.iter().filter(|w| w.state == "failed") {
            if self.failed.insert(w.segment) {
                self.sink.message(Level::Error, &handed_in::failure(w));
            }
        }
        let limit = 2.0 * INTERVAL_MS as f64 / 1000.0 + 0.5;
        for w in ws {
            let running = w.state == "running" || w.state == "registered";
            if grace && running && w.silent_s > limit && !self.silent.contains_key(&w.segment) {
                self.sink.message(
                    Level::Error,
                    &format!(
                        "segment {} on {} has not reported for {:.1} s: the run is incomplete",
                        w.segment, w.host, w.silent_s
                    ),
                );
                self.silent.insert(w.segment, w.silent_s);
                self.live.update(|f| f.state = RunState::Incomplete);
                protocol::set_state(&mut self.db, self.run, "incomplete", None)?;
            }
        }
        Ok(())
    }

    /// New interval rows into the live figures, each checked first (a bad row fails the run).
    /// Rows are read again until they are old enough that no row of a lower id can still be
    /// uncommitted (workers' transactions commit in any order), each taken once.
    pub(crate) fn read_intervals(&mut self) -> Result<(), FleetError> {
        let settled = protocol::intervals_settled(&mut self.db, self.run)?;
        let mut rows = protocol::intervals_after(&mut self.db, self.run, self.last_interval)?;
        rows.retain(|(id, _)| !self.taken.contains(id));
        self.last_interval = self.last_interval.max(settled);
        let watermark = self.last_interval;
        self.taken.retain(|id| *id > watermark);
        if rows.is_empty() {
            return Ok(());
        }
        let mut f = self.live.snapshot();
        let mut hosts: BTreeMap<u32, f64> = BTreeMap::new();
        for (id, i) in &rows {
            pgrig_fleet::check::interval(self.run, *id, i, self.count)?;
            if let Some(f) = self.follower.as_mut() {
                f.row(*id, i)?;
            }
            add_interval(&mut f, i).map_err(|why| {
                FleetError::new(format!(
                    "run {}: refused interval row {id} (segment {}, second {}): {why}",
                    self.run, i.segment, i.seq
                ))
            })?;
            hosts.insert(i.segment, i.cpu_s);
            if *id > watermark {
                self.taken.insert(*id);
            }
        }
        for (seg, cpu) in &hosts {
            let host = self.hosts.get(seg).cloned().unwrap_or_default();
            match f.cpu.iter_mut().find(|c| c.segment == Some(*seg)) {
                Some(e) => e.secs = Some(*cpu),
                None => f.cpu.push(crate::metrics::HostCpu {
                    host,
                    segment: Some(*seg),
                    secs: Some(*cpu),
                }),
            }
        }
        self.live.update(|g| *g = f);
        Ok(())
    }

    /// Merges and reports; the exit status.
    fn finish(
        &mut self,
        outcome: Result<Outcome, FleetError>,
        cfg: BenchConfig,
        output: &OutputOptions,
        json: Option<crate::json::JsonOut>,
        stored: &[String],
    ) -> Result<i32, FleetError> {
        let ws = match outcome {
            Ok(Outcome::Ended(ws)) => ws,
            Ok(Outcome::StoppedEarly) => {
                protocol::set_state(&mut self.db, self.run, "failed", None)?;
                self.sink
                    .message(Level::Error, "interrupted (Ctrl-C) before the run started");
                return Ok(130);
            }
            Err(e) => {
                let _ = protocol::set_state(&mut self.db, self.run, "failed", None);
                return Err(e);
            }
        };
        let (merged, missing, cpu) = match handed_in::merged((self.run, self.count), &ws, cfg) {
            Ok(m) => m,
            Err(e) => {
                let _ = protocol::set_state(&mut self.db, self.run, "failed", None);
                return Err(e);
            }
        };
        let incomplete = !missing.is_empty();
        let mut merged = merged;
        merged.extras.segments = Some(pgrig_engine::document::SegmentsDoc {
            count: self.count,
            merged: (0..self.count).filter(|s| !missing.contains(s)).collect(),
            missing: missing.clone(),
        });
        let state = if incomplete { "incomplete" } else { "finished" };
        protocol::set_state(&mut self.db, self.run, state, None)?;
        self.live.update(|f| {
            let cpu = std::mem::take(&mut f.cpu);
            *f = crate::metrics::Figures::of_result(&merged, live_state(&merged, incomplete));
            f.cpu = cpu;
        });
        let mut code = self.report(&merged, &ws, &cpu, output, json);
        if let Some(store) = output.segments.as_ref().and_then(|s| s.store.as_deref()) {
            if !self.store(store, stored, &merged) {
                code = code.max(1);
            }
        }
        if incomplete {
            let list: Vec<String> = missing.iter().map(u32::to_string).collect();
            self.sink.message(
                Level::Error,
                &format!(
                    "run {} is incomplete: no result from segment(s) {}; the report above \
                     covers the other segments only",
                    self.run,
                    list.join(", ")
                ),
            );
            return Ok(2);
        }
        Ok(code)
    }

    /// `--store`: the merged run into the results store; whether it was stored.
    fn store(&self, store: &str, stored: &[String], merged: &RunResult) -> bool {
        let doc = pgrig_engine::document::of(merged);
        match crate::segments_store::save(store, self.run, stored, &self.target, &doc) {
            Ok(id) => {
                let at = pgrig_wire::mask_passwords(store);
                self.sink
                    .message(Level::Info, &format!("stored as run {id} in {at}"));
                true
            }
            Err(e) => {
                let e = pgrig_wire::mask_passwords(&e);
                self.sink.message(Level::Error, &format!("--store: {e}"));
                false
            }
        }
    }

    fn report(
        &self,
        merged: &RunResult,
        ws: &[WorkerRow],
        cpu: &BTreeMap<u32, String>,
        output: &OutputOptions,
        json: Option<crate::json::JsonOut>,
    ) -> i32 {
        let sink = Arc::new(StderrSink {
            json_stdout: json.as_ref().is_some_and(crate::json::JsonOut::is_stdout),
            ..StderrSink::simple(&self.sink.prog)
        });
        let prefix = self.sink.prog.clone();
        sink.banner(&merged.server_version);
        let code = crate::bench_report::report_bench(&prefix, &sink, merged, output, json, None);
        for w in ws {
            self.sink.message(
                Level::Info,
                &format!(
                    "segment {} on {} ({} cores, pgrig {}): clock offset {:+.3} ms (± {:.3} ms), {}",
                    w.segment,
                    w.host,
                    w.cores,
                    w.version,
                    w.offset_ms,
                    w.error_ms,
                    match (w.state.as_str(), cpu.get(&w.segment)) {
                        ("done", Some(c)) => c.clone(),
                        (s, _) => format!("{s}, not merged"),
                    }
                ),
            );
        }
        code
    }
}

fn live_state(r: &RunResult, incomplete: bool) -> RunState {
    if incomplete || r.aborted_clients > 0 {
        RunState::Incomplete
    } else if r.interrupted {
        RunState::Interrupted
    } else {
        RunState::Finished
    }
}

/// Adds an interval row's counts and histogram to the live figures; refused when a total would
/// exceed [`MAX_COUNT`] or the histogram is damaged.
fn add_interval(f: &mut crate::metrics::Figures, i: &protocol::Interval) -> Result<(), String> {
    let add = |a: u64, b: u64| {
        (a.checked_add(b).filter(|v| *v <= MAX_COUNT))
            .ok_or_else(|| format!("the run's counts would exceed {MAX_COUNT}"))
    };
    f.ok = add(f.ok, i.ok)?;
    f.failed = add(f.failed, i.failed)?;
    f.skipped = add(f.skipped, i.skipped)?;
    f.retried = add(f.retried, i.retried)?;
    f.retries = add(f.retries, i.retries)?;
    f.latency_sum_s += i.latency_sum_us / 1e6;
    if let Some(text) = i.histogram.as_deref() {
        let h = pgrig_fleet::codec::histogram_of(text).map_err(|e| e.0)?;
        let recorded = f.buckets.iter().try_fold(0u64, |t, b| add(t, *b))?;
        add(recorded, h.len())?;
        f.add_histogram(&h);
    }
    Ok(())
}
