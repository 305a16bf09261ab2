//! `--json`: the run document (`pgrig_engine::document`, fields in docs/run-document.md) as
//! pretty JSON, to a file or standard output. The destination is checked before the run, so one
//! that cannot be written is found before anything is measured; the file is written after it
//! (`pgrig_outfile`: private, never through a link); a write that fails then is an error the
//! caller turns into the exit status.

use pgrig_engine::document::RunDocument;

/// The document as `--json` writes it.
pub fn text(doc: &RunDocument) -> String {
    serde_json::to_string_pretty(doc).unwrap_or_default() + "\n"
}

/// Where `--json` goes, checked before the run.
pub enum JsonOut {
    Stdout,
    File { path: String },
}

impl JsonOut {
    /// Checks that `path` (`-` = standard output) can take the document
    /// ([`pgrig_outfile::check`]: nothing there but a link or a file of the user's own, and a
    /// directory that takes new files), before anything is measured.
    pub fn open(path: &str) -> Result<JsonOut, String> {
        if path == "-" {
            return Ok(JsonOut::Stdout);
        }
        pgrig_outfile::check(std::path::Path::new(path)).map_err(|e| {
            format!(
                "could not open JSON result file \"{path}\": {}",
                pgrig_wire::strerror(&e)
            )
        })?;
        Ok(JsonOut::File { path: path.into() })
    }

    /// Whether the document goes to standard output (which then carries nothing else).
    pub fn is_stdout(&self) -> bool {
        matches!(self, JsonOut::Stdout)
    }

    /// Writes the document (a file private to the user, written without following links); the
    /// error text when it could not be written.
    pub fn write(self, doc: &RunDocument) -> Result<(), String> {
        let text = text(doc);
        match self {
            JsonOut::Stdout => crate::sink::write_stdout(&text).map_err(|e| {
                format!(
                    "could not write the JSON result to standard output: {}",
                    pgrig_wire::strerror(&e)
                )
            }),
            JsonOut::File { path } => {
                pgrig_outfile::write(std::path::Path::new(&path), text.as_bytes()).map_err(|e| {
                    format!(
                        "could not write JSON result to \"{path}\": {}",
                        pgrig_wire::strerror(&e)
                    )
                })
            }
        }
    }
}
