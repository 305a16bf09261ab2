//! Perl's `like($text, qr{...})` for the patterns of pgbench's TAP suites, on `regex-lite`.
//!
//! The suites' patterns are kept in Perl syntax; the differences that matter are translated:
//! - a pattern that is only a negative look-ahead (`(?!vacuuming)`) matches any text in Perl (at
//!   the end of the text the look-ahead holds), so it always matches;
//! - without `(?m)`, a final `$` also matches before a final newline (`^$` accepts "\n");
//! - `\@`, `\"` and other escaped punctuation that is not a regex operator are plain characters;
//! - back-references (`(\d+)/\1`) are matched by trying every text the referenced group matches
//!   at some position as a literal in its place.

use regex_lite::Regex;

/// True if `text` matches the Perl pattern `pat` (inline flags `(?i)`, `(?m)`, `(?s)` in front).
pub fn like(pat: &str, text: &str) -> Result<bool, String> {
    let (flags, body) = split_flags(pat);
    if body.starts_with("(?!") && body.ends_with(')') {
        return Ok(true);
    }
    let body = translate(body, flags.contains('m'));
    if first_backref(&body).is_none() {
        return Ok(compile(&flags, &body)?.is_match(text));
    }
    like_with_backrefs(&flags, &body, text)
}

fn split_flags(pat: &str) -> (String, &str) {
    let mut flags = String::new();
    let mut rest = pat;
    while let Some(r) = rest.strip_prefix("(?") {
        let Some(end) = r.find(')') else { break };
        let f = &r[..end];
        if f.is_empty() || !f.chars().all(|c| "ims".contains(c)) {
            break;
        }
        flags.push_str(f);
        rest = &r[end + 1..];
    }
    (flags, rest)
}

fn compile(flags: &str, body: &str) -> Result<Regex, String> {
    let full = if flags.is_empty() {
        body.to_string()
    } else {
        format!("(?{flags}){body}")
    };
    Regex::new(&full).map_err(|e| format!("pattern /{full}/: {e}"))
}

const OPERATORS: &str = "\\.+*?()|[]{}^$#&-~";

fn translate(body: &str, multiline: bool) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_alphanumeric() || OPERATORS.contains(e) => {
                    out.push('\\');
                    out.push(e);
                }
                Some(e) => out.push(e),
                None => out.push_str("\\\\"),
            },
            '$' if !multiline && chars.peek().is_none() => out.push_str("(?:\n?\\z)"),
            _ => out.push(c),
        }
    }
    out
}

/// The position and number of the first `\N` back-reference.
fn first_backref(body: &str) -> Option<(usize, usize)> {
    let b = body.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            if b[i + 1].is_ascii_digit() && b[i + 1] != b'0' {
                return Some((i, (b[i + 1] - b'0') as usize));
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

/// Spans (open paren, close paren) of the capturing groups, in group-number order.
fn groups(body: &str) -> Vec<(usize, usize)> {
    let b = body.as_bytes();
    let (mut spans, mut stack) = (Vec::new(), Vec::new());
    let (mut i, mut in_class) = (0, false);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => in_class = true,
            b']' => in_class = false,
            b'(' if !in_class => {
                let capturing = b.get(i + 1) != Some(&b'?');
                if capturing {
                    spans.push((i, usize::MAX));
                }
                stack.push(capturing.then(|| spans.len() - 1));
            }
            b')' if !in_class => {
                if let Some(Some(g)) = stack.pop() {
                    spans[g].1 = i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    spans
}

/// Back-references to one outer group (and groups inside it): every text that group matches at
/// some position of `text` is tried as a literal for the group and its references.
fn like_with_backrefs(flags: &str, body: &str, text: &str) -> Result<bool, String> {
    let spans = groups(body);
    let (_, first) = first_backref(body).expect("a back-reference");
    let outer = (0..spans.len())
        .find(|&g| spans[g].0 <= spans[first - 1].0 && spans[first - 1].1 <= spans[g].1)
        .expect("referenced group exists");
    let (open, close) = spans[outer];
    let anchored = compile(flags, &format!("^(?:{})", &body[open + 1..close]))?;
    let mut seen = std::collections::HashSet::new();
    for start in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        let Some(caps) = anchored.captures(&text[start..]) else {
            continue;
        };
        let values: Vec<String> = (0..caps.len())
            .map(|k| caps.get(k).map_or("", |m| m.as_str()).to_string())
            .collect();
        if !seen.insert(values.clone()) {
            continue;
        }
        let candidate = substitute(body, open, close, outer, &values);
        if compile(flags, &candidate)?.is_match(text) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `body` with group `outer` (spanning `open..=close`) replaced by the literal `values[0]` and
/// every `\N` replaced by the literal value of group N (inner groups are `values[N - outer]`).
fn substitute(body: &str, open: usize, close: usize, outer: usize, values: &[String]) -> String {
    let replaced = format!(
        "{}(?:{}){}",
        &body[..open],
        regex_lite::escape(&values[0]),
        &body[close + 1..]
    );
    let mut out = String::new();
    let mut rest = replaced.as_str();
    while let Some((at, n)) = first_backref(rest) {
        out.push_str(&rest[..at]);
        let value = values.get(n - (outer + 1)).map_or("", String::as_str);
        out.push_str(&regex_lite::escape(value));
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

#[test]
fn perl_pattern_semantics() {
    assert!(like("^$", "").unwrap());
    assert!(like("^$", "\n").unwrap());
    assert!(!like("^$", "x\n").unwrap());
    assert!(like("(?i)^$", "").unwrap());
    assert!(like("(?!vacuuming)", "vacuuming").unwrap());
    assert!(like(
        r"invalid weight specification: \@one",
        "invalid weight specification: @one"
    )
    .unwrap());
    assert!(like(r#"undefined variable \"i8\""#, r#"undefined variable "i8""#).unwrap());
    assert!(like(
        r"actually processed: (\d+)/\1",
        "actually processed: 40/40\n"
    )
    .unwrap());
    assert!(!like(
        r"actually processed: (\d+)/\1",
        "actually processed: 39/40\n"
    )
    .unwrap());
    let pat = r"(?s)(client (0|1) sending UPDATE x \+ -?\d+\b).*client \2 got an error.*\1";
    let good = "client 1 sending UPDATE x + 5\nclient 0 sending UPDATE x + 7\nclient 0 got an error\nclient 0 sending UPDATE x + 7\n";
    let bad = "client 1 sending UPDATE x + 5\nclient 0 sending UPDATE x + 7\nclient 0 got an error\nclient 0 sending UPDATE x + 8\n";
    assert!(like(pat, good).unwrap());
    assert!(!like(pat, bad).unwrap());
}
