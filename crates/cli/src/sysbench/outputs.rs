//! pgrig's own options on sysbench's command line, `--json FILE` (the run document, written
//! through `pgrig_outfile`) and `--store PATH|URL` (the run stored in the results store as a
//! study of its own, `sysbench NAME at T`, so `pgrig results`/`report`/`compare` read it):
//! checked before the run, written after it. Both are pgrig extensions, absent from `--help`'s
//! sysbench sections and from a script's `sysbench.opt`.

use serde_json::{json, Value};

use pgrig_engine::document::RunDocument;
use pgrig_results::single_run::{self, SingleRun};
use pgrig_results::Store;

use super::cmdline::CmdLine;
use super::general::Exit;
use crate::json::JsonOut;

/// Where the run's document goes besides the report.
#[derive(Default)]
pub struct Outputs {
    json: Option<JsonOut>,
    store: Option<String>,
}

impl Outputs {
    /// `--json` and `--store`, checked before anything is measured.
    pub fn read(c: &CmdLine) -> Result<Outputs, Exit> {
        // given without a value (`--json` last on the line) is no file either
        let given = |name| c.given(name).map(|v| v.unwrap_or(""));
        let json = match given("json") {
            None => None,
            Some("-") => {
                return Err(Exit::fatal(
                    "--json -: sysbench's report is on standard output; name a file for the run document",
                ))
            }
            Some("") => return Err(Exit::fatal("--json needs a file name")),
            Some(path) => Some(JsonOut::open(path).map_err(|e| Exit::fatal(format!("--json: {e}")))?),
        };
        let store = match given("store") {
            None => None,
            Some("") => return Err(Exit::fatal("--store needs a path or a postgresql:// URL")),
            Some(s) => {
                if pgrig_wire::mask_passwords(s) != s {
                    return Err(Exit::fatal(
                        "--store: a password in the store's URL would be kept in the process arguments; use PGPASSWORD or ~/.pgpass",
                    ));
                }
                Store::check(s).map_err(|e| Exit::fatal(format!("--store: {e}")))?;
                Some(s.to_string())
            }
        };
        Ok(Outputs { json, store })
    }

    /// Whether a document is wanted at all.
    pub fn wanted(&self) -> bool {
        self.json.is_some() || self.store.is_some()
    }

    /// Writes `doc` to `--json` and `--store`; `args`: the command line (passwords dropped
    /// before it is stored). Returns 1 when one could not be written (said on standard output
    /// as sysbench's FATAL lines), else 0.
    pub fn write(self, doc: &RunDocument, name: &str, args: &[String]) -> i32 {
        let mut code = 0;
        if let Some(json) = self.json {
            if let Err(e) = json.write(doc) {
                println!("FATAL: {e}");
                code = 1;
            }
        }
        if let Some(store) = &self.store {
            match save(store, name, args, doc) {
                Ok(id) => eprintln!("pgrig: run stored as run {id} in {store}"),
                Err(e) => {
                    println!("FATAL: --store: {e}");
                    code = 1;
                }
            }
        }
        code
    }
}

/// The command line as stored: no `--pgsql-password`.
fn command_text(args: &[String]) -> String {
    let kept: Vec<&str> = (args.iter())
        .filter(|a| !a.starts_with("--pgsql-password") && !a.starts_with("--pgsql_password"))
        .map(String::as_str)
        .collect();
    format!("pgrig sysbench {}", kept.join(" "))
}

/// Stores `doc` as the one run of a study of its own; the stored run's id.
fn save(store: &str, name: &str, args: &[String], doc: &RunDocument) -> Result<i64, String> {
    let text = command_text(args);
    let run = SingleRun {
        name: &format!("sysbench {name}"),
        file: "(sysbench)",
        text: &text,
        started_unix: doc.started_at_unix_s,
        duration_s: doc.duration_s,
        target: doc.options.host.as_deref().unwrap_or_default(),
        tps: doc.tps,
        point: json!(doc.workload_options),
        document: serde_json::to_value(doc).unwrap_or(Value::Null),
        fields: Vec::new(),
        provenance: json!({"command": text}),
        series: serde_json::to_value(&doc.series).unwrap_or(Value::Null),
        histogram: serde_json::to_value(&doc.latency_histogram).unwrap_or(Value::Null),
    };
    single_run::save(store, run).map_err(|e| e.to_string())
}
