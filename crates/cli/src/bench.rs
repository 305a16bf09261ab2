//! `pgrig bench` (and the `pgbench` link): parse pgbench's command line, run the benchmark or the
//! initialisation, print pgbench's report, exit with pgbench's status. Adds the client self-check.

use std::io::Write;
use std::sync::Arc;

use pgrig_engine::config::BenchConfig;
use pgrig_engine::sink::{Level, Sink};
use pgrig_engine::StopHandle;
use pgrig_init::InitOptions;

use crate::args::{self, Action, OutputOptions};
use crate::json::JsonOut;
use crate::sink::StderrSink;

/// Runs `pgbench`-style; `prog` is `pgbench` (link) or `pgrig bench`. Returns the exit status.
pub fn main(prog: &str, args: &[String]) -> i32 {
    let prefix = if prog == "pgbench" {
        "pgbench"
    } else {
        "pgrig"
    };
    let parsed = match args::parse_or_report(prog, args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match parsed.action {
        Action::Help(text) => {
            print!("{text}");
            0
        }
        Action::Version => {
            println!("{}", version_line(prefix));
            0
        }
        Action::BuiltinList(lines) => {
            for l in lines {
                eprintln!("{l}");
            }
            0
        }
        Action::ShowScript(name) => match pgrig_script::builtin::lookup(&name) {
            Ok(b) => {
                eprint!("{}", pgrig_script::builtin::show_script_text(b));
                0
            }
            Err(e) => {
                eprintln!("{prefix}: error: {e}");
                1
            }
        },
        Action::Init(cfg) => {
            let sink = StderrSink::simple(prefix);
            let opts = InitOptions::default();
            crate::interrupt::on_interrupt(opts.stop.clone());
            match pgrig_init::run_init_with(&cfg, &sink, &opts) {
                Ok(()) => 0,
                Err(e) => e.report(&sink),
            }
        }
        Action::Bench(cfg) if parsed.output.segments.is_some() => {
            crate::coordinator::main(prefix, args, cfg, parsed.output)
        }
        Action::Bench(cfg) => run_bench(prefix, cfg, parsed.output),
    }
}

/// `-V`: as `pgbench`, pgbench's form with the pgbench version pgrig mirrors (scripts read the
/// major version from it); as `pgrig bench`, pgrig's own.
fn version_line(prefix: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    if prefix == "pgbench" {
        format!("pgbench (PostgreSQL) 15 (pgrig {version})")
    } else {
        format!("pgrig {version}")
    }
}

fn run_bench(prefix: &str, cfg: BenchConfig, output: OutputOptions) -> i32 {
    let json = match output.json.as_deref().map(JsonOut::open).transpose() {
        Ok(j) => j,
        Err(e) => {
            StderrSink::simple(prefix).message(Level::Error, &e);
            return 1;
        }
    };
    let sink = Arc::new(StderrSink {
        prog: prefix.into(),
        max_tries: cfg.max_tries,
        rate: cfg.rate.is_some(),
        latency_limit: cfg.latency_limit_us.is_some(),
        progress_timestamp: cfg.progress_timestamp,
        json_stdout: json.as_ref().is_some_and(JsonOut::is_stdout),
    });
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let profiler = match start_profile(output.profile.as_ref(), &cfg) {
        Ok(p) => p,
        Err(e) => {
            sink.message(Level::Error, &e);
            return 1;
        }
    };
    let (metrics, engine_sink) =
        match crate::metrics::Metrics::around(output.metrics.as_ref(), sink.clone()) {
            Ok(m) => m,
            Err(e) => {
                sink.message(Level::Error, &e);
                return 1;
            }
        };
    let (result, profiled) = crate::profile::run_bench_profiled(profiler, engine_sink, cfg, &stop);
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            let code = e.report(&*sink);
            return code;
        }
    };
    let code = report_bench(prefix, &sink, &result, &output, json, profiled);
    if let Some(m) = metrics {
        m.finish(Some(&result));
    }
    code
}

/// pgbench's report of a finished run, the profiles, `--json`, the self-check; the exit status.
pub(crate) fn report_bench(
    prefix: &str,
    sink: &StderrSink,
    result: &pgrig_engine::result::RunResult,
    output: &OutputOptions,
    json: Option<JsonOut>,
    profiled: Option<crate::profile::ProfileOutcome>,
) -> i32 {
    if result.config.exit_on_abort && result.aborted_clients > 0 {
        sink.message(Level::Error, "Run was aborted due to an error in thread 0");
        return 2;
    }
    let doc = pgrig_engine::document::of(result);
    let report = crate::report::render(&doc, output.percentiles);
    if sink.json_stdout {
        // standard output carries only the JSON
        let _ = std::io::stderr().lock().write_all(report.as_bytes());
    } else {
        sink.stdout(&report);
    }
    // pgrig's self-check. Invoked as `pgbench`, stderr holds only what pgbench prints, so
    // the warnings go to the JSON result alone (the run document's `self_check`).
    let mut code = 0;
    if let (Some(p), Some(done)) = (&output.profile, profiled) {
        match done {
            Ok(written) => {
                for l in crate::profile::written_lines(&p.dir, &written) {
                    sink.message(Level::Info, &l);
                }
            }
            Err(e) => {
                sink.message(Level::Error, &e);
                code = 1;
            }
        }
    }
    if let Some(json) = json {
        if let Err(e) = json.write(&doc) {
            sink.message(Level::Error, &e);
            code = 1;
        }
    }
    // Invoked as `pgbench`, stderr holds only what pgbench prints: the self-check warnings are
    // in the JSON alone (`self_check.warnings`).
    if prefix != "pgbench" {
        for w in &doc.self_check.warnings {
            sink.message(Level::Warning, w);
        }
    }
    if doc.interrupted {
        // What a shell reports for a program ended by SIGINT, after the report of what ran.
        sink.message(
            Level::Error,
            "interrupted (Ctrl-C): the results above cover the transactions completed before it",
        );
        return 130;
    }
    if doc.aborted_clients > 0 {
        sink.message(
            Level::Error,
            "Run was aborted; the above results are incomplete.",
        );
        return 2;
    }
    code
}

/// `--profile`: perf on the server (and pgrig) from before the benchmark's connections on.
fn start_profile(
    opts: Option<&args::ProfileOptions>,
    cfg: &BenchConfig,
) -> Result<Option<crate::profile::Profiler>, String> {
    let Some(opts) = opts else {
        return Ok(None);
    };
    let postmaster = crate::profile::bench_postmaster(opts, &cfg.conn)?;
    crate::profile::Profiler::start(&opts.dir, postmaster, opts.client).map(Some)
}
