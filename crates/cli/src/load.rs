//! `pgrig load --csv DIR [--schema FILE]`: a directory of CSV files (`NAME.csv` → table `NAME`)
//! loaded outside a study, as a study's `[dataset] csv` loads it (`pgrig_study::csv_load`:
//! read by pgrig, COPY FROM STDIN, several tables at once, a bar per file on a terminal), after
//! the schema file, then ANALYZE. A bad row names the file and line; exit status 1.

use clap::Parser;

use pgrig_engine::StopHandle;
use pgrig_study::csv_spec::{plain_set, set_text_option, CsvOptions};
use pgrig_study::dataset::{Dataset, SetupFile};
use pgrig_study::target::Endpoint;

use crate::sink::StderrSink;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig load",
    about = "Load a directory of CSV files (NAME.csv into table NAME) through COPY FROM STDIN, then ANALYZE",
    disable_help_flag = true
)]
struct LoadArgs {
    /// The directory of NAME.csv files.
    #[arg(long)]
    csv: std::path::PathBuf,
    /// A SQL file creating the tables, run first.
    #[arg(long)]
    schema: Option<std::path::PathBuf>,
    /// The files start with a header line.
    #[arg(long)]
    header: bool,
    /// COPY's NULL string (default: an unquoted empty field).
    #[arg(long)]
    null: Option<String>,
    /// The field delimiter (one character; default ,).
    #[arg(long)]
    delimiter: Option<String>,
    /// The quote character (default ").
    #[arg(long)]
    quote: Option<String>,
    /// The escape character inside quotes (default: the quote).
    #[arg(long)]
    escape: Option<String>,
    /// The files' encoding (default: the client's).
    #[arg(long)]
    encoding: Option<String>,
    /// Files loaded at once (default: 2..4 from the cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// A postgresql:// URI or a conninfo string (else libpq's defaults and PG* variables).
    #[arg(long)]
    target: Option<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// Runs `pgrig load`; `args[0]` is `load`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let argv = std::iter::once("pgrig load".to_string()).chain(args.iter().skip(1).cloned());
    let a: LoadArgs = match crate::own_args::parse(argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    match load(&a, &stop) {
        Ok(()) => 0,
        Err(_) if stop.requested() => {
            eprintln!("pgrig: loading canceled by Ctrl-C");
            130
        }
        Err(e) => {
            eprintln!("pgrig: error: {}", pgrig_wire::mask_passwords(&e));
            1
        }
    }
}

fn load(a: &LoadArgs, stop: &StopHandle) -> Result<(), String> {
    let mut options = CsvOptions {
        header: a.header.then_some(true),
        ..CsvOptions::default()
    };
    let given = [
        ("null", &a.null),
        ("delimiter", &a.delimiter),
        ("quote", &a.quote),
        ("escape", &a.escape),
        ("encoding", &a.encoding),
    ];
    for (key, value) in given {
        if let Some(v) = value {
            set_text_option(&mut options, key, v).map_err(|m| {
                format!(
                    "--{key}: {}",
                    m.replace(&format!("dataset csv `{key}`"), "the value")
                )
            })?;
        }
    }
    if a.jobs > 64 {
        return Err("--jobs must be from 1 to 64".into());
    }
    let set = plain_set(&a.csv, &options, a.jobs)?;
    let schema = match &a.schema {
        Some(p) => Some(SetupFile::read(p).map_err(|e| e.to_string())?),
        None => None,
    };
    let dataset = Dataset {
        init: None,
        schema,
        csv: Some(set),
        setup: Vec::new(),
    };
    let endpoint = Endpoint {
        conninfo: a.target.clone().unwrap_or_default(),
    };
    let sink = StderrSink::simple("pgrig");
    let t0 = std::time::Instant::now();
    dataset
        .create(&endpoint, &sink, stop)
        .map_err(|e| e.to_string())?;
    let files = dataset.csv.as_ref().map_or(0, |c| c.files.len());
    println!(
        "loaded {files} file(s) and analyzed in {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
