//! `pgrig compare A B`: parses the command line into `pgrig_compare::Options`, runs the
//! comparison and writes it (terminal table, markdown, JSON or an HTML fragment) to standard
//! output or `-o FILE` (private, 0600). Errors are one clear message and status 1.

use std::path::PathBuf;

use clap::Parser;

use pgrig_compare::render::{self, Format};
use pgrig_compare::{metric, CompareError, Options};

#[derive(Parser, Debug)]
#[command(
    name = "pgrig compare",
    about = "Is the difference between two selections of stored runs real or noise?",
    after_help = after_help()
)]
struct CompareArgs {
    /// First selection: RUN-ID[,RUN-ID...], STUDY, or STUDY[key=value,...] (matrix keys as the
    /// study file names them, plus target and round).
    a: String,
    /// Second selection, the same way; changes are B relative to A.
    b: String,
    /// Results store: a SQLite file or postgresql://… URL.
    #[arg(long, default_value = "pgrig.db")]
    store: String,
    /// Metrics to compare, comma-separated (default: tps, latency and CPU figures the runs record).
    #[arg(long, value_delimiter = ',')]
    metric: Option<Vec<String>>,
    /// text, markdown, json or html (a table fragment)
    #[arg(long, default_value = "text")]
    format: String,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Compare runs of different workloads anyway (with a warning).
    #[arg(long)]
    force: bool,
    /// Instead of the metrics: a differential flame graph (SVG) of the stored server profiles,
    /// B's frames coloured by how their share changed from A (`[collect] profile = true`).
    #[arg(long)]
    flame: bool,
    /// With --flame: the client's (pgrig's) profiles instead of the server's.
    #[arg(long, requires = "flame")]
    client: bool,
}

fn after_help() -> String {
    format!(
        "Examples:\n  pgrig compare 'insert[settings.synchronous_commit=on]' 'insert[settings.synchronous_commit=off]'\n  \
         pgrig compare 'iso[target=a]' 'iso[target=b]' --metric tps,p99\n  pgrig compare 1,3,5,7 2,4,6,8 --format markdown\n\n\
         Metrics:\n{}",
        metric::help()
    )
}

pub fn main(args: &[String]) -> i32 {
    // usage lines say `pgrig compare`, not the bare subcommand
    let argv = std::iter::once("pgrig compare".to_string()).chain(args.iter().skip(1).cloned());
    let a = match CompareArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    match run(a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

fn run(a: CompareArgs) -> Result<(), String> {
    let format = Format::parse(&a.format).ok_or_else(|| {
        format!(
            "invalid --format \"{}\" (expected text, markdown, json or html)",
            a.format
        )
    })?;
    let opts = Options {
        store: a.store,
        a: a.a,
        b: a.b,
        metrics: a.metric,
        force: a.force,
    };
    let text = if a.flame {
        let which = if a.client { "client" } else { "server" };
        pgrig_compare::flame::flame(&opts, which).map_err(|e| e.to_string())?
    } else {
        let c = pgrig_compare::run(&opts).map_err(|e| e.to_string())?;
        render::render(&c, format)
    };
    match a.output {
        Some(p) => write_private(&p, &text).map_err(|e| {
            CompareError::Output {
                path: p.display().to_string(),
                source: e,
            }
            .to_string()
        }),
        None => {
            pgrig_cli::sink::out(&text);
            Ok(())
        }
    }
}

/// Results are private: the file is created 0600, never through a link planted at the name.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    pgrig_outfile::write(path, text.as_bytes())
}
