//! `pgrig bench` (and the `pgbench` link): parse pgbench's command line, run the benchmark or the
//! initialisation, print pgbench's report, exit with pgbench's status. Adds the client self-check.

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
    let (metrics, engine_sink) = match crate::metrics::Metrics::around(
        output
            .metrics
            .as_ref()
            .map(|m| (m.addr.as_str(), m.linger_s)),
        sink.clone(),
    ) {
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
    let code = crate::bench_report::report_bench(prefix, &sink, &result, &output, json, profiled);
    if let Some(m) = metrics {
        m.finish(Some(&result));
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
