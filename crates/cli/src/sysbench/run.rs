//! `run`: the header, sysbench's check that every statement prepares (missing tables: its
//! `PQprepare() failed` lines), the run on pgrig's engine with `--threads` clients, the
//! `--report-interval` lines as the run goes, and the final report from the run document. A
//! statement's error that ends a client is printed as sysbench's driver prints it and ends the
//! run without a report, status 1, as sysbench's fatal errors do. `--forced-shutdown` cuts the
//! clients still running at its second (`BenchConfig::forced_end_s`): sysbench's FATAL line,
//! the report with the unfinished transactions, status 2; the document is written either way.

use std::sync::{Arc, Mutex};

use pgrig_engine::config::{clamp_threads, BenchConfig, Duration, SeedOption};
use pgrig_engine::sink::{Level, Progress, SecondReport, Sink};
use pgrig_engine::stats::Replies;
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::StopHandle;
use pgrig_script::QueryMode;
use pgrig_workloads::{Native, Options};

use super::cmdline::CmdLine;
use super::db::Db;
use super::general::{self, Exit, General, Pg, Phase};
use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::report::{self, Header, Interval, Summary};

/// `run`.
pub fn run(
    (c, args): (&CmdLine, &[String]),
    test: &str,
    options: &Options,
    general: &General,
    pg: &Pg,
) -> Result<i32, Exit> {
    let outputs = super::outputs::Outputs::read(c)?;
    let metrics_opts = super::live::options(c)?;
    if general.notices {
        print!(
            "{}",
            report::header(&Header {
                threads: general.threads,
                rate: general.rate,
                report_interval: general.report_interval,
                rand_seed: general.rand_seed,
                forced_shutdown: general.forced_shutdown,
            })
        );
    }
    let phase = Phase::Run {
        threads: general.threads,
    };
    general::check_driver(c, phase)?;
    let native = super::join::build(test, options)?;
    if !general.ps_mode_disable {
        check_statements(pg, &native, phase)?;
    }
    let cfg = config(general, pg, &native);
    let sink = Arc::new(RunSink {
        threads: general.threads,
        percentile: general.percentile,
        interval: if general.notices {
            u64::from(general.report_interval)
        } else {
            0
        },
        notices: general.notices,
        acc: Mutex::new(Acc::default()),
    });
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let (metrics, engine_sink) = crate::metrics::Metrics::around(
        metrics_opts.as_ref().map(|m| (m.addr.as_str(), m.linger_s)),
        sink.clone(),
    )
    .map_err(Exit::fatal)?;
    if let Some(m) = &metrics {
        eprintln!(
            "pgrig: serving OpenMetrics on http://{}/metrics",
            m.server.addr
        );
    }
    let result = pgrig_engine::run_bench(cfg, engine_sink, &stop);
    if let Some(m) = metrics {
        m.finish(result.as_ref().ok());
    }
    let result = result.map_err(|e| {
        let lines: Vec<String> = e.lines.iter().map(|(_, l)| l.clone()).collect();
        Exit::fatal(lines.join("\nFATAL: "))
    })?;
    let mut doc = pgrig_engine::document::of(&result);
    doc.workload_options = (options.pairs().iter()).cloned().collect();
    let replies = result.stats.total().counts.replies;
    doc.workload_counters
        .extend(report::class_counters(&replies));
    let written = if outputs.wanted() {
        outputs.write(&doc, test, args)
    } else {
        0
    };
    if doc.aborted_clients > 0 {
        // sysbench ends at a thread's fatal error, without a report
        return Ok(1);
    }
    let forced = doc.unfinished_events.is_some();
    if forced {
        print!("{}", report::FORCED_SHUTDOWN);
    }
    if general.notices {
        let summary = Summary::of(&doc, general.percentile, general.histogram);
        print!("{}", report::summary(&summary));
    }
    // sysbench's forced shutdown exits 2
    Ok(match () {
        _ if forced => 2,
        _ if doc.interrupted => 130,
        _ => written,
    })
}

/// sysbench prepares every statement of the test before its threads start; a statement that
/// does not (a missing table) is reported as its driver reports it.
fn check_statements(pg: &Pg, native: &Native, phase: Phase) -> Result<(), Exit> {
    let mut db = Db::connect(pg, phase)?;
    let mut out = String::new();
    for s in native
        .workload
        .catalogue()
        .statements
        .iter()
        .filter(|s| !s.simple)
    {
        match db.prepare_error(&s.sql, s.param_count()) {
            Ok(None) => {}
            Ok(Some(e)) => out += &format!("FATAL: PQprepare() failed: {e}\n\n"),
            Err(e) => out += &format!("FATAL: PQprepare() failed: {e}\n\n"),
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(Exit {
            stdout: out,
            code: 1,
            ..Exit::default()
        })
    }
}

/// The engine's configuration for sysbench's options.
fn config(g: &General, pg: &Pg, native: &Native) -> BenchConfig {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    // sysbench's limits: `--events` over all threads and `--time`, whichever comes first
    let duration = if g.time > 0 {
        Duration::Seconds(g.time)
    } else {
        // no time limit: `--events` alone, or sysbench's endless test (neither limit)
        Duration::Seconds(100 * 365 * 86_400)
    };
    BenchConfig {
        conn: pg.conn_args(),
        clients: g.threads,
        threads: clamp_threads(cores, g.threads),
        duration,
        mode: if g.ps_mode_disable {
            QueryMode::Simple
        } else {
            QueryMode::Prepared
        },
        no_vacuum: true,
        report_per_command: true,
        rate: (g.rate > 0).then_some(g.rate as f64),
        // sysbench retries ignorable errors without limit; any other error ends the run
        max_tries: 0,
        exit_on_abort: true,
        // sysbench's `srandom` seed: `--rand-seed`, else the clock's seconds (so the recorded
        // seed, given as `--rand-seed`, repeats the run's numbers)
        random_seed: Some(SeedOption::Value(u64::from(
            pgrig_workloads::sysbench::seeding::run_seed(g.rand_seed),
        ))),
        native: Some(NativeWorkload(native.workload.clone())),
        total_transactions: (g.events > 0).then_some(g.events),
        // sysbench's alarm of 0 never goes off
        forced_end_s: (g.forced_shutdown).filter(|&s| s > 0).map(u64::from),
        ..BenchConfig::default()
    }
}

/// The run's messages and interval lines, on standard output as sysbench prints them.
struct RunSink {
    threads: u32,
    percentile: u32,
    /// `--report-interval` (0: none)
    interval: u64,
    /// `--verbosity` 3 or more
    notices: bool,
    /// the seconds of the current interval
    acc: Mutex<Acc>,
}

#[derive(Default)]
struct Acc {
    events: u64,
    errors: u64,
    /// the interval's queries by class, from the statements' replies
    replies: Replies,
    latency: Slots,
}

impl Sink for RunSink {
    fn message(&self, level: Level, text: &str) {
        match level {
            Level::Error => println!("FATAL: {text}"),
            Level::Warning => println!("WARNING: {text}"),
            Level::Raw => print!("{text}"),
            _ => {}
        }
    }

    fn stdout(&self, _: &str) {}

    fn progress(&self, _: &Progress) {}

    /// sysbench's driver lines for a statement that failed (`PQexec()` for a simple query,
    /// with the query; `PQexecPrepared()` for a prepared one), then its thread's last words.
    fn sql_abort(&self, _client: u32, sql: &[u8], simple: bool, (code, msg): (&str, &str)) -> bool {
        let mut out = if simple {
            format!(
                "FATAL: PQexec() failed: 7 {msg}\nFATAL: failed query was: {}\n",
                String::from_utf8_lossy(sql)
            )
        } else {
            format!("FATAL: PQexecPrepared() failed: 7 {msg}\n")
        };
        out += &format!(
            "FATAL: `thread_run' function failed: SQL error, errno = 0, state = '{code}': {msg}\n"
        );
        print!("{out}");
        true
    }

    fn measuring(&self) {
        if self.notices {
            print!("{}", report::THREADS_STARTED);
        }
    }

    fn second(&self, s: &SecondReport<'_>) {
        if self.interval == 0 {
            return;
        }
        let Ok(mut acc) = self.acc.lock() else {
            return;
        };
        acc.events += s.delta.counts.ok;
        acc.errors += s.delta.counts.retries;
        let r = &s.delta.counts.replies;
        acc.replies.rows += r.rows;
        acc.replies.changed += r.changed;
        acc.replies.neither += r.neither;
        for v in s.histogram.iter_recorded() {
            acc.latency
                .add_us(v.value_iterated_to(), v.count_at_value());
        }
        if !s.second.is_multiple_of(self.interval) {
            return;
        }
        let done = std::mem::take(&mut *acc);
        let events = done.events as f64;
        let q = &done.replies;
        print!(
            "{}",
            report::interval(&Interval {
                time_s: s.second as f64,
                seconds: self.interval as f64,
                threads: self.threads,
                events,
                reads: q.rows as f64,
                writes: q.changed as f64,
                other: q.neither as f64,
                percentile: self.percentile,
                latency_ms: done.latency.percentile(self.percentile),
                errors: done.errors as f64,
                reconnects: 0.0,
                queue: None,
            })
        );
    }
}
