//! Tokens of the `\set`/`\if` expression language (pgbench's `exprscan.l`, EXPR state): operators,
//! case-insensitive keywords, `:variables`, integer/double literals with pgbench's overflow rules,
//! function names, and the "unexpected character" error with pgbench's column quirk.
//!
//! Offsets are byte offsets into the meta-command text (0 = its backslash). Each token records
//! the end of its match: pgbench reports errors at "end of the last lexed token - 1".

use super::ExprError;
use crate::lexer::{continuation_len, is_meta_space};

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    BitOr,
    BitAnd,
    Hash,
    Tilde,
    LParen,
    RParen,
    Comma,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    True,
    False,
    Null,
    Var(String),
    Func(String),
    Int(i64),
    /// `9223372036854775808`, only valid right after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    /// End of the command (newline or end of input).
    Eol,
}

pub(crate) struct ExprLexer<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Offset just past the terminating newline (or the text length at end of input).
    eol_end: usize,
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

const KEYWORDS: [(&str, Tok); 14] = [
    ("and", Tok::And),
    ("or", Tok::Or),
    ("not", Tok::Not),
    ("is", Tok::Is),
    ("isnull", Tok::IsNull),
    ("notnull", Tok::NotNull),
    ("case", Tok::Case),
    ("when", Tok::When),
    ("then", Tok::Then),
    ("else", Tok::Else),
    ("end", Tok::End),
    ("true", Tok::True),
    ("false", Tok::False),
    ("null", Tok::Null),
];

impl<'a> ExprLexer<'a> {
    /// Lex `text` (a meta-command, without its terminating newline) from `pos`.
    pub(crate) fn new(text: &'a str, pos: usize, newline: bool) -> Self {
        ExprLexer {
            text,
            b: text.as_bytes(),
            pos,
            eol_end: text.len() + usize::from(newline),
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// Whether a token (or ignorable whitespace) can start at `i`.
    fn can_start_token(&self, i: usize) -> bool {
        let c = self.b[i];
        match c {
            b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'<' | b'>' | b'|' | b'&' | b'#' | b'~'
            | b'(' | b')' | b',' => true,
            b'!' => self.at(i + 1) == b'=',
            b':' => is_alnum(self.at(i + 1)),
            b'.' => self.at(i + 1).is_ascii_digit(),
            b'\\' => continuation_len(self.b, i).is_some(),
            c => is_meta_space(c) || c.is_ascii_digit() || is_alpha(c),
        }
    }

    /// Next token and the end offset of its match.
    pub(crate) fn next(&mut self) -> Result<(Tok, usize), ExprError> {
        loop {
            if self.pos >= self.b.len() {
                return Ok((Tok::Eol, self.eol_end));
            }
            if is_meta_space(self.b[self.pos]) {
                self.pos += 1;
            } else if let Some(n) = continuation_len(self.b, self.pos) {
                self.pos += n;
            } else {
                break;
            }
        }
        let start = self.pos;
        let c = self.b[start];
        let two = [c, self.at(start + 1)];
        let (tok, len) = match &two {
            b"<>" | b"!=" => (Tok::Ne, 2),
            b"<=" => (Tok::Le, 2),
            b">=" => (Tok::Ge, 2),
            b"<<" => (Tok::Shl, 2),
            b">>" => (Tok::Shr, 2),
            _ => match c {
                b'+' => (Tok::Plus, 1),
                b'-' => (Tok::Minus, 1),
                b'*' => (Tok::Star, 1),
                b'/' => (Tok::Slash, 1),
                b'%' => (Tok::Percent, 1),
                b'=' => (Tok::Eq, 1),
                b'<' => (Tok::Lt, 1),
                b'>' => (Tok::Gt, 1),
                b'|' => (Tok::BitOr, 1),
                b'&' => (Tok::BitAnd, 1),
                b'#' => (Tok::Hash, 1),
                b'~' => (Tok::Tilde, 1),
                b'(' => (Tok::LParen, 1),
                b')' => (Tok::RParen, 1),
                b',' => (Tok::Comma, 1),
                b':' if is_alnum(self.at(start + 1)) => {
                    let end = self.span(start + 1, is_alnum);
                    (Tok::Var(self.text[start + 1..end].to_owned()), end - start)
                }
                c if c.is_ascii_digit() || (c == b'.' && self.at(start + 1).is_ascii_digit()) => {
                    return self.number(start)
                }
                c if is_alpha(c) => {
                    let end = self.span(start, is_alnum);
                    let word = &self.text[start..end];
                    let tok = KEYWORDS
                        .iter()
                        .find(|(k, _)| word.eq_ignore_ascii_case(k))
                        .map(|(_, t)| t.clone())
                        .unwrap_or_else(|| Tok::Func(word.to_owned()));
                    (tok, end - start)
                }
                _ => return Err(self.unexpected_character(start)),
            },
        };
        self.pos = start + len;
        Ok((tok, self.pos))
    }

    fn span(&self, mut i: usize, pred: fn(u8) -> bool) -> usize {
        while i < self.b.len() && pred(self.b[i]) {
            i += 1;
        }
        i
    }

    /// pgbench reports a run of characters that cannot start a token at its *last* character.
    /// A complete quoted string (`'...'` or `"..."`, doubled quotes inside) is one such run,
    /// reported at its closing quote.
    fn unexpected_character(&self, start: usize) -> ExprError {
        let mut last = start;
        if let Some(close) = self.closing_quote(start) {
            last = close;
        } else {
            while last + 1 < self.b.len() && !self.can_start_token(last + 1) {
                last += 1;
            }
        }
        // `last` is an ASCII byte (bytes >= 0x80 start identifiers), so slicing is safe
        let more = self.text.get(last..last + 1).unwrap_or("").to_owned();
        ExprError {
            message: "unexpected character",
            more: Some(more),
            column: last,
        }
    }

    /// Position of the quote closing a quoted string opened at `start`, if it is closed.
    fn closing_quote(&self, start: usize) -> Option<usize> {
        let q = self.at(start);
        if q != b'\'' && q != b'"' {
            return None;
        }
        let mut j = start + 1;
        while j < self.b.len() {
            if self.b[j] == q {
                if self.at(j + 1) == q {
                    j += 2;
                    continue;
                }
                return Some(j);
            }
            j += 1;
        }
        None
    }

    /// `[0-9]+` (int), `[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?` or `\.[0-9]+([eE][-+]?[0-9]+)?`
    /// (double), longest match.
    fn number(&mut self, start: usize) -> Result<(Tok, usize), ExprError> {
        let digits_end = self.span(start, |b| b.is_ascii_digit());
        let mut end = digits_end;
        if self.at(end) == b'.' {
            end = self.span(end + 1, |b| b.is_ascii_digit());
        }
        if matches!(self.at(end), b'e' | b'E') {
            let mut j = end + 1;
            if matches!(self.at(j), b'+' | b'-') {
                j += 1;
            }
            let k = self.span(j, |b| b.is_ascii_digit());
            if k > j {
                end = k;
            }
        }
        self.pos = end;
        let lit = &self.text[start..end];
        if end == digits_end {
            if lit == "9223372036854775808" {
                return Ok((Tok::MaxIntPlusOne, end));
            }
            return match lit.parse::<i64>() {
                Ok(v) => Ok((Tok::Int(v), end)),
                Err(_) => Err(ExprError::at_end(
                    "bigint constant overflow",
                    Some(lit),
                    end,
                )),
            };
        }
        match parse_double_like_strtod(lit) {
            Some(v) => Ok((Tok::Double(v), end)),
            None => Err(ExprError::at_end(
                "double constant overflow",
                Some(lit),
                end,
            )),
        }
    }
}

/// Parse a double literal, failing where C's `strtod` would set `ERANGE`: overflow to infinity,
/// underflow to zero from a non-zero literal, or a subnormal result.
fn parse_double_like_strtod(lit: &str) -> Option<f64> {
    let v: f64 = lit.parse().ok()?;
    if v.is_infinite() {
        return None;
    }
    if v == 0.0 {
        let mantissa = lit.split(['e', 'E']).next().unwrap_or("");
        if mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            return None;
        }
    } else if v.abs() < f64::MIN_POSITIVE {
        return None;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut lx = ExprLexer::new(s, 0, true);
        let mut out = Vec::new();
        loop {
            let (t, _) = lx.next().expect("lexes");
            if t == Tok::Eol {
                return out;
            }
            out.push(t);
        }
    }

    #[test]
    fn keywords_are_case_insensitive_whole_words() {
        assert_eq!(
            toks("AnD andx Case"),
            vec![Tok::And, Tok::Func("andx".into()), Tok::Case]
        );
    }

    #[test]
    fn number_forms_follow_longest_match() {
        assert_eq!(
            toks("1 1. .5 1e3 1.5.5"),
            vec![
                Tok::Int(1),
                Tok::Double(1.0),
                Tok::Double(0.5),
                Tok::Double(1000.0),
                Tok::Double(1.5),
                Tok::Double(0.5)
            ]
        );
        assert_eq!(toks("1e"), vec![Tok::Int(1), Tok::Func("e".into())]);
    }

    #[test]
    fn max_int_plus_one_is_a_special_token_but_padded_forms_overflow() {
        assert_eq!(toks("9223372036854775808"), vec![Tok::MaxIntPlusOne]);
        assert!(ExprLexer::new("09223372036854775808", 0, true)
            .next()
            .is_err());
    }

    #[test]
    fn double_underflow_and_subnormals_are_overflow_errors() {
        for bad in ["1e-400", "1e-310", "1e999", "1.7976931348623159e308"] {
            let e = ExprLexer::new(bad, 0, true).next().unwrap_err();
            assert_eq!(e.message, "double constant overflow", "{bad}");
        }
        assert_eq!(toks("0e-999"), vec![Tok::Double(0.0)]);
    }

    #[test]
    fn variables_may_start_with_digits_and_contain_non_ascii() {
        assert_eq!(
            toks(":1a :é"),
            vec![Tok::Var("1a".into()), Tok::Var("é".into())]
        );
    }

    #[test]
    fn continuation_is_whitespace() {
        assert_eq!(
            toks("1 \\\n+ \\\r\n2"),
            vec![Tok::Int(1), Tok::Plus, Tok::Int(2)]
        );
    }

    #[test]
    fn unexpected_character_run_is_reported_at_its_last_character() {
        let e = ExprLexer::new("1 @?$ 2", 2, true).next().unwrap_err();
        assert_eq!((e.more.as_deref(), e.column), (Some("$"), 4));
        let e = ExprLexer::new("::x", 0, true).next().unwrap_err();
        assert_eq!((e.more.as_deref(), e.column), (Some(":"), 0));
    }
}
