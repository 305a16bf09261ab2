//! libpq `keyword=value` connection strings: whitespace-separated pairs, optional spaces around
//! `=`, single-quoted values with `\'` and `\\` escapes, backslash escapes in unquoted values.

use crate::error::Error;

/// True if `s` is a connection string (URI or `keyword=value`) rather than a plain database name,
/// by libpq's rule.
pub fn is_connection_string(s: &str) -> bool {
    super::uri::has_uri_prefix(s) || s.contains('=')
}

/// Parses a `keyword=value` string into pairs (keywords are not validated here).
pub fn parse(s: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(Error::config(format!(
                "missing \"=\" after \"{key}\" in connection info string"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => {
                        return Err(Error::config(
                            "unterminated quoted string in connection info string",
                        ))
                    }
                    Some('\\') => match chars.next() {
                        Some(c) => value.push(c),
                        None => {
                            return Err(Error::config(
                                "unterminated quoted string in connection info string",
                            ))
                        }
                    },
                    Some('\'') => break,
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &str) -> Vec<(String, String)> {
        parse(s).unwrap()
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn plain_pairs_with_spaces_around_equals() {
        assert_eq!(
            pairs("  host=localhost port = 5433\tdbname= bench "),
            vec![
                p("host", "localhost"),
                p("port", "5433"),
                p("dbname", "bench")
            ]
        );
    }

    #[test]
    fn quoted_values_keep_spaces_and_unescape() {
        assert_eq!(
            pairs(r"dbname='my db' password='it\'s \\ ok' options='-c a=b'"),
            vec![
                p("dbname", "my db"),
                p("password", r"it's \ ok"),
                p("options", "-c a=b")
            ]
        );
    }

    #[test]
    fn empty_values_are_allowed() {
        assert_eq!(pairs("host='' port="), vec![p("host", ""), p("port", "")]);
    }

    #[test]
    fn unquoted_backslash_escapes_next_char() {
        assert_eq!(pairs(r"password=a\ b"), vec![p("password", "a b")]);
    }

    #[test]
    fn errors_read_like_libpq() {
        assert_eq!(
            parse("host").unwrap_err().to_string(),
            "missing \"=\" after \"host\" in connection info string"
        );
        assert_eq!(
            parse("host x").unwrap_err().to_string(),
            "missing \"=\" after \"host\" in connection info string"
        );
        assert_eq!(
            parse("dbname='abc").unwrap_err().to_string(),
            "unterminated quoted string in connection info string"
        );
    }

    #[test]
    fn detects_connection_strings() {
        assert!(is_connection_string("host=x"));
        assert!(is_connection_string("postgresql://x"));
        assert!(is_connection_string("postgres://"));
        assert!(!is_connection_string("bench"));
    }
}
