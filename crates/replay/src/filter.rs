//! pgreplay's statement filter: splits a simple-protocol query string into statements (on `;`
//! outside literals, quoted identifiers and comments), looks at each one's first three words,
//! blanks out COPY and `SET client_encoding` (they cannot be replayed) and notes DEALLOCATEs.

/// Longest identifier kept (PostgreSQL's NAMEDATALEN - 1... as pgreplay: 64).
const NAMELEN: usize = 64;
const MAX_TOKENS: usize = 3;

/// What the filter found in one query string.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Statements seen (pgreplay's "simple SQL statements").
    pub statements: u64,
    /// Warnings, in order: `Copy` or `SetClientEncoding` (each blanked out).
    pub ignored: Vec<Ignored>,
    /// DEALLOCATE targets, in order: `Some(name)`, or `None` for DEALLOCATE ALL.
    pub deallocated: Vec<Option<Vec<u8>>>,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Ignored {
    Copy,
    SetClientEncoding,
}

impl Ignored {
    /// pgreplay's warning, without the line number.
    pub fn warning(&self) -> &'static str {
        match self {
            Ignored::Copy => "Warning: COPY statement ignored in line",
            Ignored::SetClientEncoding => {
                "Warning: \"SET client_encoding\" statement ignored in line"
            }
        }
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c > 127 || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == b'$'
}

/// Filters `sql` in place. `backslash_quote` is `-q`. The error is pgreplay's message.
pub fn filter(sql: &mut [u8], backslash_quote: bool, lineno: u64) -> Result<Filtered, String> {
    let mut out = Filtered::default();
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let mut start = 0usize;
    let mut p = 0usize;
    let at = |sql: &[u8], i: usize| sql.get(i).copied().unwrap_or(0);
    loop {
        let c = at(sql, p);
        if c == 0 || c == b';' {
            end_statement(sql, start, p, &tokens, &mut out);
            if c == 0 {
                break;
            }
            p += 1;
            start = p;
            tokens.clear();
        } else if (c == b'E' || c == b'e') && at(sql, p + 1) == b'\'' {
            p = skip_string(sql, p + 1, true, lineno, backslash_quote)?;
        } else if c == b'\'' {
            p = skip_string(sql, p, backslash_quote, lineno, backslash_quote)?;
        } else if c == b'$' && !at(sql, p + 1).is_ascii_digit() {
            p = skip_dollar(sql, p, lineno)?;
        } else if c == b'-' && at(sql, p + 1) == b'-' {
            while at(sql, p) != b'\n' && at(sql, p) != 0 {
                p += 1;
            }
        } else if c == b'/' && at(sql, p + 1) == b'*' {
            p = skip_comment(sql, p + 2, lineno)?;
        } else if c == b'"' {
            let mut t = Vec::new();
            loop {
                p += 1;
                match at(sql, p) {
                    0 => {
                        return Err(format!(
                            "Error: quoted identifier not closed in line {lineno}"
                        ))
                    }
                    b'"' if at(sql, p + 1) == b'"' => {
                        if t.len() < NAMELEN {
                            t.push(b'"');
                        }
                        p += 1;
                    }
                    b'"' => {
                        p += 1;
                        break;
                    }
                    ch => {
                        if t.len() < NAMELEN {
                            t.push(ch);
                        }
                    }
                }
            }
            if tokens.len() < MAX_TOKENS {
                tokens.push(t);
            }
        } else if is_ident_start(c) {
            let mut t = Vec::new();
            while is_ident_char(at(sql, p)) {
                if t.len() < NAMELEN {
                    t.push(at(sql, p).to_ascii_lowercase());
                }
                p += 1;
            }
            if tokens.len() < MAX_TOKENS {
                tokens.push(t);
            }
        } else {
            p += 1;
        }
    }
    Ok(out)
}

fn end_statement(sql: &mut [u8], start: usize, p: usize, tokens: &[Vec<u8>], out: &mut Filtered) {
    if tokens.is_empty() {
        return;
    }
    out.statements += 1;
    let tok = |i: usize| tokens.get(i).map(Vec::as_slice).unwrap_or(b"");
    let blank = |sql: &mut [u8]| sql[start..p].iter_mut().for_each(|b| *b = b' ');
    if tok(0) == b"copy" {
        blank(sql);
        out.ignored.push(Ignored::Copy);
    } else if tokens.len() > 1 && tok(0) == b"set" && tok(1) == b"client_encoding" {
        blank(sql);
        out.ignored.push(Ignored::SetClientEncoding);
    } else if tok(0) == b"deallocate" {
        let idx = if tok(1) == b"prepare" { 2 } else { 1 };
        if tok(idx) == b"all" {
            out.deallocated.push(None);
        } else {
            out.deallocated.push(Some(tok(idx).to_vec()));
        }
    }
}

/// From the opening quote at `q`, returns the index after the closing one.
fn skip_string(
    sql: &[u8],
    q: usize,
    backslash: bool,
    lineno: u64,
    bq: bool,
) -> Result<usize, String> {
    let at = |i: usize| sql.get(i).copied().unwrap_or(0);
    let mut p = q;
    loop {
        p += 1;
        if at(p) == 0 {
            break;
        }
        if at(p) == b'\'' {
            if at(p + 1) == b'\'' {
                p += 1;
            } else {
                break;
            }
        }
        if backslash && at(p) == b'\\' && (at(p + 1) == b'\'' || at(p + 1) == b'\\') {
            p += 1;
        }
    }
    if at(p) == 0 {
        return Err(format!(
            "Error: string literal not closed near line {lineno}\nHint: retry with{} the -q option",
            if bq { "out" } else { "" }
        ));
    }
    Ok(p + 1)
}

fn skip_dollar(sql: &[u8], q: usize, lineno: u64) -> Result<usize, String> {
    let mut p = q + 1;
    while p < sql.len() && sql[p] != b'$' && sql[p] != 0 {
        p += 1;
    }
    if p >= sql.len() || sql[p] == 0 {
        return Err(format!(
            "Error: end of dollar quote not found in line {lineno}"
        ));
    }
    let tag = &sql[q..p];
    let mut h = p;
    loop {
        h += 1;
        let found = sql[h.min(sql.len())..]
            .windows(tag.len())
            .position(|w| w == tag)
            .map(|i| i + h);
        match found {
            None => {
                return Err(format!(
                    "Error: end of dollar quoted string found in line {lineno}"
                ))
            }
            Some(i) if sql.get(i + tag.len()) == Some(&b'$') => return Ok(i + tag.len() + 1),
            Some(i) => h = i,
        }
    }
}

fn skip_comment(sql: &[u8], mut p: usize, lineno: u64) -> Result<usize, String> {
    let at = |i: usize| sql.get(i).copied().unwrap_or(0);
    let mut depth = 1;
    while depth != 0 {
        if at(p) == 0 {
            return Err(format!("Error: comment not closed in line {lineno}"));
        } else if at(p) == b'*' && at(p + 1) == b'/' {
            depth -= 1;
            p += 2;
        } else if at(p) == b'/' && at(p + 1) == b'*' {
            depth += 1;
            p += 2;
        } else {
            p += 1;
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_and_encoding_blanked_deallocate_noted() {
        let mut s =
            b"set client_encoding to 'UTF8'; DEALLOCATE \"einf\"\"ug\"; copy t from stdin".to_vec();
        let f = filter(&mut s, false, 7).unwrap();
        assert_eq!(f.statements, 3);
        assert_eq!(f.ignored, vec![Ignored::SetClientEncoding, Ignored::Copy]);
        assert_eq!(f.deallocated, vec![Some(b"einf\"ug".to_vec())]);
        assert!(s.starts_with(b"                             ;"));
        let mut s = b"select 'x".to_vec();
        assert!(filter(&mut s, false, 3)
            .unwrap_err()
            .contains("not closed near line 3"));
    }
}
