//! `pgrig study FILE`: runs (or resumes) a study file into the results store, with a line per
//! finished run (progress and ETA) and a table per point at the end. `--dry-run` prints the
//! plan without running anything.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;

use pgrig_engine::sink::{InitProgress, Level, PhaseDisplay, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_study::{
    check, overrides, plan, spec, summary, Checked, Control, Reporter, Store, StudyError,
};

use pgrig_cli::sink::StderrSink;
use pgrig_results::RunView;

use crate::results::{err, out};

#[derive(Parser, Debug)]
#[command(
    name = "pgrig study",
    about = "Run a study file: a matrix of benchmark runs, stored with their provenance"
)]
struct StudyArgs {
    /// The study file (TOML).
    file: PathBuf,
    /// Results store: a SQLite file, or a PostgreSQL database (postgresql://…; schema `pgrig`).
    #[arg(long, default_value = "pgrig.db")]
    store: String,
    /// Override a key of the study file: KEY is a TOML dotted key (workload.transactions,
    /// matrix."settings.synchronous_commit", repetitions), VALUE a TOML value or a bare string.
    /// Repeatable. The overridden study is stored (and resumed) as its own text.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Write an HTML report (charts, see `pgrig report`) of the study to FILE at the end.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Print the plan (points and runs) and exit.
    #[arg(long)]
    dry_run: bool,
    /// Also show the engine's informational messages (initialisation steps, ...).
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// Engine messages: errors and warnings (and with -v everything but progress) to stderr.
struct StudySink {
    inner: StderrSink,
    verbose: bool,
}

impl Sink for StudySink {
    fn message(&self, level: Level, text: &str) {
        let shown = self.verbose
            || matches!(
                level,
                Level::Error | Level::Warning | Level::Detail | Level::Hint
            );
        if shown {
            err(&self.inner.format(level, text));
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
    fn init_progress(&self) -> InitProgress {
        self.inner.init_progress()
    }
    fn phase(&self, label: &str, rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        self.inner.phase(label, rows)
    }
}

struct Terminal;

fn eta_text(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Reporter for Terminal {
    fn info(&self, text: &str) {
        err(&format!("pgrig: {text}\n"));
    }
    fn run_done(&self, done: usize, total: usize, eta: Option<std::time::Duration>, line: &str) {
        let eta = match eta {
            Some(d) if done < total => format!(", ETA {}", eta_text(d)),
            _ => String::new(),
        };
        err(&format!("[{done}/{total}{eta}] {line}\n"));
    }
}

pub fn main(args: &[String]) -> i32 {
    let a: StudyArgs = match pgrig_cli::own_args::parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match run(&a) {
        Ok(code) => code,
        Err(StudyError::Interrupted) => {
            err(&format!("pgrig: {}\n", StudyError::Interrupted));
            130
        }
        Err(e) => {
            err(&format!(
                "pgrig: error: {}\n",
                pgrig_wire::mask_passwords(&e.to_string())
            ));
            1
        }
    }
}

/// The study file with its `--set` overrides applied, checked.
fn load(a: &StudyArgs, base_dir: &std::path::Path) -> Result<Checked, StudyError> {
    let file = spec::load(&a.file)?;
    if a.sets.is_empty() {
        return check(file, base_dir);
    }
    let sets = a
        .sets
        .iter()
        .map(|s| overrides::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let text = overrides::apply(&file.file, &file.text, &sets)?;
    let label = format!("{} with --set {}", file.file, a.sets.join(" --set "));
    spec::parse(&file.file, &text)
        .and_then(|merged| check(merged, base_dir))
        .map_err(|e| placed_or_named(&file, base_dir, &label, e))
}

/// An error of a study merged with `--set`s: positions in the merged text mean nothing to the
/// user, so it is shown where the file has it when the file alone has the same error, else
/// named with the overrides.
fn placed_or_named(
    file: &spec::Study,
    base_dir: &std::path::Path,
    label: &str,
    e: StudyError,
) -> StudyError {
    let StudyError::Invalid { message, .. } = e else {
        return e;
    };
    match check(file.clone(), base_dir) {
        Err(StudyError::Invalid {
            file,
            line,
            column,
            message: same,
        }) if same == message => StudyError::Invalid {
            file,
            line,
            column,
            message,
        },
        _ => StudyError::Other(format!("{label}: {message}")),
    }
}

fn run(a: &StudyArgs) -> Result<i32, StudyError> {
    let base_dir = plan::base_dir(&a.file);
    let checked = load(a, &base_dir)?;
    let (study, p) = (&checked.study, &checked.plan);
    if a.dry_run {
        Store::check(&a.store)?;
        let mut text = format!(
            "study \"{}\": {} target(s), {} point(s) x {} repetition(s) = {} run(s)\n",
            study.spec.name,
            p.targets.len(),
            p.points.len(),
            p.repetitions,
            p.runs.len()
        );
        // `server_version`: which binaries serve each version
        for t in &p.targets {
            if let (Some((major, _)), Some(dir)) = (t.server_version, &t.bin_dir) {
                text.push_str(&format!(
                    "  target \"{}\", PostgreSQL {major}: {dir}\n",
                    t.name
                ));
            }
        }
        for pt in &p.points {
            text.push_str(&format!(
                "  point {}: {} ({} round(s))\n",
                pt.index + 1,
                summary::point_label(&pgrig_study::record::point_json(pt)),
                pt.workload.rounds
            ));
        }
        out(&text)?;
        return Ok(0);
    }
    let mut store = Store::open(&a.store)?;
    let sink: Arc<dyn Sink> = Arc::new(StudySink {
        inner: StderrSink::simple("pgrig"),
        verbose: a.verbose,
    });
    let stop = StopHandle::default();
    pgrig_cli::interrupt::on_interrupt(stop.clone());
    let control = Control {
        stop,
        interrupted: Box::new(pgrig_cli::interrupt::interrupted),
    };
    let outcome = pgrig_study::run_study(&checked, &mut store, sink, &Terminal, &control)?;
    let docs = store.export_study(outcome.study_id)?;
    let shown = pgrig_wire::mask_passwords(&a.store);
    out(&format!(
        "{}{}{} run(s) stored in {shown} ({} this time); see \"pgrig results export --store {shown}\"\n",
        summary::points_table(&docs),
        pgrig_study::query::summary::table(&docs),
        outcome.already_stored + outcome.ran,
        outcome.ran,
    ))?;
    if let Some(path) = &a.report {
        pgrig_cli::html_report::of_study(&a.store, &study.spec.name, path)
            .map_err(|e| StudyError::Other(e.to_string()))?;
    }
    let runs: Vec<RunView> = docs.iter().map(RunView::of).collect();
    let aborted = runs.iter().any(|d| d.aborted_clients.unwrap_or(0.0) > 0.0);
    if aborted {
        err("pgrig: warning: some runs had aborted clients; their results are incomplete\n");
        return Ok(2);
    }
    if runs
        .iter()
        .any(|d| d.queries.iter().any(|q| q.failed() > 0))
    {
        err("pgrig: warning: some query executions failed or timed out; their errors are stored with the runs\n");
        return Ok(2);
    }
    Ok(0)
}
