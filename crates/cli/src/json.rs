//! `--json`: the run document (`pgrig_engine::document`, fields in docs/run-document.md) as
//! pretty JSON, to a file or standard output. The file is opened before the run (created 0600,
//! not yet truncated), so a destination that cannot be written is found before anything is
//! measured; a write that fails afterwards is an error the caller turns into the exit status.

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::os::unix::fs::OpenOptionsExt;

use pgrig_engine::document::RunDocument;

/// The document as `--json` writes it.
pub fn text(doc: &RunDocument) -> String {
    serde_json::to_string_pretty(doc).unwrap_or_default() + "\n"
}

/// Where `--json` goes, opened before the run.
pub enum JsonOut {
    Stdout,
    File {
        path: String,
        file: File,
        /// created by us (removed again when the run fails)
        created: bool,
    },
}

impl JsonOut {
    /// Opens `path` (`-` = standard output) for writing, creating it private to the user.
    pub fn open(path: &str) -> Result<JsonOut, String> {
        if path == "-" {
            return Ok(JsonOut::Stdout);
        }
        let existed = std::fs::symlink_metadata(path).is_ok();
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|e| {
                format!(
                    "could not open JSON result file \"{path}\": {}",
                    pgrig_wire::strerror(&e)
                )
            })?;
        Ok(JsonOut::File {
            path: path.into(),
            file,
            created: !existed,
        })
    }

    /// Whether the document goes to standard output (which then carries nothing else).
    pub fn is_stdout(&self) -> bool {
        matches!(self, JsonOut::Stdout)
    }

    /// Writes the document; the error text when it could not be written.
    pub fn write(self, doc: &RunDocument) -> Result<(), String> {
        let text = text(doc);
        match self {
            JsonOut::Stdout => crate::sink::write_stdout(&text).map_err(|e| {
                format!(
                    "could not write the JSON result to standard output: {}",
                    pgrig_wire::strerror(&e)
                )
            }),
            JsonOut::File { path, mut file, .. } => {
                let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
                let r = if regular {
                    file.set_len(0).and_then(|_| file.rewind())
                } else {
                    Ok(())
                };
                let r = r
                    .and_then(|_| file.write_all(text.as_bytes()))
                    .and_then(|_| file.flush());
                r.map_err(|e| {
                    format!(
                        "could not write JSON result to \"{path}\": {}",
                        pgrig_wire::strerror(&e)
                    )
                })
            }
        }
    }
}

/// The run produced no document: a file created for it goes away again.
pub fn abandon(json: Option<JsonOut>) {
    if let Some(JsonOut::File {
        path,
        created: true,
        ..
    }) = json
    {
        let _ = std::fs::remove_file(path);
    }
}
