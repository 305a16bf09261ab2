//! Flame graphs as SVG with inferno: one profile, or the difference between two (frames coloured
//! by how their share changed from the first profile to the second).

use crate::error::ProfileError;
use inferno::flamegraph::{self, Options};

/// A flame graph of folded stacks.
pub fn flame_svg(folded: &str, title: &str) -> Result<String, ProfileError> {
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    render(&mut opts, folded)
}

/// A differential flame graph: the shape of `after`, red where a frame's share grew since
/// `before`, blue where it shrank.
pub fn diff_svg(before: &str, after: &str, title: &str) -> Result<String, ProfileError> {
    let mut merged = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options {
            normalize: true,
            ..Default::default()
        },
        before.as_bytes(),
        after.as_bytes(),
        &mut merged,
    )
    .map_err(|e| ProfileError::Render(e.to_string()))?;
    let merged = String::from_utf8(merged).map_err(|e| ProfileError::Render(e.to_string()))?;
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    render(&mut opts, &merged)
}

fn render(opts: &mut Options, folded: &str) -> Result<String, ProfileError> {
    if folded.trim().is_empty() {
        return Err(ProfileError::Render("no stacks to draw".into()));
    }
    let mut out = Vec::new();
    flamegraph::from_lines(opts, folded.lines(), &mut out)
        .map_err(|e| ProfileError::Render(e.to_string()))?;
    String::from_utf8(out).map_err(|e| ProfileError::Render(e.to_string()))
}
