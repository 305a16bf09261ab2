//! `pgrig study FILE`: runs (or resumes) a study file into the results store, with a line per
//! finished run (progress and ETA) and a table per point at the end. `--dry-run` prints the
//! plan without running anything.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;

use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_study::{overrides, plan, spec, summary, Control, Reporter, Store, StudyError};

use pgrig_cli::sink::StderrSink;

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
            eprint!("{}", self.inner.format(level, text));
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
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
        eprintln!("pgrig: {text}");
    }
    fn run_done(&self, done: usize, total: usize, eta: Option<std::time::Duration>, line: &str) {
        let eta = match eta {
            Some(d) if done < total => format!(", ETA {}", eta_text(d)),
            _ => String::new(),
        };
        eprintln!("[{done}/{total}{eta}] {line}");
    }
}

pub fn main(args: &[String]) -> i32 {
    let a = match StudyArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    match run(&a) {
        Ok(code) => code,
        Err(StudyError::Interrupted) => {
            eprintln!("pgrig: {}", StudyError::Interrupted);
            130
        }
        Err(e) => {
            eprintln!(
                "pgrig: error: {}",
                pgrig_wire::mask_passwords(&e.to_string())
            );
            1
        }
    }
}

fn run(a: &StudyArgs) -> Result<i32, StudyError> {
    let mut study = spec::load(&a.file)?;
    if !a.sets.is_empty() {
        let sets = a
            .sets
            .iter()
            .map(|s| overrides::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let text = overrides::apply(&study.file, &study.text, &sets)?;
        let label = format!("{} with --set {}", study.file, a.sets.join(" --set "));
        // positions in the merged text mean nothing to the user: name the overrides instead
        let unplaced = |e: StudyError| match e {
            StudyError::Invalid { message, .. } => StudyError::Other(format!("{label}: {message}")),
            e => e,
        };
        let file = study.file.clone();
        study = spec::parse(&file, &text).map_err(unplaced)?;
        plan::expand(&study).map_err(unplaced)?;
    }
    let base_dir = plan::base_dir(&a.file);
    if a.dry_run {
        // everything a run would check before it starts: keys, values, URLs, files
        let p = plan::expand(&study)?;
        pgrig_study::dataset::Dataset::resolve(&study, &p, &base_dir)?;
        plan::check_files(&study, &p, &base_dir)?;
        println!(
            "study \"{}\": {} target(s), {} point(s) x {} repetition(s) = {} run(s)",
            study.spec.name,
            p.targets.len(),
            p.points.len(),
            p.repetitions,
            p.runs.len()
        );
        for pt in &p.points {
            println!(
                "  point {}: {} ({} round(s))",
                pt.index + 1,
                summary::point_label(&pgrig_study::record::point_json(pt)),
                pt.workload.rounds
            );
        }
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
    let outcome = pgrig_study::run_study(&study, &base_dir, &mut store, sink, &Terminal, &control)?;
    let docs = store.export_study(outcome.study_id)?;
    print!("{}", summary::points_table(&docs));
    let shown = pgrig_wire::mask_passwords(&a.store);
    println!(
        "{} run(s) stored in {shown} ({} this time); see \"pgrig results export --store {shown}\"",
        outcome.already_stored + outcome.ran,
        outcome.ran,
    );
    let aborted = docs
        .iter()
        .any(|d| d["aborted_clients"].as_u64().unwrap_or(0) > 0);
    if aborted {
        eprintln!("pgrig: warning: some runs had aborted clients; their results are incomplete");
        return Ok(2);
    }
    Ok(0)
}
