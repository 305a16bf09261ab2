//! Writing the report: the HTML file and the SVG directory, created private (0600 files, 0700
//! directory) like every file pgrig writes that holds results.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use crate::error::ReportError;
use crate::Report;

fn write_private(path: &Path, text: &str) -> Result<(), ReportError> {
    let out = |source| ReportError::Output {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(out)?;
    f.write_all(text.as_bytes()).map_err(out)
}

/// Writes the page to `path`.
pub fn write_html(r: &Report, path: &Path) -> Result<(), ReportError> {
    write_private(path, &r.html)
}

/// Writes every chart as `DIR/ID.svg` (creating `DIR`); returns the files written.
pub fn write_svgs(r: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, ReportError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| ReportError::Output {
            path: dir.to_path_buf(),
            source,
        })?;
    let mut out = Vec::new();
    for (id, svg) in &r.svgs {
        let p = dir.join(format!("{id}.svg"));
        write_private(&p, svg)?;
        out.push(p);
    }
    Ok(out)
}
