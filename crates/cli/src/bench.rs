//! `pgrig bench` (and the `pgbench` link): parse pgbench's command line, run the benchmark or the
//! initialisation, print pgbench's report, exit with pgbench's status. Adds the client self-check.

use std::io::Write;
use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, ScriptSource};
use pgrig_engine::result::RunResult;
use pgrig_engine::sink::{Level, Sink};
use pgrig_engine::StopHandle;

use crate::args::{self, Action};
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
            println!("{prefix} (pgrig) {}", env!("CARGO_PKG_VERSION"));
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
                eprint!("-- {}: {}\n{}\n", b.name, b.desc, b.script);
                0
            }
            Err(e) => {
                eprintln!("{prefix}: error: {e}");
                1
            }
        },
        Action::Init(cfg) => {
            let sink = StderrSink::simple(prefix);
            match pgrig_engine::init::run_init(&cfg, &sink) {
                Ok(()) => 0,
                Err(e) => {
                    for (level, l) in &e.lines {
                        sink.message(*level, l);
                    }
                    e.exit_code
                }
            }
        }
        Action::Bench(cfg) => run_bench(prefix, cfg),
    }
}

fn run_bench(prefix: &str, cfg: BenchConfig) -> i32 {
    let sink = Arc::new(StderrSink {
        prog: prefix.into(),
        max_tries: cfg.max_tries,
        rate: cfg.rate.is_some(),
        latency_limit: cfg.latency_limit_us.is_some(),
        progress_timestamp: cfg.progress_timestamp,
        json_stdout: cfg.json.as_deref() == Some("-"),
    });
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    let result = match pgrig_engine::run_bench(cfg.clone(), sink.clone(), &stop) {
        Ok(r) => r,
        Err(e) => {
            for (level, l) in &e.lines {
                sink.message(*level, l);
            }
            return e.exit_code;
        }
    };
    if cfg.exit_on_abort && result.aborted_clients > 0 {
        sink.message(Level::Error, "Run was aborted due to an error in thread 0");
        return 2;
    }
    let report = crate::report::render(&result);
    if sink.json_stdout {
        // standard output carries only the JSON
        let _ = std::io::stderr().lock().write_all(report.as_bytes());
    } else {
        sink.stdout(&report);
    }
    // pgrig's self-check. Invoked as `pgbench`, stderr holds only what pgbench prints, so
    // the warnings go to the JSON result alone.
    let warnings = self_check(&result);
    let mut code = 0;
    if let Some(path) = &cfg.json {
        let mut doc = crate::json::render(&result);
        doc["client_warnings"] = serde_json::json!(warnings);
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if path == "-" {
            sink.stdout(&format!("{text}\n"));
        } else if let Err(e) = std::fs::write(path, text + "\n") {
            sink.message(
                Level::Error,
                &format!("could not write JSON result to \"{path}\": {e}"),
            );
            code = 1;
        }
    }
    if prefix != "pgbench" {
        for w in &warnings {
            sink.message(Level::Warning, w);
        }
    }
    if crate::interrupt::interrupted() {
        // What a shell reports for a program ended by SIGINT, after the report of what ran.
        sink.message(
            Level::Error,
            "interrupted (Ctrl-C): the results above cover the transactions completed before it",
        );
        return 130;
    }
    if result.aborted_clients > 0 {
        sink.message(
            Level::Error,
            "Run was aborted; the above results are incomplete.",
        );
        return 2;
    }
    code
}

/// pgrig's client self-check: warnings when the client, not the server, may have set the pace.
pub fn self_check(r: &RunResult) -> Vec<String> {
    let mut w = Vec::new();
    for (t, c) in r.threads_cpu.iter().enumerate() {
        if c.wall_s >= 0.5 && c.busy() >= 0.9 {
            w.push(format!(
                "client thread {t} was busy {:.0}% of the run ({:.2} s CPU in {:.2} s): the result may be limited by the client, not the server; use more threads (-j) or run the client on another host",
                100.0 * c.busy(),
                c.user_s + c.sys_s,
                c.wall_s
            ));
        }
    }
    let tpcb = r.config.scripts.iter().any(|s| {
        matches!(s, ScriptSource::Builtin { name, .. } if name == "tpcb-like" || name == "simple-update")
    }) || r.config.scripts.is_empty();
    if tpcb && r.config.clients as i64 > r.scale {
        w.push(format!(
            "{} clients on scale {}: every TPC-B-like transaction updates one of {} branch rows, so clients queue on row locks and the result measures that contention; use a scale of at least the number of clients",
            r.config.clients, r.scale, r.scale
        ));
    }
    w
}
