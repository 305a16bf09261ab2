//! Input files: a JSON run document (`pgrig bench/run --json`, `pgrig results show`), a JSON array
//! of them (`pgrig results export`, grouped into studies by their `study` key), or pgbench's own
//! `-l` logs (see `pgbench_log`). What a file is comes from its content, not its name.

use std::path::Path;

use pgrig_results::RunView;
use serde_json::Value;

use crate::bound;
use crate::error::ReportError;
use crate::input::{doc, query};
use crate::model::{Run, Study};

/// What one file contributed.
pub enum Loaded {
    Runs(Vec<Run>),
    Studies(Vec<Study>),
}

/// Reads an input file: a regular file of at most [`bound::MAX_INPUT_BYTES`]. Opened without
/// blocking, so a FIFO or a device put in a file's place is refused instead of waited on (or
/// read forever); reading a bounded regular file ends.
pub fn read(path: &Path) -> Result<String, ReportError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |message: String| ReportError::Read {
        file: path.display().to_string(),
        message,
    };
    let io = |e: std::io::Error| fail(pgrig_text::strerror(&e));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.len() > bound::MAX_INPUT_BYTES {
        return Err(fail(format!(
            "{} bytes; input files of at most {} bytes are read",
            meta.len(),
            bound::MAX_INPUT_BYTES
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(bound::MAX_INPUT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    String::from_utf8(bytes).map_err(|_| fail("stream did not contain valid UTF-8".into()))
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
                let view = RunView::of(item);
                let id = match view.run_id {
                    Some(id) => format!("run {id}"),
                    None => format!("{name}[{}]", i + 1),
                };
                let study = view.study.clone().unwrap_or_else(|| name.to_string());
                let run = doc::from_view(id, &view);
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
