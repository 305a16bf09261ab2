//! pgbench's built-in scripts (`-b NAME`): exact text and descriptions, prefix lookup with
//! pgbench's messages, the `-b list` and `--show-script` texts, and `NAME@WEIGHT` parsing.

use crate::error::ScriptError;

/// A built-in script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    /// What reports and errors call it, e.g. `<builtin: TPC-B (sort of)>`.
    pub desc: &'static str,
    pub script: &'static str,
}

macro_rules! sets {
    () => {
        "\\set aid random(1, 100000 * :scale)\n\
         \\set bid random(1, 1 * :scale)\n\
         \\set tid random(1, 10 * :scale)\n\
         \\set delta random(-5000, 5000)\n"
    };
}

/// The built-in scripts, in pgbench's order.
pub static BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        desc: "<builtin: TPC-B (sort of)>",
        script: concat!(
            sets!(),
            "BEGIN;\n",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n",
            "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n",
            "END;\n",
        ),
    },
    Builtin {
        name: "simple-update",
        desc: "<builtin: simple update>",
        script: concat!(
            sets!(),
            "BEGIN;\n",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n",
            "END;\n",
        ),
    },
    Builtin {
        name: "select-only",
        desc: "<builtin: select only>",
        script: concat!(
            "\\set aid random(1, 100000 * :scale)\n",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
        ),
    },
];

/// Find a builtin by unique prefix of its name (case-sensitive, like pgbench). The error text is
/// pgbench's (`no builtin script found for name "x"`, `ambiguous builtin name: N builtin scripts
/// found for prefix "x"`); pgbench then prints [`list_text`]. The one catalogue: `pgrig bench -b`,
/// `--show-script`, `pgrig run --workload` and a study's `builtin` all resolve names here.
pub fn lookup(name: &str) -> Result<&'static Builtin, ScriptError> {
    let found: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(ScriptError::message(format!(
            "no builtin script found for name \"{name}\""
        ))),
        many => Err(ScriptError::message(format!(
            "ambiguous builtin name: {} builtin scripts found for prefix \"{name}\"",
            many.len()
        ))),
    }
}

/// The `-b list` text (pgbench prints it to stderr, also after a failed lookup), ending with an
/// empty line.
pub fn list_text() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in &BUILTINS {
        s.push_str(&format!("  {:>13}: {}\n", b.name, b.desc));
    }
    s.push('\n');
    s
}

/// The `--show-script=NAME` text (to stderr): `-- NAME: DESC`, the script, an empty line.
pub fn show_script_text(b: &Builtin) -> String {
    format!("-- {}: {}\n{}\n", b.name, b.desc, b.script)
}

/// Split `NAME@W` (`-b`, `-f`, `pgrig run --workload`, a study's `scripts`) at the last `@` and parse the weight like pgbench (`strtol`, base 10, leading
/// whitespace and sign allowed, nothing after the digits). No `@` => weight 1.
pub fn parse_weight(spec: &str) -> Result<(&str, i64), ScriptError> {
    let Some(at) = spec.rfind('@') else {
        return Ok((spec, 1));
    };
    let invalid = || ScriptError::message(format!("invalid weight specification: {}", &spec[at..]));
    let w = strtol_whole(&spec[at + 1..]).ok_or_else(invalid)?;
    if !(0..=i64::from(i32::MAX)).contains(&w) {
        return Err(ScriptError::message(format!(
            "weight specification out of range (0 .. {}): {w}",
            i32::MAX
        )));
    }
    Ok((&spec[..at], w))
}

/// `strtol(s, &end, 10)` that must consume all of `s`; `None` on no digits, junk or overflow.
fn strtol_whole(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && crate::lexer::is_c_space(c as u8));
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_unique_prefix() {
        assert_eq!(lookup("tpcb").map(|b| b.name), Ok("tpcb-like"));
        assert_eq!(lookup("si").map(|b| b.name), Ok("simple-update"));
        assert_eq!(
            lookup("select-only").map(|b| b.desc),
            Ok("<builtin: select only>")
        );
    }

    #[test]
    fn lookup_errors_use_pgbench_wording() {
        assert_eq!(
            lookup("foo").unwrap_err().to_string(),
            "no builtin script found for name \"foo\""
        );
        assert_eq!(
            lookup("s").unwrap_err().to_string(),
            "ambiguous builtin name: 2 builtin scripts found for prefix \"s\""
        );
        assert_eq!(
            lookup("").unwrap_err().to_string(),
            "ambiguous builtin name: 3 builtin scripts found for prefix \"\""
        );
        assert!(lookup("TPCB").is_err(), "prefix match is case-sensitive");
    }

    #[test]
    fn list_text_matches_pgbench() {
        assert_eq!(
            list_text(),
            "Available builtin scripts:\n      tpcb-like: <builtin: TPC-B (sort of)>\n  simple-update: <builtin: simple update>\n    select-only: <builtin: select only>\n\n"
        );
    }

    #[test]
    fn show_script_ends_with_an_empty_line() {
        let t = show_script_text(&BUILTINS[2]);
        assert!(t.starts_with("-- select-only: <builtin: select only>\n\\set aid"));
        assert!(t.ends_with("WHERE aid = :aid;\n\n"));
    }

    #[test]
    fn weight_splits_at_the_last_at_sign() {
        assert_eq!(parse_weight("a@b@2").unwrap(), ("a@b", 2));
        assert_eq!(parse_weight("x.sql").unwrap(), ("x.sql", 1));
        assert_eq!(parse_weight("x@ 7").unwrap(), ("x", 7));
        assert_eq!(parse_weight("x@+3").unwrap(), ("x", 3));
        assert_eq!(parse_weight("x@010").unwrap(), ("x", 10));
        assert_eq!(parse_weight("x@-0").unwrap(), ("x", 0));
    }

    #[test]
    fn weight_errors_use_pgbench_wording() {
        let e = |s: &str| parse_weight(s).unwrap_err().to_string();
        assert_eq!(e("t@"), "invalid weight specification: @");
        assert_eq!(e("t@0x10"), "invalid weight specification: @0x10");
        assert_eq!(e("t@7 "), "invalid weight specification: @7 ");
        assert_eq!(e("t@ "), "invalid weight specification: @ ");
        assert_eq!(
            e("t@999999999999999999999999"),
            "invalid weight specification: @999999999999999999999999"
        );
        assert_eq!(
            e("t@-1"),
            "weight specification out of range (0 .. 2147483647): -1"
        );
        assert_eq!(
            e("t@2147483648"),
            "weight specification out of range (0 .. 2147483647): 2147483648"
        );
    }
}
