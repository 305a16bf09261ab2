//! `pgrig results list|summary|show|export`: reads the results store. `export --format json` writes an
//! array of run objects (`study`, `point`, `repetition`, `round`, `tps`, `transactions`,
//! `latency_ms`, `client_cpu_time`, `client_run_queue_wait`, `relation_sizes`, ...); `--format csv` one flat row per run.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use serde_json::Value;

use pgrig_results::{query_summary, summary, Store};
use pgrig_study::StudyError;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig results",
    about = "List, show and export the runs in a results store"
)]
struct ResultsArgs {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// One line per stored run.
    List {
        /// Results store: a SQLite file or postgresql://… URL.
        #[arg(long, default_value = "pgrig.db")]
        store: String,
        /// Only runs of this study (by name).
        #[arg(long)]
        study: Option<String>,
    },
    /// The table per point that `pgrig study` prints at the end (for query studies with
    /// speedup and efficiency against parallel degree 0).
    Summary {
        /// Results store: a SQLite file or postgresql://… URL.
        #[arg(long, default_value = "pgrig.db")]
        store: String,
        /// Only runs of this study (by name).
        #[arg(long)]
        study: Option<String>,
    },
    /// Everything stored about one run (JSON): result, provenance, series, histogram.
    Show {
        /// The run id (see `results list`).
        id: i64,
        /// Results store: a SQLite file or postgresql://… URL.
        #[arg(long, default_value = "pgrig.db")]
        store: String,
    },
    /// A stored run's profile as a flame graph (SVG), or its folded stacks.
    Flame {
        /// The run id (see `results list`).
        id: i64,
        /// Results store: a SQLite file or postgresql://… URL.
        #[arg(long, default_value = "pgrig.db")]
        store: String,
        /// The client's (pgrig's) profile instead of the server's.
        #[arg(long)]
        client: bool,
        /// Write the folded stacks instead of the SVG.
        #[arg(long)]
        folded: bool,
        /// Write to FILE instead of standard output.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// All runs (or one study's) as JSON or CSV.
    Export {
        /// Results store: a SQLite file or postgresql://… URL.
        #[arg(long, default_value = "pgrig.db")]
        store: String,
        #[arg(long)]
        study: Option<String>,
        /// json or csv
        #[arg(long, default_value = "json")]
        format: String,
        /// Write to FILE instead of standard output.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
}

pub fn main(args: &[String]) -> i32 {
    let a: ResultsArgs = match pgrig_cli::own_args::parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match run(a.cmd) {
        Ok(()) => 0,
        Err(e) => {
            err(&format!(
                "pgrig: error: {}\n",
                pgrig_wire::mask_passwords(&e.to_string())
            ));
            1
        }
    }
}

fn run(cmd: Cmd) -> Result<(), StudyError> {
    match cmd {
        Cmd::List { store, study } => {
            let mut s = Store::open_existing(&store)?;
            let rows = s.list(study.as_deref())?;
            let mut text = format!(
                "{:>5}  {:<16} {:<10} {:>4} {:>5} {:>12}  {:<24}  point\n",
                "id", "study", "target", "rep", "round", "tps", "finished"
            );
            for r in rows {
                let point: Value = serde_json::from_str(&r.point).unwrap_or(Value::Null);
                text.push_str(&format!(
                    "{:>5}  {:<16} {:<10} {:>4} {:>5} {:>12.1}  {:<24}  {}\n",
                    r.id,
                    r.study,
                    r.target,
                    r.repetition,
                    r.round,
                    r.tps,
                    r.finished_at,
                    summary::point_label(&point)
                ));
            }
            out(&text)
        }
        Cmd::Summary { store, study } => {
            let mut s = Store::open_existing(&store)?;
            let docs = s.export(study.as_deref())?;
            out(&format!(
                "{}{}",
                summary::points_table(&docs),
                query_summary::table(&docs)
            ))
        }
        Cmd::Show { id, store } => {
            let mut s = Store::open_existing(&store)?;
            match s.show(id)? {
                Some(mut v) => {
                    pgrig_results::profiles::summarise(&mut v, id);
                    out(&(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"))
                }
                None => Err(StudyError::Other(format!(
                    "no run with id {id} in \"{store}\""
                ))),
            }
        }
        Cmd::Flame {
            id,
            store,
            client,
            folded,
            output,
        } => {
            let text = flame(&store, id, client, folded)?;
            to_output(output, &text)
        }
        Cmd::Export {
            store,
            study,
            format,
            output,
        } => {
            let mut s = Store::open_existing(&store)?;
            let docs = s.export(study.as_deref())?;
            let text = match format.as_str() {
                "json" => {
                    serde_json::to_string_pretty(&Value::Array(docs)).unwrap_or_default() + "\n"
                }
                "csv" => pgrig_results::export::csv(&docs),
                o => {
                    return Err(StudyError::Other(format!(
                        "invalid --format \"{o}\" (expected json or csv)"
                    )))
                }
            };
            to_output(output, &text)
        }
    }
}

/// `-o FILE` (private) or standard output.
fn to_output(output: Option<PathBuf>, text: &str) -> Result<(), StudyError> {
    match output {
        Some(p) => write_private(&p, text).map_err(|e| {
            StudyError::Other(format!(
                "could not write \"{}\": {}",
                p.display(),
                pgrig_wire::strerror(&e)
            ))
        }),
        None => out(text),
    }
}

/// `results flame`: the stored profile of run `id` drawn (or its folded stacks).
fn flame(store: &str, id: i64, client: bool, folded: bool) -> Result<String, StudyError> {
    let mut s = Store::open_existing(store)?;
    let run = s
        .show(id)?
        .ok_or_else(|| StudyError::Other(format!("no run with id {id} in \"{store}\"")))?;
    let which = if client { "client" } else { "server" };
    let stacks =
        pgrig_results::profiles::stored(&run, which).ok_or_else(|| {
            StudyError::Other(format!(
            "run {id} has no {which} profile (profile a study's runs with `[collect] profile = \
             true`{})",
            if client { " and `profile_client = true`" } else { "" }
        ))
        })?;
    if folded {
        return Ok(stacks.to_string());
    }
    let title = format!("{which} profile of run {id}");
    pgrig_profile::flame_svg(stacks, &title).map_err(|e| StudyError::Other(e.to_string()))
}

/// Writes to standard output: a closed pipe (`| head`) ends the output quietly; any other
/// failure (a full device) is an error, so a result that was not written fails the command.
pub(crate) fn out(text: &str) -> Result<(), StudyError> {
    match pgrig_cli::sink::write_stdout(text) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(StudyError::Other(format!(
            "could not write to standard output: {}",
            pgrig_wire::strerror(&e)
        ))),
    }
}

/// Writes an export file: private (0600), never through a link planted at the name.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    pgrig_outfile::write(path, text.as_bytes())
}

/// Writes to standard error; nothing to do when that fails.
pub(crate) fn err(text: &str) {
    pgrig_cli::sink::err(text);
}
