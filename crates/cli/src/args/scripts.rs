//! Script selection options: `NAME@WEIGHT` splitting, builtin-name lookup by prefix, the builtin
//! list (`-b list`), and reading `-f` files (`-` = stdin) with pgbench's messages.
//!
//! Builtin names and descriptions are resolved through [`builtin_catalog`] only, so the table can
//! later come from `pgrig_script::builtin` without touching the callers.

use std::io::Read;

/// pgbench's `MAX_SCRIPTS`.
pub const MAX_SCRIPTS: usize = 128;

/// `(name, description)` of every builtin script, in pgbench's order.
pub fn builtin_catalog() -> &'static [(&'static str, &'static str)] {
    &[
        ("tpcb-like", "<builtin: TPC-B (sort of)>"),
        ("simple-update", "<builtin: simple update>"),
        ("select-only", "<builtin: select only>"),
    ]
}

/// What `listAvailableScripts()` prints (to stderr), one entry per line, blank line at the end.
pub fn builtin_list_lines() -> Vec<String> {
    let mut lines = vec!["Available builtin scripts:".to_string()];
    for (name, desc) in builtin_catalog() {
        lines.push(format!("{name:>15}: {desc}"));
    }
    lines.push(String::new());
    lines
}

/// The full builtin name for a prefix, or the error lines pgbench prints (message + list).
/// `err` formats an error message with the program prefix.
pub fn find_builtin(
    prefix: &str,
    err: &dyn Fn(&str) -> String,
) -> Result<&'static str, Vec<String>> {
    let found: Vec<&str> = builtin_catalog()
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| name.starts_with(prefix))
        .collect();
    let first = match found.len() {
        1 => return Ok(found[0]),
        0 => err(&format!("no builtin script found for name \"{prefix}\"")),
        n => err(&format!(
            "ambiguous builtin name: {n} builtin scripts found for prefix \"{prefix}\""
        )),
    };
    let mut lines = vec![first];
    lines.extend(builtin_list_lines());
    Err(lines)
}

/// `parseScriptWeight()`: split at the last `@`; the weight is a `strtol` over the whole rest,
/// in 0..=INT_MAX. Returns the script part and the weight, or the error message.
pub fn parse_weight(option: &str) -> Result<(String, i64), String> {
    let Some(at) = option.rfind('@') else {
        return Ok((option.to_string(), 1));
    };
    let spec = &option[at + 1..];
    let r = super::numeric::strtol(spec);
    if r.erange || r.end == 0 || r.end != spec.len() {
        return Err(format!("invalid weight specification: {}", &option[at..]));
    }
    if r.value > i64::from(i32::MAX) || r.value < 0 {
        return Err(format!(
            "weight specification out of range (0 .. {}): {}",
            i32::MAX,
            r.value
        ));
    }
    Ok((option[..at].to_string(), r.value))
}

pub use pgrig_wire::strerror;

/// Reads a `-f` script: `-` is stdin. Like pgbench, which reads the file into a C string, the
/// script ends at its first NUL byte; bytes that are not UTF-8 are kept as they are
/// (`pgrig_script::bytes`), so the server gets the file's bytes.
pub fn read_script_file(path: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("could not read file \"{path}\": {}", strerror(&e)))?;
    } else {
        use std::os::unix::ffi::OsStrExt;
        let os_path = std::ffi::OsStr::from_bytes(&pgrig_script::bytes::encode(path)).to_owned();
        let mut file = std::fs::File::open(os_path)
            .map_err(|e| format!("could not open file \"{path}\": {}", strerror(&e)))?;
        file.read_to_end(&mut bytes)
            .map_err(|e| format!("could not read file \"{path}\": {}", strerror(&e)))?;
    }
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    Ok(pgrig_script::bytes::decode(&bytes).into_owned())
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
