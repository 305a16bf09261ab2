//! Input files: a JSON run document (`pgrig bench/run --json`, `pgrig results show`), a JSON array
//! of them (`pgrig results export`, grouped into studies by their `study` key), or pgbench's own
//! `-l` logs (see `pgbench_log`). What a file is comes from its content, not its name.

use std::path::Path;

use serde_json::Value;

use crate::error::ReportError;
use crate::input::{doc, query};
use crate::model::{Run, Study};

/// What one file contributed.
pub enum Loaded {
    Runs(Vec<Run>),
    Studies(Vec<Study>),
}

pub fn read(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|e| ReportError::Read {
        file: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Reads one input file: JSON, or else (the text is returned) a pgbench log.
pub fn load(path: &Path) -> Result<Result<Loaded, String>, ReportError> {
    let text = read(path)?;
    let name = path.display().to_string();
    let first = text.trim_start().chars().next();
    if !matches!(first, Some('{') | Some('[')) {
        return Ok(Err(text));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| ReportError::Input {
        file: name.clone(),
        line: e.line(),
        message: format!("invalid JSON at column {}: {e}", e.column()),
    })?;
    json(&name, &v).map(Ok)
}

fn not_a_run(file: &str, what: &str) -> ReportError {
    ReportError::Input {
        file: file.to_string(),
        line: 1,
        message: format!(
            "{what} is not a pgrig run document (expected the output of --json, \
             \"pgrig results show\" or \"pgrig results export\")"
        ),
    }
}

fn json(name: &str, v: &Value) -> Result<Loaded, ReportError> {
    match v {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(ReportError::Empty(format!(
                    "{name}: the array holds no runs"
                )));
            }
            let mut studies: Vec<Study> = Vec::new();
            let mut docs: Vec<Vec<Value>> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if !doc::is_run(item) {
                    return Err(not_a_run(name, &format!("element {}", i + 1)));
                }
                let id = match item["run_id"].as_i64() {
                    Some(id) => format!("run {id}"),
                    None => format!("{name}[{}]", i + 1),
                };
                let study = item["study"].as_str().unwrap_or(name).to_string();
                let run = doc::run(id, item);
                match studies.iter().position(|s| s.name == study) {
                    Some(s) => {
                        studies[s].runs.push(run);
                        docs[s].push(item.clone());
                    }
                    None => {
                        studies.push(Study {
                            name: study,
                            runs: vec![run],
                            ..Study::default()
                        });
                        docs.push(vec![item.clone()]);
                    }
                }
            }
            for (s, d) in studies.iter_mut().zip(&docs) {
                s.query = query::points(d);
            }
            Ok(Loaded::Studies(studies))
        }
        o if doc::is_run(o) => Ok(Loaded::Runs(vec![doc::run(short_name(name), o)])),
        _ => Err(not_a_run(name, "the document")),
    }
}

/// The file name without its directory, for labels.
pub fn short_name(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string())
}
