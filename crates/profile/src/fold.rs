//! `perf script` output narrowed to a process tree (`keep_tree`) and folded into stacks with
//! inferno's perf collapser (kernel frames kept, one line per distinct stack of a process name).

use std::collections::HashSet;
use std::io::{BufRead, Write};

use crate::error::ProfileError;
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

/// Copies the samples of `roots` and of the processes they (and their children) fork from
/// `perf script --show-task-events` output: a `PERF_RECORD_FORK(pid:tid):(ppid:ptid)` line
/// whose parent is kept adds the child (with `children`); other task events are dropped.
pub(crate) fn keep_tree(
    input: impl BufRead,
    roots: &[u32],
    children: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut tree: HashSet<u32> = roots.iter().copied().collect();
    let mut keep = false;
    for line in input.lines() {
        let line = line?;
        if line.is_empty() || line.starts_with(char::is_whitespace) {
            if keep {
                writeln!(out, "{line}")?;
            }
            continue;
        }
        if let Some(fork) = line.split_once("PERF_RECORD_FORK(").map(|(_, f)| f) {
            if let Some((child, parent)) = fork_pids(fork) {
                if children && tree.contains(&parent) {
                    tree.insert(child);
                }
            }
            keep = false;
        } else if line.contains("PERF_RECORD_") {
            keep = false;
        } else {
            keep = sample_pid(&line).is_some_and(|p| tree.contains(&p));
            if keep {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

/// `12:12):(10:10)` → (12, 10).
fn fork_pids(s: &str) -> Option<(u32, u32)> {
    let (child, rest) = s.split_once(':')?;
    let parent = rest.split_once(":(")?.1.split_once(':')?.0;
    Some((child.parse().ok()?, parent.parse().ok()?))
}

/// The pid of a sample's header line `COMM PID/TID TIME:` (COMM may hold spaces).
fn sample_pid(header: &str) -> Option<u32> {
    header
        .split_whitespace()
        .filter_map(|t| t.split_once('/'))
        .find_map(|(p, t)| t.parse::<u32>().ok().and(p.parse().ok()))
}

/// Folds the text `perf script` printed.
pub(crate) fn fold(perf_script: impl std::io::BufRead) -> Result<String, ProfileError> {
    let mut out = Vec::new();
    // inferno asserts on input it does not expect: that is an error here, not a crash
    let folded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Folder::from(Options::default()).collapse(perf_script, &mut out)
    }))
    .map_err(|_| {
        ProfileError::Render("folding perf's samples: unexpected `perf script` output".into())
    })?;
    folded.map_err(|e| ProfileError::Render(format!("folding perf's samples: {e}")))?;
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
        let script = "postgres 100/100 1.000001: cpu-clock:ppp: \n\
            \t  aaaa heapgettup+0x1 (/usr/bin/postgres)\n\
            \t  bbbb ExecScan+0x2 (/usr/bin/postgres)\n\n\
            postgres 100/100 1.000002: cpu-clock:ppp: \n\
            \t  aaaa heapgettup+0x1 (/usr/bin/postgres)\n\
            \t  bbbb ExecScan+0x2 (/usr/bin/postgres)\n\n";
        let folded = fold(script.as_bytes()).unwrap();
        assert_eq!(folded.trim(), "postgres;ExecScan;heapgettup 2");
        assert_eq!(count_samples(&folded), 2);
    }

    #[test]
    fn only_the_roots_and_what_they_fork_are_kept() {
        let script = "postgres 10/10 1.0: PERF_RECORD_FORK(12:12):(10:10)\n\
            other 20/20 1.1: PERF_RECORD_FORK(21:21):(20:20)\n\
            postgres 12/12 1.2: cpu-clock:ppp: \n\
            \t  aaaa heap_getnextslot+0x1 (/usr/bin/postgres)\n\n\
            postgres 21/21 1.3: cpu-clock:ppp: \n\
            \t  aaaa elsewhere+0x1 (/usr/bin/postgres)\n\n\
            my app 10/11 1.4: cpu-clock:ppp: \n\
            \t  bbbb PostmasterMain+0x2 (/usr/bin/postgres)\n\n";
        let mut kept = Vec::new();
        keep_tree(script.as_bytes(), &[10], false, &mut kept).unwrap();
        let alone = fold(kept.as_slice()).unwrap();
        assert!(!alone.contains("heap_getnextslot"), "{alone}");
        let mut kept = Vec::new();
        keep_tree(script.as_bytes(), &[10], true, &mut kept).unwrap();
        let folded = fold(kept.as_slice()).unwrap();
        assert!(folded.contains("postgres;heap_getnextslot 1"), "{folded}");
        // inferno writes a name's spaces as underscores
        assert!(folded.contains("my_app;PostmasterMain 1"), "{folded}");
        assert!(!folded.contains("elsewhere"), "{folded}");
    }

    #[test]
    fn merged_profiles_sum_the_counts_of_each_stack() {
        let m = merge(["a;b 2\na;c 1\n", "a;b 3\n"]);
        assert_eq!(m, "a;b 5\na;c 1\n");
    }
}
