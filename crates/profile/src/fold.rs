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

/// Several profiles' folded stacks as one (counts of the same stack summed), sorted by stack.
pub fn merge<'a>(profiles: impl IntoIterator<Item = &'a str>) -> String {
    let mut sums: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for line in profiles.into_iter().flat_map(str::lines) {
        if let Some((stack, n)) = line.rsplit_once(' ') {
            if let Ok(n) = n.trim().parse::<u64>() {
                *sums.entry(stack).or_default() += n;
            }
        }
    }
    sums.iter().map(|(s, n)| format!("{s} {n}\n")).collect()
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

    #[test]
    fn merged_profiles_sum_the_counts_of_each_stack() {
        let m = merge(["a;b 2\na;c 1\n", "a;b 3\n"]);
        assert_eq!(m, "a;b 5\na;c 1\n");
    }
}
