//! Values as `postgresql.conf` reads them: PostgreSQL's configuration reader (guc-file.l) takes
//! a single-quoted string in which `''` is a quote and `\` escapes the next character (`\'`,
//! `\\`, `\n`, `\t`, `\b`, `\f`, `\r`, octal `\ooo`; any other character stands for itself). A
//! value is written with both `'` and `\` escaped, so whatever it holds it stays one string:
//! it can neither end early nor start a second setting.

/// `v` as one configuration-file string. A value the user quoted already (`'%d|%p|'`: one
/// complete quoted string, nothing after it) means what the server would read from it; any
/// other value is taken as it is.
pub(crate) fn quote(v: &str) -> String {
    let plain = unquote(v).unwrap_or_else(|| v.to_string());
    let mut out = String::with_capacity(plain.len() + 2);
    out.push('\'');
    for c in plain.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// What the server reads from `v` when `v` is exactly one quoted configuration string; `None`
/// when it is not (no quotes around it, a quote that ends it early, a dangling `\`), or when an
/// octal escape would make a NUL or a byte that is not ASCII.
pub(crate) fn unquote(v: &str) -> Option<String> {
    let inner = v.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut it = inner.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\'' if it.next_if_eq(&'\'').is_some() => out.push('\''),
            '\'' | '\n' => return None,
            '\\' => match it.next()? {
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                d @ '0'..='7' => {
                    let mut n = d.to_digit(8)?;
                    for _ in 0..2 {
                        match it.peek().and_then(|c| c.to_digit(8)) {
                            Some(k) => {
                                n = n * 8 + k;
                                it.next();
                            }
                            None => break,
                        }
                    }
                    let byte = u8::try_from(n & 0xff).ok()?;
                    if byte == 0 || !byte.is_ascii() {
                        return None;
                    }
                    out.push(char::from(byte));
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(quote("200"), "'200'");
        assert_eq!(quote("it's"), "'it''s'");
        assert_eq!(quote("a\\"), "'a\\\\'");
        // the probe: a backslash before the closing quote ended the string early
        assert_eq!(quote("a'b\\' include='/x"), "'a''b\\\\'' include=''/x'");
    }

    #[test]
    fn a_value_quoted_already_means_what_the_server_reads_from_it() {
        assert_eq!(quote("'%d|%p|'"), "'%d|%p|'");
        assert_eq!(unquote("'it''s'").as_deref(), Some("it's"));
        assert_eq!(unquote("'a\\'b'").as_deref(), Some("a'b"));
        assert_eq!(unquote("'a\\\\'").as_deref(), Some("a\\"));
        assert_eq!(unquote("'\\101\\tz'").as_deref(), Some("A\tz"));
        for not_one_string in ["'a' include='/x'", "'a\\'", "'", "'\\0'", "'\\377'", "a'"] {
            assert_eq!(unquote(not_one_string), None, "{not_one_string}");
        }
        assert_eq!(quote("'a' include='/x'"), "'''a'' include=''/x'''");
    }
}
