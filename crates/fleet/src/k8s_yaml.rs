//! The YAML text of `pgrig k8s manifest`'s objects (built as JSON values): block style, every
//! string double-quoted with JSON's escapes (which are YAML's) plus `\u` escapes for what YAML
//! does not allow raw or reads as a line break (DEL, C1 controls, U+2028/2029, U+FEFF,
//! U+FFFE/FFFF), and multi-line text — a ConfigMap's script — as a literal block scalar
//! (`|2`, with `-`/`+` chomping) that reads back byte for byte; text a literal block cannot
//! carry exactly (a carriage return, a non-printable character) stays double-quoted.

use serde_json::Value;

/// `v` as block-style YAML at `indent` spaces.
pub fn yaml(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push_str(&format!("{pad}{}:", key(k)));
                out.push_str(&nested(v, indent));
            }
        }
        Value::Array(items) => {
            for v in items {
                out.push_str(&format!("{pad}-"));
                out.push_str(&nested(v, indent));
            }
        }
        scalar => out.push_str(&format!("{pad}{}\n", self::scalar(scalar))),
    }
    out
}

/// A mapping key: plain when it is a simple name (`app.kubernetes.io/name`), else quoted.
fn key(k: &str) -> String {
    let plain = k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    if plain {
        k.to_string()
    } else {
        quoted(k)
    }
}

/// A value after `key:` or `-`: a scalar on the same line, a collection below, indented.
fn nested(v: &Value, indent: usize) -> String {
    match v {
        Value::Object(m) if !m.is_empty() => format!("\n{}", yaml(v, indent + 2)),
        Value::Array(a) if !a.is_empty() => format!("\n{}", yaml(v, indent + 2)),
        Value::Object(_) => " {}\n".into(),
        Value::Array(_) => " []\n".into(),
        Value::String(s) => block(s, indent + 2).unwrap_or_else(|| format!(" {}\n", quoted(s))),
        scalar => format!(" {}\n", self::scalar(scalar)),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => quoted(s),
        other => other.to_string(),
    }
}

/// Characters a YAML reader refuses raw, or reads as a line break, in a double-quoted scalar.
fn escaped_in_quotes(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// `s` double-quoted: JSON's escapes, and `\uXXXX` for [`escaped_in_quotes`].
pub fn quoted(s: &str) -> String {
    let json = Value::String(s.to_string()).to_string();
    if !json.chars().any(escaped_in_quotes) {
        return json;
    }
    json.chars()
        .map(|c| {
            if escaped_in_quotes(c) {
                format!("\\u{:04x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Whether `c` may stand raw in a literal block and read back as itself.
fn literal_safe(c: char) -> bool {
    c == '\t' || c == '\n' || (' '..='~').contains(&c) || (c >= '\u{a0}' && !escaped_in_quotes(c))
}

/// `s` as a literal block scalar whose lines sit at `indent` spaces (the indentation indicator
/// says so, so a first line starting with spaces is content), or `None` when a literal block
/// cannot carry it exactly: a single line, no visible character, or a character that is not
/// [`literal_safe`] (`\r` would be read as a line break).
fn block(s: &str, indent: usize) -> Option<String> {
    if !s.contains('\n') || s.trim().is_empty() || !s.chars().all(literal_safe) {
        return None;
    }
    let body = s.trim_end_matches('\n');
    let chomp = match s.len() - body.len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let pad = " ".repeat(indent);
    let mut out = format!(" |2{chomp}\n");
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    // kept trailing line breaks beyond the body's last: empty lines
    for _ in 1..(s.len() - body.len()) {
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn multi_line_text_is_a_literal_block_with_its_chomping() {
        let v = json!({"data": {"a.lua": "  x\n\n\ty\n"}});
        assert_eq!(yaml(&v, 0), "data:\n  a.lua: |2\n      x\n\n    \ty\n");
        let v = json!({"k": "x\ny"});
        assert_eq!(yaml(&v, 0), "k: |2-\n  x\n  y\n");
        let v = json!({"k": "x\n\n\n"});
        assert_eq!(yaml(&v, 0), "k: |2+\n  x\n\n\n");
    }

    #[test]
    fn what_a_block_cannot_carry_is_quoted_and_escaped() {
        assert_eq!(yaml(&json!({"k": "a\r\nb"}), 0), "k: \"a\\r\\nb\"\n");
        assert_eq!(
            yaml(&json!({"k": "a\u{2028}b\u{7f}"}), 0),
            "k: \"a\\u2028b\\u007f\"\n"
        );
        assert_eq!(yaml(&json!(["x"]), 0), "- \"x\"\n");
    }
}
