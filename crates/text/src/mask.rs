//! Password masking for anything pgrig shows or stores: [`mask_passwords`] replaces the password
//! of every `scheme://user:password@` URI and every `password=value` / `sslpassword=value`
//! (conninfo or URI query form, quoted or not) in a text with `****`, wherever they stand in it —
//! error messages, study files, comments. A value ends where libpq ends it (a conninfo value at
//! whitespace not escaped by a backslash or at its closing quote, a URI query value at `&`), so
//! the whole password libpq would read is masked. Over-masking is preferred to a leak.

/// What a masked password is shown as.
pub const MASK: &str = "****";

/// `text` with every password of a URI's user info and every `password=` value replaced by
/// `****` (`postgresql://bob:****@h/db`, `host=h password=**** user=bob`).
pub fn mask_passwords(text: &str) -> String {
    mask_keywords(&mask_userinfo(text))
}

/// Characters that end a URI written in running text (or in a TOML/JSON string).
fn ends_token(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`')
}

/// `scheme://user:secret@host` → `scheme://user:****@host`, for every `://` in `text`.
fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail.find(ends_token).unwrap_or(tail.len());
        let token = &tail[..end];
        // the user info ends at the last '@' of the token (a password may hold '/' or '@')
        match (token.rfind('@'), token.find(':')) {
            (Some(at), Some(colon)) if colon < at && !token[..colon].contains(['/', '?']) => {
                out.push_str(&token[..=colon]);
                out.push_str(MASK);
                out.push_str(&token[at..]);
            }
            _ => out.push_str(token),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `password = 'a b'`, `sslpassword=x`, `?password=x&...` → the value replaced by `****`.
fn mask_keywords(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some(found) = lower[pos..].find("password") {
        let key_end = pos + found + "password".len();
        let after_key = &text[key_end..];
        let gap = after_key.len() - after_key.trim_start().len();
        let Some(value) = after_key.trim_start().strip_prefix('=') else {
            out.push_str(&text[pos..key_end]);
            pos = key_end;
            continue;
        };
        let lead = value.len() - value.trim_start().len();
        let value = value.trim_start();
        let in_query = text[..pos + found].ends_with(['?', '&']);
        let value_len = match value.strip_prefix('\'') {
            Some(quoted) if !in_query => 1 + quoted_len(quoted),
            _ if in_query => query_value_len(value),
            _ => unquoted_len(value),
        };
        let value_start = key_end + gap + 1 + lead;
        out.push_str(&text[pos..value_start]);
        if value_len > 0 {
            out.push_str(MASK);
        }
        pos = value_start + value_len;
    }
    out.push_str(&text[pos..]);
    out
}

/// Length of an unquoted conninfo value as libpq reads it: up to the first whitespace that is
/// not escaped by a backslash (`Se\ CrEt` is one value). In running text a `"` after the first
/// character and before whitespace or the end closes the string the value was quoted in (a TOML
/// string, a quoted message) and ends it too; any other `"` is part of the value.
fn unquoted_len(s: &str) -> usize {
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                // a run of backslashes escapes what follows, whatever its parity: in a TOML
                // basic string libpq's `\ ` is written `\\ ` (over-masking is preferred)
                while chars.next_if(|&(_, n)| n == '\\').is_some() {}
                chars.next();
            }
            c if c.is_whitespace() => return i,
            '"' if i > 0 && chars.peek().is_none_or(|&(_, n)| n.is_whitespace()) => return i,
            _ => {}
        }
    }
    s.len()
}

/// Length of a URI query value (`?password=x&...`): up to the `&` that ends it as libpq splits
/// the query, or whitespace or a `"` ending the URI in running text.
fn query_value_len(s: &str) -> usize {
    s.find(|c: char| c.is_whitespace() || matches!(c, '&' | '"'))
        .unwrap_or(s.len())
}

/// Length of a single-quoted conninfo value after its opening quote, closing quote included
/// (`\'` and `\\` escapes; an unterminated value runs to the end).
fn quoted_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' => return i + 1,
            _ => {}
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_user_info_is_masked() {
        assert_eq!(
            mask_passwords("postgresql://bob:hunter2@h:5432/db"),
            "postgresql://bob:****@h:5432/db"
        );
        assert_eq!(
            mask_passwords("invalid URI: \"postgres://bob:pa/ss@w@[::1/db\""),
            "invalid URI: \"postgres://bob:****@[::1/db\""
        );
        assert_eq!(
            mask_passwords("# was postgresql://a:b@x/y, now postgresql://c@z/w"),
            "# was postgresql://a:****@x/y, now postgresql://c@z/w"
        );
        assert_eq!(
            mask_passwords("postgresql://h:5432/db"),
            "postgresql://h:5432/db"
        );
        assert_eq!(mask_passwords("no url here"), "no url here");
    }

    #[test]
    fn keyword_values_are_masked() {
        assert_eq!(
            mask_passwords("host=h password='a b\\'c' user=bob"),
            "host=h password=**** user=bob"
        );
        assert_eq!(
            mask_passwords("host=h password = x user=bob sslpassword=y"),
            "host=h password = **** user=bob sslpassword=****"
        );
        assert_eq!(
            mask_passwords("postgresql://h/db?password=x&sslmode=require"),
            "postgresql://h/db?password=****&sslmode=require"
        );
        assert_eq!(
            mask_passwords("url = \"host=h PASSWORD=s3\"\n"),
            "url = \"host=h PASSWORD=****\"\n"
        );
        assert_eq!(
            mask_passwords("password is required"),
            "password is required"
        );
        assert_eq!(mask_passwords("password="), "password=");
    }

    #[test]
    fn unquoted_values_end_where_libpq_ends_them() {
        // issue 21: `password=Se\ CrEt` was stored as `password=**** CrEt`
        assert_eq!(
            mask_passwords("host=h password=Se\\ CrEt user=bob"),
            "host=h password=**** user=bob"
        );
        assert_eq!(mask_passwords("password=x\\"), "password=****");
        // the same connection string inside a TOML basic string
        assert_eq!(
            mask_passwords("url = \"host=h password=Se\\\\ CrEt\"\n"),
            "url = \"host=h password=****\"\n"
        );
        // a quote or an ampersand inside an unquoted value is part of it
        assert_eq!(
            mask_passwords("password=ab'cd&ef\"gh user=u"),
            "password=**** user=u"
        );
        // the quotes of the text around a connection string still end it
        assert_eq!(
            mask_passwords("url = \"host=h password=s3\"\nx = 1"),
            "url = \"host=h password=****\"\nx = 1"
        );
        assert_eq!(
            mask_passwords("target \"host=h password=s3\": refused"),
            "target \"host=h password=**** refused"
        );
        assert_eq!(
            mask_passwords("host=h password=\":aa user=u"),
            "host=h password=**** user=u"
        );
        // a URI query value ends at '&'
        assert_eq!(
            mask_passwords("postgresql:///db?password=a'b&user=u"),
            "postgresql:///db?password=****&user=u"
        );
    }
}
