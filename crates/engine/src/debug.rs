//! `--debug`: pgbench's debugging lines (`client N executing script "..."`, `client N executing
//! \set aid`, `client N preparing P_0`, `client N sending ...`, `client N receiving`, ...). The
//! meta-command texts are built once before the run, and only under `--debug`; elsewhere each
//! line costs one test of the flag.

use pgrig_script::{CommandKind, Script};

use crate::shared::RunShared;
use crate::sink::Level;

/// Per script and command: what pgbench prints after `client N executing ` for a meta-command
/// (its argument words as pgbench keeps them: the name and variable of `\set`, every word of
/// `\sleep`, `\shell` and `\setshell`, the bare name of the others). Empty without `--debug`.
pub(crate) fn meta_texts(scripts: &[Script], debug: bool) -> Vec<Vec<String>> {
    if !debug {
        return Vec::new();
    }
    scripts
        .iter()
        .map(|s| {
            s.commands
                .iter()
                .map(|c| meta_text(&c.kind, &c.first_line))
                .collect()
        })
        .collect()
}

fn meta_text(kind: &CommandKind, text: &str) -> String {
    let mut words: Vec<&str> = text
        .strip_prefix('\\')
        .unwrap_or(text)
        .split_whitespace()
        .filter(|w| *w != "\\")
        .collect();
    if let (CommandKind::Sleep { .. }, [_, n]) = (kind, words.as_slice()) {
        // pgbench splits a unit glued to the number into a word of its own and keeps the
        // number's word whole (`\sleep 10ms` shows as `\sleep 10ms ms`)
        let digits = n.trim_start_matches(['+', '-']);
        let unit = digits.trim_start_matches(|c: char| c.is_ascii_digit());
        if !n.starts_with(':') && unit.len() < digits.len() && !unit.is_empty() {
            words.push(unit);
        }
    }
    let kept = match kind {
        CommandKind::Sql(_) => return String::new(),
        CommandKind::Set { .. } => 2,
        CommandKind::Sleep { .. } | CommandKind::Shell { .. } | CommandKind::SetShell { .. } => {
            words.len()
        }
        _ => 1,
    };
    format!("\\{}", words[..kept.min(words.len())].join(" "))
}

impl RunShared {
    /// One `--debug` line about client `id` (`pgbench: client N TEXT`).
    #[cold]
    pub fn debug_client(&self, id: u32, text: std::fmt::Arguments<'_>) {
        self.msg(Level::Debug, &format!("client {id} {text}"));
    }

    /// `client N executing \CMD ARGS` for meta-command `pc` of `script`.
    #[cold]
    pub fn debug_meta(&self, id: u32, script: usize, pc: usize) {
        self.debug_client(
            id,
            format_args!("executing {}", self.meta_debug[script][pc]),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_texts_keep_pgbench_argument_words() {
        let sleep = CommandKind::Sleep {
            duration: pgrig_script::command::SleepArg::Literal(10),
            unit_us: 1000,
        };
        assert_eq!(meta_text(&sleep, "\\sleep 10ms"), "\\sleep 10ms ms");
        assert_eq!(meta_text(&sleep, "\\sleep 10 ms"), "\\sleep 10 ms");
        assert_eq!(meta_text(&sleep, "\\sleep 3"), "\\sleep 3");
        assert_eq!(meta_text(&CommandKind::EndIf, "\\endif"), "\\endif");
    }
}
