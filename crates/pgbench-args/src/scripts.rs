//! Script selection options: `NAME@WEIGHT` and builtin names resolved through
//! `pgrig_script::builtin` (the one catalogue and weight parser) with pgbench's messages, and
//! reading `-f` files (`-` = stdin, `pgrig_script::file`) with pgbench's messages.

/// pgbench's `MAX_SCRIPTS`.
pub const MAX_SCRIPTS: usize = 128;

/// What `listAvailableScripts()` prints (to stderr), one entry per line, blank line at the end.
pub fn builtin_list_lines() -> Vec<String> {
    pgrig_script::builtin::list_text()
        .lines()
        .map(String::from)
        .collect()
}

/// The full builtin name for a prefix, or the error lines pgbench prints (message + list).
/// `err` formats an error message with the program prefix.
pub fn find_builtin(
    prefix: &str,
    err: &dyn Fn(&str) -> String,
) -> Result<&'static str, Vec<String>> {
    match pgrig_script::builtin::lookup(prefix) {
        Ok(b) => Ok(b.name),
        Err(e) => {
            let mut lines = vec![err(&e.to_string())];
            lines.extend(builtin_list_lines());
            Err(lines)
        }
    }
}

/// `parseScriptWeight()`: the script part and the weight, or the error message.
pub fn parse_weight(option: &str) -> Result<(String, i64), String> {
    pgrig_script::builtin::parse_weight(option)
        .map(|(name, weight)| (name.to_string(), weight))
        .map_err(|e| e.to_string())
}

pub use pgrig_wire::strerror;

/// Reads a `-f` script (`-` is stdin) through `pgrig_script::file`, with pgbench's messages.
pub fn read_script_file(path: &str) -> Result<String, String> {
    use pgrig_script::file::{self, ReadError};
    let read = if path == "-" {
        file::read_stdin()
    } else {
        file::read_path(&file::path_of(path))
    };
    read.map_err(|e| match e {
        ReadError::Open(e) => format!("could not open file \"{path}\": {}", strerror(&e)),
        ReadError::Read(e) => format!("could not read file \"{path}\": {}", strerror(&e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(m: &str) -> String {
        m.to_string()
    }

    #[test]
    fn weight_splits_at_the_last_at_sign() {
        assert_eq!(parse_weight("a@b@3"), Ok(("a@b".into(), 3)));
        assert_eq!(parse_weight("x"), Ok(("x".into(), 1)));
        assert_eq!(parse_weight("x@ 4"), Ok(("x".into(), 4)));
        assert_eq!(
            parse_weight("x@"),
            Err("invalid weight specification: @".into())
        );
        assert_eq!(
            parse_weight("x@-1"),
            Err("weight specification out of range (0 .. 2147483647): -1".into())
        );
    }

    #[test]
    fn builtin_prefixes_resolve_or_list() {
        assert_eq!(find_builtin("tpcb", &plain), Ok("tpcb-like"));
        assert_eq!(find_builtin("se", &plain), Ok("select-only"));
        let err = find_builtin("s", &plain).unwrap_err();
        assert_eq!(
            err[0],
            "ambiguous builtin name: 2 builtin scripts found for prefix \"s\""
        );
        assert_eq!(err[1], "Available builtin scripts:");
        assert_eq!(err.last().map(String::as_str), Some(""));
    }
}
