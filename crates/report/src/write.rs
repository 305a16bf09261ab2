//! Writing the report: the HTML file and the SVG directory, created private (0600 files, 0700
//! directory) like every file pgrig writes that holds results, never through a planted link
//! (`pgrig_outfile`).

use std::path::Path;

use crate::error::ReportError;
use crate::Report;

fn write_private(path: &Path, text: &str) -> Result<(), ReportError> {
    pgrig_outfile::write(path, text.as_bytes()).map_err(|source| ReportError::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes the page to `path`.
pub fn write_html(r: &Report, path: &Path) -> Result<(), ReportError> {
    write_private(path, &r.html)
}

/// Writes every chart as `DIR/ID.svg` (creating `DIR`); returns the files written.
pub fn write_svgs(r: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, ReportError> {
    pgrig_outfile::create_dir(dir).map_err(|source| ReportError::Output {
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
