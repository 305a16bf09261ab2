//! Normalised statements, loosely as `pg_stat_statements` groups them by query id: constants
//! (numbers, string and dollar-quoted literals, a negative sign in front of a number) become
//! `?`, a parenthesised list of constants after `IN` becomes `(?...)`, `$n` parameters stay,
//! comments go, unquoted words are compared case-insensitively and whitespace does not count.
//!
//! Two forms of the same walk over the statement: [`fingerprint`], a 64-bit hash computed
//! without allocating (the replay takes one per statement sent), and [`normalize`], the text
//! shown for a fingerprint (made once per distinct statement).

/// What the walk hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    /// an unquoted word (identifier or keyword), as written
    Word(&'a [u8]),
    /// a quoted identifier, an operator or punctuation, `$n`: as written
    Other(&'a [u8]),
    /// a constant
    Const,
    /// `IN (` followed by constants only, up to its `)`
    ConstList,
    /// whitespace or a comment between two tokens
    Space,
}

/// The state of the `IN (constants)` folding: how far a candidate list got.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    /// the previous token was `IN`
    AfterIn,
    /// `IN (`, then this many constants and commas, the last being a constant when `true`
    Open(usize, bool),
}

/// Words after which a `-` is a sign, not a subtraction.
const KEYWORDS: &[&[u8]] = &[
    b"select", b"where", b"and", b"or", b"not", b"when", b"then", b"else", b"values", b"set",
    b"by", b"limit", b"offset", b"return", b"between", b"like", b"is", b"in", b"case", b"having",
    b"on", b"any", b"all", b"array",
];

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_word(c: u8) -> bool {
    is_word_start(c) || c.is_ascii_digit() || c == b'$'
}

/// The end of a quoted run starting at `i` (the opening quote `q`); a doubled quote is one
/// quote; with `backslash`, `\x` escapes (E'' strings).
fn quoted_end(s: &[u8], i: usize, q: u8, backslash: bool) -> usize {
    let mut j = i + 1;
    while j < s.len() {
        if backslash && s[j] == b'\\' {
            j += 2;
            continue;
        }
        if s[j] == q {
            if s.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    s.len()
}

/// A dollar-quoted literal starting at `i` (`$tag$...$tag$`): its end, or `None` when `$` does
/// not open one (`$1` is a parameter).
fn dollar_end(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < s.len() && (is_word_start(s[j]) || s[j].is_ascii_digit()) && s[j] != b'$' {
        j += 1;
    }
    if s.get(j) != Some(&b'$') || s.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let tag = &s[i..=j];
    let body = j + 1;
    let close = s[body..].windows(tag.len()).position(|w| w == tag);
    Some(close.map_or(s.len(), |p| body + p + tag.len()))
}

/// The end of a number starting at `i` (digits, a point, an exponent).
fn number_end(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && (s[i].is_ascii_digit() || s[i] == b'.' || s[i] == b'_') {
        i += 1;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        let mut j = i + 1;
        if j < s.len() && (s[j] == b'+' || s[j] == b'-') {
            j += 1;
        }
        if j < s.len() && s[j].is_ascii_digit() {
            i = j;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

/// Cuts `s` into tokens (before the `IN` list folding).
fn raw_tokens<'a>(s: &'a [u8], mut emit: impl FnMut(Tok<'a>)) {
    let mut i = 0;
    // whether a `-` here would be a binary operator (after an operand)
    let mut after_operand = false;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c.is_ascii_whitespace() {
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            emit(Tok::Space);
            continue;
        }
        if c == b'-' && next == Some(b'-') {
            i = s[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.len(), |p| i + p);
            emit(Tok::Space);
            continue;
        }
        if c == b'/' && next == Some(b'*') {
            i = s[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(s.len(), |p| i + 2 + p + 2);
            emit(Tok::Space);
            continue;
        }
        let (end, tok) = if c == b'\'' {
            (quoted_end(s, i, b'\'', false), Tok::Const)
        } else if (c == b'E' || c == b'e') && next == Some(b'\'') {
            (quoted_end(s, i + 1, b'\'', true), Tok::Const)
        } else if (c == b'B' || c == b'b' || c == b'X' || c == b'x' || c == b'N' || c == b'n')
            && next == Some(b'\'')
        {
            (quoted_end(s, i + 1, b'\'', false), Tok::Const)
        } else if c == b'"' {
            let e = quoted_end(s, i, b'"', false);
            (e, Tok::Other(&s[i..e]))
        } else if c == b'$' && next.is_some_and(|d| d.is_ascii_digit()) {
            let mut e = i + 1;
            while e < s.len() && s[e].is_ascii_digit() {
                e += 1;
            }
            (e, Tok::Other(&s[i..e]))
        } else if let Some(e) = (c == b'$').then(|| dollar_end(s, i)).flatten() {
            (e, Tok::Const)
        } else if c.is_ascii_digit() || (c == b'.' && next.is_some_and(|d| d.is_ascii_digit())) {
            (number_end(s, i), Tok::Const)
        } else if c == b'-'
            && !after_operand
            && next.is_some_and(|d| d.is_ascii_digit() || d == b'.')
        {
            (number_end(s, i + 1), Tok::Const)
        } else if is_word_start(c) {
            let mut e = i + 1;
            while e < s.len() && is_word(s[e]) {
                e += 1;
            }
            (e, Tok::Word(&s[i..e]))
        } else {
            (i + 1, Tok::Other(&s[i..=i]))
        };
        after_operand = match tok {
            Tok::Word(w) => !KEYWORDS.iter().any(|k| w.eq_ignore_ascii_case(k)),
            Tok::Const => true,
            Tok::Other(t) => t == b")" || t == b"]" || t.starts_with(b"\"") || t[0] == b'$',
            _ => false,
        };
        i = end.max(i + 1);
        emit(tok);
    }
}

/// The tokens of `s`, with `IN (constant, ...)` folded into [`Tok::ConstList`].
fn tokens<'a>(s: &'a [u8], mut emit: impl FnMut(Tok<'a>)) {
    let mut list = List::None;
    // a list candidate is held back: `(` and then `n` constants/commas, spaces dropped
    let flush = |n: usize, emit: &mut dyn FnMut(Tok<'a>)| {
        emit(Tok::Other(b"("));
        for k in 0..n {
            emit(if k % 2 == 0 {
                Tok::Const
            } else {
                Tok::Other(b",")
            });
        }
    };
    raw_tokens(s, |t| {
        list = match (list, t) {
            (List::Open(..), Tok::Space) => return,
            (List::AfterIn, Tok::Space) => {
                emit(t);
                return;
            }
            (List::AfterIn, Tok::Other(b"(")) => List::Open(0, false),
            (List::Open(n, false), Tok::Const) => List::Open(n + 1, true),
            (List::Open(n, true), Tok::Other(b",")) => List::Open(n + 1, false),
            (List::Open(n, true), Tok::Other(b")")) if n > 0 => {
                emit(Tok::ConstList);
                List::None
            }
            (List::Open(n, _), t) => {
                flush(n, &mut emit);
                emit(t);
                List::None
            }
            (_, Tok::Word(w)) if w.eq_ignore_ascii_case(b"in") => {
                emit(t);
                List::AfterIn
            }
            (_, t) => {
                emit(t);
                List::None
            }
        };
    });
    if let List::Open(n, _) = list {
        flush(n, &mut emit);
    }
}

/// FNV-1a over bytes.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x100000001b3);
    }
}

/// The statement's fingerprint: equal for statements that differ only in constants, case of
/// unquoted words, whitespace and comments. Allocates nothing.
pub fn fingerprint(stmt: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    tokens(stmt, |t| {
        match t {
            Tok::Word(w) => {
                for &b in w {
                    fnv(&mut h, &[b.to_ascii_lowercase()]);
                }
            }
            Tok::Other(o) => fnv(&mut h, o),
            Tok::Const => fnv(&mut h, b"?"),
            Tok::ConstList => fnv(&mut h, b"(?...)"),
            Tok::Space => return,
        }
        // a separator no token contains, so `ab` is not `a b`
        fnv(&mut h, &[0xff]);
    });
    h
}

/// The normalised text: constants as `?`, lists of them after `IN` as `(?...)`, whitespace and
/// comments as one space, words as written (bytes that are not UTF-8 replaced).
pub fn normalize(stmt: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(stmt.len());
    let mut space = false;
    tokens(stmt, |t| {
        let bytes: &[u8] = match t {
            Tok::Space => {
                space = true;
                return;
            }
            Tok::Word(w) | Tok::Other(w) => w,
            Tok::Const => b"?",
            Tok::ConstList => b"(?...)",
        };
        if space && !out.is_empty() {
            out.push(b' ');
        }
        space = false;
        out.extend_from_slice(bytes);
    });
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s.as_bytes())
    }

    fn same(a: &str, b: &str) -> bool {
        fingerprint(a.as_bytes()) == fingerprint(b.as_bytes())
    }

    #[test]
    fn constants_become_placeholders_and_parameters_stay() {
        assert_eq!(
            n("UPDATE pgbench_accounts SET abalance = abalance + -4053 WHERE aid = 86042;"),
            "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;"
        );
        assert_eq!(n("select a - 1 from t"), "select a - ? from t");
        assert_eq!(
            n("SELECT 'it''s', E'a\\'b', 1.5e-3, .5, $$x$$, $q$y$q$ WHERE c = $1"),
            "SELECT ?, ?, ?, ?, ?, ? WHERE c = $1"
        );
        assert_eq!(
            n("insert into \"T 1\" values (x'1f', 42)"),
            "insert into \"T 1\" values (?, ?)"
        );
        assert_eq!(n("select t1.c2, $12 from t1"), "select t1.c2, $12 from t1");
    }

    #[test]
    fn in_lists_of_constants_are_one_placeholder_whatever_their_length() {
        assert_eq!(
            n("select * from t where id IN (1, 2,3) and x in (select 1)"),
            "select * from t where id IN (?...) and x in (select ?)"
        );
        assert!(same(
            "select 1 from t where a in (1)",
            "select 1 from t where a in (4, 5, 6)"
        ));
        assert_eq!(n("select a in (b, 1) from t"), "select a in (b, ?) from t");
        assert_eq!(n("select a in ("), "select a in (");
    }

    #[test]
    fn fingerprints_ignore_case_whitespace_comments_and_constants_only() {
        assert!(same(
            "SELECT abalance FROM pgbench_accounts WHERE aid = 5",
            "select  abalance\n from pgbench_accounts /* c */ where aid=77 -- x"
        ));
        assert!(!same("select a from t", "select b from t"));
        assert!(!same("select ab from t", "select a b from t"));
        assert!(!same("select $1 from t", "select $2 from t"));
        assert!(!same("select \"A\" from t", "select \"a\" from t"));
        assert!(same("select -1", "select 5"));
        assert!(!same("select a - 1", "select a"));
    }

    #[test]
    fn unterminated_quotes_and_comments_end_the_statement() {
        assert_eq!(n("select 'abc"), "select ?");
        assert_eq!(n("select 1 /* x"), "select ?");
        assert_eq!(n("select $a$ x"), "select ?");
        assert_eq!(n(""), "");
    }
}
