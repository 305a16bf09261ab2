//! `pgrig run`: the modern front door. A named workload (or a script file) for a duration, with a
//! live progress line and a readable summary (tps, latency percentiles, failures, client CPU time
//! and run-queue wait).
//! With no target (and no PGHOST), a throwaway local PostgreSQL is started, initialised, used and
//! removed.

use std::io::IsTerminal;
use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, ConnArgs, Duration, ScriptSource};
use pgrig_engine::document::RunDocument;
use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_script::QueryMode;
use pgrig_study::collect::server_seconds::{SecondsSink, ServerSeconds};
use pgrig_study::dataset::Dataset;
use pgrig_study::managed::Managed;
use pgrig_study::plan::TargetPlan;
use pgrig_study::StudyError;

use crate::json::JsonOut;
pub use crate::run_args::RunArgs;
use crate::sink::StderrSink;
/// `pgrig run`'s summary, rendered by pgrig-results.
pub use pgrig_results::run_summary::summary;

/// A progress sink that rewrites one line on a terminal and prints pgbench's lines otherwise.
struct LiveSink {
    inner: StderrSink,
    tty: bool,
}

impl Sink for LiveSink {
    fn message(&self, level: Level, text: &str) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        self.inner.message(level, text)
    }
    fn stdout(&self, text: &str) {
        self.inner.stdout(text)
    }
    fn progress(&self, p: &Progress) {
        if self.tty {
            eprint!(
                "\r\x1b[K{:>5.0} s  {:>10.1} tps  lat {:.3} ms  {} failed  {} retries  {}",
                p.time,
                p.tps,
                p.latency_ms,
                p.failed,
                p.retries,
                client_cpu_progress(p)
            );
        } else {
            let line = self.inner.progress_line(p);
            let line = format!("{}, {}\n", line.trim_end(), client_cpu_progress(p));
            crate::sink::err(&line);
        }
    }
}

/// The progress line's client figures over the interval (the busiest thread's shares).
pub fn client_cpu_progress(p: &Progress) -> String {
    format!(
        "client CPU time {:.0}%, run-queue wait {:.0}%",
        100.0 * p.client_cpu_time,
        100.0 * p.client_run_queue_wait
    )
}

/// One branch row per client (TPC-B-like transactions update one of `scale` branch rows), within
/// what initialises in seconds.
fn default_scale(clients: u32) -> i32 {
    clients.clamp(1, 100) as i32
}

pub fn main(args: &[String]) -> i32 {
    let a: RunArgs = match crate::own_args::parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let (mode, scripts, native) = match workload(&a) {
        Ok(w) => w,
        Err(msg) => {
            eprintln!("pgrig: error: {msg}");
            return 1;
        }
    };
    if let (Some(n), Some(url)) = (a.segments, &a.coordinator) {
        return crate::run_segments::from_run(&a, n, url, &scripts, native.is_some());
    }
    // Checked before anything runs: a result that cannot be written is found first.
    let json = match a.json.as_deref().map(JsonOut::open).transpose() {
        Ok(j) => j,
        Err(msg) => {
            eprintln!("pgrig: error: {msg}");
            return 1;
        }
    };
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let (conn, server) = match target(&a) {
        Ok(t) => t,
        Err(code) => {
            return code;
        }
    };
    let sink = Arc::new(LiveSink {
        inner: StderrSink {
            prog: "pgrig".into(),
            max_tries: a.max_tries,
            rate: false,
            latency_limit: false,
            progress_timestamp: false,
            json_stdout: false,
        },
        tty: std::io::stderr().is_terminal(),
    });
    if server.is_some() || a.init {
        let done = match &native {
            Some(n) => load_native(&a, n, &conn, &sink.inner, &stop, server.is_some()),
            None => initialise(&a, &conn, &sink.inner, &stop, server.is_some()),
        };
        if let Err(code) = done {
            return code;
        }
    }
    let cfg = bench_config(&a, conn, scripts, mode, native);
    let code = measure(&a, cfg, server.as_ref(), &sink, &stop, json);
    drop(server);
    code
}

/// The benchmark `pgrig run` asks for.
fn bench_config(
    a: &RunArgs,
    conn: ConnArgs,
    scripts: Vec<ScriptSource>,
    mode: QueryMode,
    native: Option<pgrig_workloads::Native>,
) -> BenchConfig {
    BenchConfig {
        conn,
        scripts,
        clients: a.clients,
        threads: pgrig_engine::config::clamp_threads(a.threads, a.clients),
        duration: Duration::Seconds(a.duration),
        mode,
        progress: Some(1),
        max_tries: a.max_tries,
        random_seed: a.seed.map(pgrig_engine::config::SeedOption::Value),
        no_vacuum: false,
        native: native.map(|n| pgrig_engine::workload::NativeWorkload(n.workload)),
        ..Default::default()
    }
}

/// Runs the benchmark with its profiler, live metrics and server-side sampling, then writes
/// every output; the exit status.
fn measure(
    a: &RunArgs,
    cfg: BenchConfig,
    server: Option<&Managed>,
    sink: &Arc<LiveSink>,
    stop: &StopHandle,
    json: Option<JsonOut>,
) -> i32 {
    let native_name = cfg.native.as_ref().map(|n| n.0.name().to_string());
    let profiler = match start_profile(a, &cfg.conn, server.and_then(|m| m.server.as_ref())) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            return 1;
        }
    };
    let metrics_opts = a
        .metrics_addr
        .as_deref()
        .map(|addr| (addr, a.metrics_linger));
    let (metrics, engine_sink) = match crate::metrics::Metrics::around(metrics_opts, sink.clone()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            return 1;
        }
    };
    let rampup = tpcc_rampup(a, native_name.as_deref());
    let seconds = ServerSeconds::connect(&cfg.conn);
    let engine_sink = SecondsSink::around(engine_sink, seconds.as_ref());
    let (r, profiled) = crate::profile::run_bench_profiled(profiler, engine_sink, cfg, stop);
    let readings = seconds.map(|s| s.finish());
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            if let Some(m) = metrics {
                m.finish(None);
            }
            return e.report(&**sink);
        }
    };
    if sink.tty {
        eprintln!();
    }
    let mut doc = pgrig_engine::document::of(&r);
    if let Some(readings) = &readings {
        readings.fill(&mut doc);
        if let (Some(from), Some(start)) = (rampup, doc.started_at_unix_s) {
            doc.server_xacts = readings.server_xacts(from, start);
        }
    }
    annotate(&mut doc, a);
    let code = report(&doc, &native_options(a), json, sink);
    if let Some(m) = metrics {
        m.finish(Some(&r));
    }
    outputs(a, &doc, profiled, code)
}

/// The profile's files and `--report`'s page; `code` made 1 when one could not be written.
fn outputs(
    a: &RunArgs,
    doc: &RunDocument,
    profiled: Option<crate::profile::ProfileOutcome>,
    mut code: i32,
) -> i32 {
    if let (Some(dir), Some(done)) = (&a.profile, profiled) {
        match done {
            Ok(written) => {
                for l in crate::profile::written_lines(dir, &written) {
                    eprintln!("pgrig: {l}");
                }
            }
            Err(e) => {
                eprintln!("pgrig: error: {e}");
                if code == 0 {
                    code = 1;
                }
            }
        }
    }
    if let Some(path) = &a.report {
        if let Err(e) = crate::html_report::of_run_document(doc, path) {
            eprintln!("pgrig: error: {e}");
            if code == 0 {
                code = 1;
            }
        }
    }
    code
}

/// What `--protocol`, `--workload` and `--option` name: the query mode, and pgbench scripts or
/// one native workload.
type Chosen = (
    QueryMode,
    Vec<ScriptSource>,
    Option<pgrig_workloads::Native>,
);

fn workload(a: &RunArgs) -> Result<Chosen, String> {
    let mode: QueryMode = a.protocol.parse().map_err(|e| format!("--protocol: {e}"))?;
    if let [name] = &a.workload[..] {
        if pgrig_workloads::is_native(name) {
            if let Some(o) = a.options.iter().find(|o| !o.contains('=')) {
                return Err(format!("--option \"{o}\": expected KEY=VALUE"));
            }
            let options = native_options(a);
            let native = pgrig_workloads::build(name, &options).map_err(|e| e.message)?;
            return Ok((mode, Vec::new(), Some(native)));
        }
    }
    if let Some(o) = a.options.first() {
        return Err(format!(
            "--option \"{o}\" applies to native workloads ({}), not to pgbench scripts",
            pgrig_workloads::names().join(", ")
        ));
    }
    let mut scripts = Vec::new();
    for w in &a.workload {
        let (name, weight) = pgrig_script::builtin::parse_weight(w).map_err(|e| e.to_string())?;
        if std::path::Path::new(name).exists() {
            let text = pgrig_script::file::read_path(name.as_ref())
                .map_err(|e| format!("could not read workload file \"{name}\": {}", e.io()))?;
            scripts.push(ScriptSource::File {
                path: name.into(),
                text,
                weight,
            });
        } else {
            let b = pgrig_script::builtin::lookup(name)
                .map_err(|e| format!("{e} (and no such file)"))?;
            scripts.push(ScriptSource::Builtin {
                name: b.name.to_string(),
                weight,
            });
        }
    }
    Ok((mode, scripts, None))
}

/// Where to connect: `--target`, the environment, or a throwaway server started here as a
/// study starts one (returned too: dropping it removes it).
fn target(a: &RunArgs) -> Result<(ConnArgs, Option<Managed>), i32> {
    let use_env = std::env::var_os("PGHOST").is_some() || std::env::var_os("PGDATABASE").is_some();
    match (&a.target, use_env) {
        (Some(t), _) => Ok((
            ConnArgs {
                dbname: Some(t.clone()),
                ..Default::default()
            },
            None,
        )),
        (None, true) => Ok((ConnArgs::default(), None)),
        (None, false) => {
            ensure_server_binaries()?;
            eprintln!("pgrig: starting a throwaway PostgreSQL server...");
            let m = match Managed::open(&TargetPlan::throwaway("run", a.tcp), a.clients) {
                Ok(m) => m,
                Err(e) => {
                    let e = match e {
                        StudyError::Server(e) => e,
                        e => e.to_string(),
                    };
                    eprintln!("pgrig: error: could not start a throwaway PostgreSQL server: {e}");
                    return Err(1);
                }
            };
            let Some(s) = &m.server else {
                return Err(1);
            };
            eprintln!(
                "pgrig: PostgreSQL {} on {}port {} in {} (removed when the run ends)",
                pgrig_lab::release_of(s.version()),
                if a.tcp { "127.0.0.1 " } else { "" },
                s.port(),
                s.root_dir().display()
            );
            let c = if a.tcp {
                ConnArgs {
                    dbname: Some(m.endpoint.conninfo.clone()),
                    ..Default::default()
                }
            } else {
                // over the socket as -h -p -U, which `--json` echoes as for `pgrig bench`
                ConnArgs {
                    host: Some(s.socket_dir().display().to_string()),
                    port: Some(s.port().to_string()),
                    user: Some(s.user().to_string()),
                    dbname: Some("postgres".into()),
                }
            };
            Ok((c, Some(m)))
        }
    }
}

/// Creates the pgbench tables. Ctrl-C ends with 130; on a throwaway server (removed anyway)
/// without pgbench's advice to initialise again.
fn initialise(
    a: &RunArgs,
    conn: &ConnArgs,
    sink: &StderrSink,
    stop: &StopHandle,
    throwaway: bool,
) -> Result<(), i32> {
    if stop.requested() {
        eprintln!("pgrig: interrupted (Ctrl-C) before anything was measured");
        return Err(130);
    }
    let scale = a.scale.unwrap_or_else(|| default_scale(a.clients));
    eprintln!("pgrig: initialising pgbench tables at scale {scale}...");
    let Err(e) = Dataset::pgbench(scale).init_tables(conn.clone(), sink, stop) else {
        return Ok(());
    };
    let interrupted = stop.requested();
    for (level, l) in &e.lines {
        if !(interrupted && throwaway && *level == Level::Hint) {
            sink.message(*level, l);
        }
    }
    if !interrupted {
        return Err(e.exit_code);
    }
    if throwaway {
        eprintln!("pgrig: interrupted (Ctrl-C) before anything was measured; the throwaway server is removed");
    }
    Err(130)
}

/// TPC-C: the second whose server reading starts PostgreSQL TPM's window (the end of the
/// ramp-up: option `rampup`, else a tenth of the run), when the run goes on after it.
fn tpcc_rampup(a: &RunArgs, workload: Option<&str>) -> Option<u64> {
    if workload != Some("tpcc") {
        return None;
    }
    let cfg = pgrig_workloads::tpcc::Config::from_options(&native_options(a)).ok()?;
    let rampup = pgrig_workloads::tpcc::metrics::rampup_s(&cfg, a.duration as f64);
    (rampup < a.duration).then_some(rampup)
}

/// A native run's document with its `-o` options and its family's own figures (TPC-C's
/// NOPM, TPM, efficiency...), for `--json` and the report.
fn annotate(doc: &mut RunDocument, a: &RunArgs) {
    let Some(name) = doc.workload.clone() else {
        return;
    };
    let options = native_options(a);
    doc.workload_options = (options.pairs().iter()).cloned().collect();
    doc.workload_figures = pgrig_workloads::figures_json(&name, doc, &options);
}

/// `--option KEY=VALUE` as workload options (malformed ones are refused before this).
fn native_options(a: &RunArgs) -> pgrig_workloads::Options {
    let mut options = pgrig_workloads::Options::new();
    for (k, v) in a.options.iter().filter_map(|o| o.split_once('=')) {
        options.set(k.trim(), v.trim());
    }
    options
}

/// Loads a native workload's dataset (on a target with `--init`: its tables dropped first).
/// Ctrl-C ends with 130.
fn load_native(
    a: &RunArgs,
    native: &pgrig_workloads::Native,
    conn: &ConnArgs,
    sink: &StderrSink,
    stop: &StopHandle,
    throwaway: bool,
) -> Result<(), i32> {
    let name = native.workload.name();
    eprintln!("pgrig: loading the {name} dataset...");
    match native.load(conn, a.init, sink, stop) {
        Ok(report) => {
            eprintln!("pgrig: {name} dataset {}", report.summary());
            Ok(())
        }
        Err(_) if stop.requested() => {
            if throwaway {
                eprintln!("pgrig: interrupted (Ctrl-C) before anything was measured; the throwaway server is removed");
            }
            Err(130)
        }
        Err(e) => Err(e.report(sink)),
    }
}

/// Prints the summary (to stderr when standard output carries the JSON), the self-check
/// warnings and the JSON; returns the exit status: 130 after Ctrl-C, 2 when clients aborted, 1
/// when the JSON could not be written.
fn report(
    doc: &RunDocument,
    options: &pgrig_workloads::Options,
    json: Option<JsonOut>,
    sink: &LiveSink,
) -> i32 {
    let mut text = summary(doc);
    if let Some(name) = &doc.workload {
        // the workload family's own lines (YCSB's `[READ], ...`, TPC-C's tpmC)
        for l in pgrig_workloads::report_lines(name, doc, options) {
            text.push_str(&l);
            text.push('\n');
        }
    }
    if json.as_ref().is_some_and(JsonOut::is_stdout) {
        eprint!("{text}");
    } else {
        crate::sink::out(&text);
    }
    for w in &doc.self_check.warnings {
        sink.message(Level::Warning, w);
    }
    for f in &doc.findings {
        // a closed standard error must not end the run before its JSON is written
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), format!("{}\n", f.line()).as_bytes());
    }
    let mut code = 0;
    if let Some(json) = json {
        if let Err(e) = json.write(doc) {
            sink.message(Level::Error, &e);
            code = 1;
        }
    }
    if doc.interrupted {
        sink.message(
            Level::Error,
            "interrupted (Ctrl-C): the results cover the transactions completed before it",
        );
        return 130;
    }
    if doc.aborted_clients > 0 {
        eprintln!(
            "pgrig: error: {} client(s) aborted; the results are incomplete",
            doc.aborted_clients
        );
        return 2;
    }
    code
}

/// Makes sure PostgreSQL's server binaries are installed: as root on a Debian-like system,
/// installs the `postgresql` package (the quick start's promise); otherwise says exactly what
/// to install.
fn ensure_server_binaries() -> Result<(), i32> {
    let note = |m: &str| eprintln!("pgrig: {m}");
    pgrig_lab::ensure_server_binaries(pgrig_lab::Install::AptAsRoot, &note).map_err(|lines| {
        for (i, l) in lines.iter().enumerate() {
            let kind = if i == 0 { "error: " } else { "" };
            eprintln!("pgrig: {kind}{l}");
        }
        1
    })
}

/// `--profile`: perf on the throwaway server (or the target's postmaster) and on pgrig.
fn start_profile(
    a: &RunArgs,
    conn: &ConnArgs,
    server: Option<&pgrig_lab::Server>,
) -> Result<Option<crate::profile::Profiler>, String> {
    let Some(dir) = &a.profile else {
        return Ok(None);
    };
    let opts = crate::args::ProfileOptions {
        dir: dir.clone(),
        pid: a.profile_pid,
        client: a.profile_client,
    };
    let postmaster = match server.and_then(pgrig_lab::Server::postmaster_pid) {
        Some(pid) if a.profile_pid.is_none() => pid,
        _ => crate::profile::bench_postmaster(&opts, conn)?,
    };
    crate::profile::Profiler::start(dir, postmaster, a.profile_client).map(Some)
}

#[cfg(test)]
mod tests {
    use crate::run_args::parse_duration;

    #[test]
    fn duration_takes_the_study_syntax_in_whole_seconds() {
        assert_eq!(parse_duration("10s"), Ok(10));
        assert_eq!(parse_duration("2m"), Ok(120));
        assert_eq!(parse_duration("1500ms"), Ok(2));
        assert_eq!(parse_duration("7"), Ok(7));
        assert!(parse_duration("500ms").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
