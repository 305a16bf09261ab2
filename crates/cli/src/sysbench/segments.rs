//! `pgrig sysbench SCRIPT.lua --segments N --coordinator URL [--segments-wait S] [options] run`:
//! the coordinator of a Lua script's run split over N client hosts (`pgrig worker --segment I/N
//! --lua-script FILE`). It stores a run of kind `lua` in the coordination schema — the script
//! by file name and SHA-256 only (each worker runs its own copy of that digest), the run
//! options (`fleet_options`: no connection option, path or pgrig option; a fixed
//! `--rand-seed`) —, waits for the workers and follows them (`crate::coordinator`'s
//! `Coordinator`), checks every tally handed in (`pgrig_fleet::lua_check`), merges them exactly
//! (`pgrig_fleet::lua_merge`) and prints sysbench's report of the whole run, as one host
//! running every thread prints it — its `--report-interval` lines from the segments' interval
//! rows as they come (`pgrig_fleet::segment_lines`) —; `--json`/`--store` get the merged run
//! document.

use pgrig_engine::sink::{Level, Sink};
use pgrig_engine::StopHandle;
use pgrig_fleet::db::Db;
use pgrig_fleet::lua_script::{ScriptRef, KIND};
use pgrig_fleet::protocol::{self, WorkerRow};
use pgrig_fleet::share::SegmentId;
use pgrig_fleet::FleetError;
use pgrig_lua::segment::{share_of, threads_of};
use pgrig_lua::tally::Tally;
use pgrig_lua::Invocation;

use super::cmdline::CmdLine;
use super::general::{Exit, General};
use super::outputs::Outputs;
use crate::coordinator::{Coordinator, Outcome};
use crate::metrics::RunState;
use crate::sink::StderrSink;
use pgrig_fleet::segment_lines::SegmentLines;

/// Seconds between a worker's reports, ms.
const INTERVAL_MS: u32 = 1000;

/// `--segments`, `--coordinator`, `--segments-wait`, checked.
struct Segments {
    count: u32,
    coordinator: String,
    wait_s: u32,
    /// `--metrics-addr`/`--metrics-linger`: the merged run's live metrics, from the segments'
    /// interval rows
    metrics: Option<crate::args::MetricsOptions>,
}

fn segments_options(c: &CmdLine, general: &General) -> Result<Segments, Exit> {
    let count = c.value("segments").unwrap_or("");
    let count: u32 = (count.trim().parse().ok())
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| {
            Exit::fatal(format!(
                "--segments={count}: a number of segments from 1 to 10000 expected"
            ))
        })?;
    let coordinator = c
        .value("coordinator")
        .ok_or_else(|| {
            Exit::fatal(
                "--segments needs --coordinator=URL (the database holding the coordination schema)",
            )
        })?
        .to_string();
    let wait = c.value("segments-wait").unwrap_or("300");
    let wait_s = (wait.trim().parse().ok())
        .ok_or_else(|| Exit::fatal(format!("--segments-wait={wait}: seconds expected")))?;
    if general.threads < count {
        return Err(Exit::fatal(format!(
            "--segments={count} needs at least {count} threads (--threads={})",
            general.threads
        )));
    }
    if general.events > 0 {
        let starved = (0..count).find(|&i| {
            let (first, n) = threads_of(i, count, general.threads);
            share_of(general.events, first, n, general.threads) == 0
        });
        if let Some(i) = starved {
            return Err(Exit::fatal(format!(
                "--events={} leaves segment {i} of --segments={count} no event",
                general.events
            )));
        }
    }
    let metrics = super::live::options(c)?;
    Ok(Segments {
        count,
        coordinator,
        wait_s,
        metrics,
    })
}

/// The run's seed: `--rand-seed` when given, else one drawn now (every segment draws from it).
fn seed(general: &General) -> u32 {
    if general.rand_seed != 0 {
        return general.rand_seed;
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    (((t ^ (t >> 32)) as u32) & 0x7fff_ffff).max(1)
}

/// The coordinator; its exit status. `file` is the script `name` resolved to.
pub fn coordinate(
    (c, args): (&CmdLine, &[String]),
    (name, file): (&str, &str),
    general: &General,
) -> Result<i32, Exit> {
    let seg = segments_options(c, general)?;
    let outputs = Outputs::read(c)?;
    let text = std::fs::read(file).map_err(|e| Exit::fatal(format!("cannot open {file}: {e}")))?;
    let script = ScriptRef::of(std::path::Path::new(file), &text);
    let seed = seed(general);
    let (stored, dropped) = super::fleet_options::for_workers(c, seed).map_err(Exit::fatal)?;
    let sink = StderrSink::simple("pgrig");
    if !dropped.is_empty() {
        sink.message(
            Level::Warning,
            &format!(
                "{}: not sent to workers (each worker connects to its own --target)",
                dropped.join(", ")
            ),
        );
    }
    let whole = General {
        rand_seed: seed,
        ..general.clone()
    };
    let inv = super::lua::invocation((c, args), (name, file, None), &whole, Default::default());
    let run = Run {
        seg: &seg,
        inv: &inv,
        script: &script,
        sink: &sink,
    };
    match run.coordinate(&stored, outputs, (name, args)) {
        Ok(code) => Ok(code),
        Err(e) => {
            sink.message(Level::Error, &e.0);
            Ok(1)
        }
    }
}

struct Run<'a> {
    seg: &'a Segments,
    /// the whole run, as one host running every thread would run it
    inv: &'a Invocation,
    script: &'a ScriptRef,
    sink: &'a StderrSink,
}

impl Run<'_> {
    fn coordinate(
        &self,
        stored: &[String],
        outputs: Outputs,
        (name, args): (&str, &[String]),
    ) -> Result<i32, FleetError> {
        let (db, id) = self.create(stored)?;
        if self.inv.notices {
            print!("{}", pgrig_lua::report::header(self.inv));
        }
        let stop = StopHandle::default();
        crate::interrupt::on_interrupt(stop.clone());
        let counts = (self.seg.count, self.seg.wait_s);
        let mut c = Coordinator::new(db, id, counts, self.sink, stop.clone());
        c.follower = Some(Box::new(SegmentLines::new(
            id,
            self.seg.count,
            self.inv,
            Box::new(|s: &str| print!("{s}")),
        )));
        let server = match &self.seg.metrics {
            Some(m) => {
                let s =
                    crate::metrics::Server::start(&m.addr, c.live.clone()).map_err(FleetError)?;
                let at = format!("serving OpenMetrics on http://{}/metrics", s.addr);
                self.sink.message(Level::Info, &at);
                Some((s, m.linger_s))
            }
            None => None,
        };
        let ended = self.follow(&mut c, id);
        let code = ended.map(|e| {
            let Some((ws, merged)) = e else { return 130 };
            let interrupted = stop.requested();
            let state = match () {
                _ if !merged.missing.is_empty() || merged.tally.fatal => RunState::Incomplete,
                _ if interrupted => RunState::Interrupted,
                _ => RunState::Finished,
            };
            c.live.update(|f| f.state = state);
            self.report(id, &ws, &merged, outputs, (name, args), interrupted)
        });
        if let Some((s, linger)) = server {
            s.finish(std::time::Duration::from_secs(u64::from(linger)));
        }
        code
    }

    /// Follows the run to its end and merges what the workers handed in (the run's state set
    /// in the schema); the workers' rows and the merge, none after Ctrl-C before the start.
    fn follow(
        &self,
        c: &mut Coordinator<'_>,
        id: i64,
    ) -> Result<Option<(Vec<WorkerRow>, Merged)>, FleetError> {
        let ws = match c.follow() {
            Ok(Outcome::Ended(ws)) => ws,
            Ok(Outcome::StoppedEarly) => {
                protocol::set_state(&mut c.db, id, "failed", None)?;
                let why = "interrupted (Ctrl-C) before the run started";
                self.sink.message(Level::Error, why);
                return Ok(None);
            }
            Err(e) => {
                let _ = protocol::set_state(&mut c.db, id, "failed", None);
                return Err(e);
            }
        };
        // the rows written since the last look, so the live figures and the interval lines
        // hold every second
        let merged = c.read_intervals().and_then(|()| {
            c.tell_finish();
            self.merged(id, &ws)
        });
        let merged = match merged {
            Ok(m) => m,
            Err(e) => {
                let _ = protocol::set_state(&mut c.db, id, "failed", None);
                return Err(e);
            }
        };
        let state = if merged.missing.is_empty() {
            "finished"
        } else {
            "incomplete"
        };
        protocol::set_state(&mut c.db, id, state, None)?;
        Ok(Some((ws, merged)))
    }

    /// Opens the run in the coordination schema and says how workers join it.
    fn create(&self, stored: &[String]) -> Result<(Db, i64), FleetError> {
        let mut db = Db::connect(&self.seg.coordinator)?;
        let scripts = self.script.encode();
        let n = self.seg.count;
        let (id, stale) = protocol::create_run_of(
            &mut db,
            KIND,
            n,
            (stored, &scripts),
            u64::from(self.inv.rand_seed),
            INTERVAL_MS,
        )?;
        for s in stale {
            self.sink.message(
                Level::Warning,
                &format!(
                    "cancelled run {s}: its coordinator has not been seen for over {} s",
                    protocol::COORDINATOR_SILENCE_S
                ),
            );
        }
        let digest = protocol::options_digest(n, stored, &scripts);
        self.sink.message(
            Level::Info,
            &format!(
                "run {id} (options digest {}) waits for {n} workers: pgrig worker --segment I/{n} \
                 --coordinator \"{}\" --run {id} --lua-script {} [--target URL]   (script {} \
                 sha256 {})",
                &digest[..16],
                db.shown,
                self.script.name,
                self.script.name,
                self.script.sha256
            ),
        );
        Ok((db, id))
    }

    /// The tallies handed in, each checked, merged.
    fn merged(&self, id: i64, ws: &[WorkerRow]) -> Result<Merged, FleetError> {
        let mut parts = Vec::new();
        let mut missing = Vec::new();
        let mut version = String::new();
        let mut cpu = std::collections::BTreeMap::new();
        for w in ws {
            let Some(text) = w.result.as_deref().filter(|_| w.state == "done") else {
                missing.push(w.segment);
                continue;
            };
            let refused = |e: FleetError| {
                FleetError::new(format!(
                    "run {id}: refused the result of segment {} (host {:?}): {e}",
                    w.segment, w.host
                ))
            };
            let (t, v) = pgrig_fleet::lua_codec::decode(text).map_err(refused)?;
            let seg = SegmentId {
                index: w.segment,
                count: self.seg.count,
            };
            pgrig_fleet::lua_check::tally(id, seg, &w.host, &t, self.inv.threads)?;
            version = v;
            let threads: Vec<_> = t.threads.iter().map(|c| c.cpu).collect();
            cpu.insert(w.segment, pgrig_fleet::handed_in::host_cpu(&threads));
            parts.push((w.segment, t));
        }
        let tally = pgrig_fleet::lua_merge::merge(parts)
            .map_err(|e| FleetError::new(format!("run {id}: {e}")))?;
        Ok(Merged {
            tally,
            version,
            missing,
            cpu,
        })
    }

    /// sysbench's report of the whole run, a line per segment, `--json`/`--store`; the status.
    fn report(
        &self,
        id: i64,
        ws: &[WorkerRow],
        m: &Merged,
        outputs: Outputs,
        (name, args): (&str, &[String]),
        interrupted: bool,
    ) -> i32 {
        let (t, missing) = (&m.tally, &m.missing);
        let count = self.seg.count;
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(u32::to_string).collect();
            println!(
                "INCOMPLETE RUN: no result from segment(s) {} of {count}; the figures below cover the other segments only",
                list.join(", ")
            );
        }
        print!("{}", pgrig_lua::tally::report_body(self.inv, t));
        for w in ws {
            let cpu = match (w.state.as_str(), m.cpu.get(&w.segment)) {
                ("done", Some(c)) => c.clone(),
                (s, _) => format!("{s}, not merged"),
            };
            self.sink.message(
                Level::Info,
                &format!(
                    "segment {} on {} ({} cores, pgrig {}): clock offset {:+.3} ms (± {:.3} ms), {cpu}",
                    w.segment, w.host, w.cores, w.version, w.offset_ms, w.error_ms
                ),
            );
            if w.state == "failed" {
                self.sink
                    .message(Level::Error, &pgrig_fleet::handed_in::failure(w));
            }
        }
        let mut doc = pgrig_lua::document::of(self.inv, t, &m.version);
        doc.interrupted |= interrupted;
        doc.complete = Some(missing.is_empty());
        doc.segments = Some(pgrig_results::document::SegmentsDoc {
            count,
            merged: (0..count).filter(|s| !missing.contains(s)).collect(),
            missing: missing.to_vec(),
        });
        let written = outputs.write(&doc, name, args);
        if !missing.is_empty() {
            self.sink.message(
                Level::Error,
                &format!(
                    "run {id} is incomplete: the report above covers the merged segments only"
                ),
            );
            return 2;
        }
        if interrupted {
            self.sink.message(
                Level::Error,
                &format!("run {id} was stopped (Ctrl-C): the report above covers what ran"),
            );
            return 130;
        }
        if t.fatal {
            self.sink.message(
                Level::Error,
                &format!(
                    "run {id}: the script stopped on a FATAL error in a segment (its worker's \
                     output says which): the report above covers what ran until then"
                ),
            );
            return 1;
        }
        written
    }
}

/// The segments' tallies merged.
struct Merged {
    tally: Tally,
    /// the server version a worker reported
    version: String,
    /// segments that handed in no result
    missing: Vec<u32>,
    /// each merged segment's client CPU line
    cpu: std::collections::BTreeMap<u32, String>,
}
