//! What `pgrig bench` (and a segmented run's coordinator) prints after a run: pgbench's report,
//! the profiles written, `--json`, the self-check's warnings, and pgbench's exit status.

use std::io::Write;

use pgrig_engine::sink::{Level, Sink};

use crate::args::OutputOptions;
use crate::json::JsonOut;
use crate::sink::StderrSink;

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
                match profile_page(&doc, &p.dir, &written) {
                    Ok(page) => sink.message(
                        Level::Info,
                        &format!(
                            "profile: {} (the run's charts and flame graph)",
                            page.display()
                        ),
                    ),
                    Err(e) => {
                        sink.message(Level::Error, &e);
                        code = 1;
                    }
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

/// `--profile DIR`'s page: `DIR/report.html`, from the run document and the folded stacks just
/// written.
fn profile_page(
    doc: &pgrig_results::RunDocument,
    dir: &std::path::Path,
    written: &[crate::profile::Written],
) -> Result<std::path::PathBuf, String> {
    let mut profiles = Vec::new();
    for w in written {
        let path = dir.join(format!("{}.folded", w.name));
        let folded = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: {}", path.display(), pgrig_wire::strerror(&e)))?;
        profiles.push((w.name.to_string(), folded));
    }
    let page = dir.join("report.html");
    crate::html_report::of_profiled_run(doc, profiles, &page).map_err(|e| e.to_string())?;
    Ok(page)
}
