//! `pgrig report [--store PATH] [STUDY | RUN-ID | FILE ...] [-o report.html] [--svg DIR]
//! [--metric NAME] [--compare A B]`: charts as one self-contained HTML page (and SVG files) through
//! `pgrig-report`; also the `--report FILE` of `pgrig run` and `pgrig study`.

use std::path::{Path, PathBuf};

use clap::Parser;

use pgrig_report::{model::Model, Options, Report, ReportError};

use crate::report_compare;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig report",
    about = "Charts of studies and runs as one self-contained HTML page (and SVG files)"
)]
struct ReportArgs {
    /// Study names or run ids from the store, or files: --json documents of pgrig bench/run,
    /// `pgrig results show/export` JSON, pgbench -l logs (per-transaction or aggregated).
    /// None: every study in the store.
    inputs: Vec<String>,
    /// Results store: a SQLite file or postgresql://… URL.
    #[arg(long, default_value = "pgrig.db")]
    store: String,
    /// The HTML file to write.
    #[arg(long, short = 'o', default_value = "report.html")]
    output: PathBuf,
    /// Also write every chart as DIR/CHART.svg.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// The headline metric of matrix and round charts: tps, p50, p90, p95, p99, p99_9, mean,
    /// max, client_cpu_time, client_run_queue_wait, server_cpu, wal_bytes_per_tx, checkpoints,
    /// retries, failed.
    #[arg(long, default_value = "tps")]
    metric: String,
    /// Put the comparison of two selections in the page (as `pgrig compare A B` takes them:
    /// run ids, STUDY, STUDY[key=value,...]). Without it, a single study that sweeps one key
    /// over two values gets the comparison of those two points.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    compare: Option<Vec<String>>,
}

/// Fails early (before any reading) when the page cannot be written where asked.
fn check_output(path: &Path) -> Result<(), ReportError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(ReportError::Output {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
        });
    }
    Ok(())
}

fn write(r: &Report, output: &Path, svg: Option<&Path>) -> Result<(), ReportError> {
    pgrig_report::write_html(r, output)?;
    let mut line = format!(
        "pgrig: wrote {} ({} chart(s), {} kB)",
        output.display(),
        r.svgs.len(),
        r.html.len().div_ceil(1024)
    );
    if let Some(dir) = svg {
        let files = pgrig_report::write_svgs(r, dir)?;
        line.push_str(&format!(
            "; {} SVG file(s) in {}",
            files.len(),
            dir.display()
        ));
    }
    eprintln!("{line}");
    Ok(())
}

fn run(a: &ReportArgs) -> Result<(), ReportError> {
    let metric = pgrig_report::metric::find(&a.metric).map_err(ReportError::Usage)?;
    check_output(&a.output)?;
    if let Some(dir) = a.svg.as_deref().filter(|d| d.exists() && !d.is_dir()) {
        return Err(ReportError::Output {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ),
        });
    }
    let model = pgrig_report::input::load(&a.store, &a.inputs)?;
    let compare_html = match a.compare.as_deref() {
        Some([x, y]) => Some(report_compare::explicit(&a.store, x, y)?),
        _ => report_compare::automatic(&a.store, &model),
    };
    let opts = Options {
        metric,
        compare_html,
    };
    let r = pgrig_report::build(&model, &opts)?;
    write(&r, &a.output, a.svg.as_deref())
}

pub fn main(args: &[String]) -> i32 {
    let a = match ReportArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    match run(&a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

/// `pgrig run --report FILE`: the report of one run from its `--json` document.
pub fn of_run_document(doc: &pgrig_results::RunDocument, output: &Path) -> Result<(), ReportError> {
    check_output(output)?;
    let r = pgrig_report::build(
        &run_model(doc, "pgrig run", Vec::new()),
        &Options::default(),
    )?;
    write(&r, output, None)
}

/// `pgrig bench --profile DIR`: the run's page with its server flame graph, `DIR/report.html`
/// (`profiles`: folded stacks by whose, as the profile files hold them). Prints nothing: the
/// caller names the file.
pub fn of_profiled_run(
    doc: &pgrig_results::RunDocument,
    profiles: Vec<(String, String)>,
    output: &Path,
) -> Result<(), ReportError> {
    check_output(output)?;
    let model = run_model(doc, "pgrig bench --profile", profiles);
    let r = pgrig_report::build(&model, &Options::default())?;
    pgrig_report::write_html(&r, output)
}

/// One run's model, named by what ran (a native workload, else the scripts).
fn run_model(
    doc: &pgrig_results::RunDocument,
    source: &str,
    profiles: Vec<(String, String)>,
) -> Model {
    let name = match &doc.workload {
        Some(w) => w.clone(),
        None => (doc.scripts.iter().map(|s| s.desc.as_str()))
            .collect::<Vec<_>>()
            .join(" + "),
    };
    let id = if name.is_empty() {
        "this run".into()
    } else {
        name
    };
    let mut run = pgrig_report::input::doc::run(id, &serde_json::to_value(doc).unwrap_or_default());
    run.profiles = profiles;
    Model {
        sources: vec![source.into()],
        loose: vec![run],
        ..Model::default()
    }
}

/// `pgrig study --report FILE`: the report of a study (every stored version of its text).
pub fn of_study(store: &str, name: &str, output: &Path) -> Result<(), ReportError> {
    check_output(output)?;
    let model = pgrig_report::input::load(store, &[name.to_string()])?;
    let opts = Options {
        compare_html: report_compare::automatic(store, &model),
        ..Options::default()
    };
    let r = pgrig_report::build(&model, &opts)?;
    write(&r, output, None)
}
