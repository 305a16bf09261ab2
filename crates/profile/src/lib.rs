//! Profiles of PostgreSQL's processes (or pgrig's own) during a run: `perf record -g` on a set of
//! processes and the children they start (`record`), the samples folded into stacks (`fold`), and
//! flame graphs, plain or differential, rendered as SVG (`svg`). Errors say what to install or
//! change (`error`); a profile without samples is an error, never an empty result.

mod error;
mod fold;
mod record;
mod svg;

pub use error::ProfileError;
pub use fold::merge;
pub use record::{perf_binary, Recording};
pub use svg::{diff_svg, flame_svg};

/// Folded stacks of one profiled set of processes: `frame;frame;... COUNT` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// One line per distinct stack, root frame first, its sample count last.
    pub folded: String,
    /// Samples in total (the sum of the counts).
    pub samples: u64,
}

impl Profile {
    /// A profile from folded stacks (a stored one); counts summed from the lines.
    pub fn from_folded(folded: String) -> Profile {
        let samples = fold::count_samples(&folded);
        Profile { folded, samples }
    }

    /// Writes `DIR/NAME.folded` and `DIR/NAME.svg` (created 0600; the directory is created if
    /// missing).
    pub fn write(
        &self,
        dir: &std::path::Path,
        name: &str,
        title: &str,
    ) -> Result<(), ProfileError> {
        pgrig_outfile::create_dir(dir).map_err(|e| ProfileError::io(dir, e))?;
        let svg = flame_svg(&self.folded, title)?;
        write_private(&dir.join(format!("{name}.folded")), self.folded.as_bytes())?;
        write_private(&dir.join(format!("{name}.svg")), svg.as_bytes())
    }
}

/// Creates or replaces `path` with mode 0600 (results are private), never through a link
/// planted at the name.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> Result<(), ProfileError> {
    pgrig_outfile::write(path, bytes).map_err(|e| ProfileError::io(path, e))
}
