//! `perf script` output folded into stacks with inferno's perf collapser (kernel frames kept,
//! one line per distinct stack of a process name).

use crate::error::ProfileError;
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

/// Folds the text `perf script` printed.
pub(crate) fn fold(perf_script: impl std::io::BufRead) -> Result<String, ProfileError> {
    let mut out = Vec::new();
    Folder::from(Options::default())
        .collapse(perf_script, &mut out)
        .map_err(|e| ProfileError::Render(format!("folding perf's samples: {e}")))?;
    String::from_utf8(out).map_err(|e| ProfileError::Render(e.to_string()))
}

/// The sum of the counts ending the folded lines.
pub(crate) fn count_samples(folded: &str) -> u64 {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_script_samples_fold_into_counted_stacks() {
        let script = "postgres 100/100 1.000001: \n\
            \t  aaaa heapgettup+0x1 (/usr/bin/postgres)\n\
            \t  bbbb ExecScan+0x2 (/usr/bin/postgres)\n\n\
            postgres 100/100 1.000002: \n\
            \t  aaaa heapgettup+0x1 (/usr/bin/postgres)\n\
            \t  bbbb ExecScan+0x2 (/usr/bin/postgres)\n\n";
        let folded = fold(script.as_bytes()).unwrap();
        assert_eq!(folded.trim(), "postgres;ExecScan;heapgettup 2");
        assert_eq!(count_samples(&folded), 2);
    }
}
