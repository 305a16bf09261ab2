//! Setup files split into statements the way `psql -f` runs them, so each statement runs on its
//! own (autocommit: `VACUUM`, `CREATE INDEX CONCURRENTLY`, `CREATE DATABASE` work). A statement
//! ends at a semicolon outside quotes (`'…'`, `E'…'`, `"…"`, `$tag$…$tag$`), comments (`--`,
//! nested `/* */`), parentheses and a `BEGIN … END` body of `CREATE [OR REPLACE]
//! FUNCTION|PROCEDURE`; text after the last semicolon is a statement too. `COPY … FROM STDIN`
//! takes the lines after it up to `\.` as its data, as in psql. Other psql meta-commands
//! (`\set`, `\i`, `\connect`, …) are refused with the line they are on: pgrig runs SQL only.
//! Pure: no I/O.

/// One statement of a setup file.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// 1-based line where the statement starts.
    pub line: usize,
    pub sql: String,
    /// `COPY … FROM STDIN`: the data lines that followed it (without the `\.` line).
    pub copy_data: Option<String>,
}

/// Why a file cannot be split: the line and what is wrong there.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitError {
    pub line: usize,
    pub message: String,
}

/// Splits a setup file's text into its statements.
pub fn split(text: &str) -> Result<Vec<Statement>, SplitError> {
    let mut s = Splitter {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        out: Vec::new(),
    };
    while s.pos < s.bytes.len() {
        s.statement()?;
    }
    Ok(s.out)
}

struct Splitter<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Vec<Statement>,
}

/// What the statement-level scan tracks: parentheses and `CREATE FUNCTION … BEGIN … END`.
#[derive(Default)]
struct Depth {
    parens: usize,
    begin: usize,
    /// First letter of each of the statement's first words when it is one of create, or,
    /// replace, function, procedure (else 0), as psql's heuristic keeps them.
    words: [u8; 4],
    word_count: usize,
}

impl Depth {
    fn word(&mut self, w: &str) {
        let lower = w.to_ascii_lowercase();
        if self.word_count < 4
            && ["create", "function", "procedure", "or", "replace"].contains(&lower.as_str())
        {
            self.words[self.word_count] = lower.as_bytes()[0];
        }
        self.word_count += 1;
        let ids = self.words;
        let routine = ids[0] == b'c'
            && (matches!(ids[1], b'f' | b'p')
                || (ids[1] == b'o' && ids[2] == b'r' && matches!(ids[3], b'f' | b'p')));
        if routine && self.parens == 0 {
            match lower.as_str() {
                "begin" => self.begin += 1,
                "case" if self.begin >= 1 => self.begin += 1,
                "end" if self.begin > 0 => self.begin -= 1,
                _ => {}
            }
        }
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

impl Splitter<'_> {
    fn line_at(&self, pos: usize) -> usize {
        self.text[..pos.min(self.text.len())].matches('\n').count() + 1
    }

    fn err(&self, pos: usize, message: impl Into<String>) -> SplitError {
        SplitError {
            line: self.line_at(pos),
            message: message.into(),
        }
    }

    fn peek(&self, off: usize) -> Option<u8> {
        self.bytes.get(self.pos + off).copied()
    }

    /// Skips whitespace and comments before a statement; false at the end of the text.
    fn skip_blank(&mut self) -> Result<bool, SplitError> {
        loop {
            match self.peek(0) {
                None => return Ok(false),
                Some(b) if b.is_ascii_whitespace() => self.pos += 1,
                Some(b'-') if self.peek(1) == Some(b'-') => self.line_comment(),
                Some(b'/') if self.peek(1) == Some(b'*') => self.block_comment()?,
                Some(_) => return Ok(true),
            }
        }
    }

    fn line_comment(&mut self) {
        self.pos = self.text[self.pos..]
            .find('\n')
            .map_or(self.bytes.len(), |i| self.pos + i);
    }

    fn block_comment(&mut self) -> Result<(), SplitError> {
        let start = self.pos;
        let mut depth = 0;
        while self.pos < self.bytes.len() {
            match (self.peek(0), self.peek(1)) {
                (Some(b'/'), Some(b'*')) => {
                    depth += 1;
                    self.pos += 2;
                }
                (Some(b'*'), Some(b'/')) => {
                    depth -= 1;
                    self.pos += 2;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => self.pos += 1,
            }
        }
        Err(self.err(start, "unterminated /* comment"))
    }

    /// A quoted string or identifier ending at `quote` (doubled quote = the quote itself;
    /// `backslash`: E'…' escapes).
    fn quoted(&mut self, quote: u8, backslash: bool, what: &str) -> Result<(), SplitError> {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek(0) {
            self.pos += 1;
            if backslash && b == b'\\' {
                self.pos += 1;
            } else if b == quote {
                if self.peek(0) == Some(quote) {
                    self.pos += 1;
                } else {
                    return Ok(());
                }
            }
        }
        Err(self.err(start, format!("unterminated {what}")))
    }

    /// `$tag$` at the current position (not inside an identifier), if any.
    fn dollar_tag(&self) -> Option<&str> {
        if self.pos > 0 && is_ident_char(self.bytes[self.pos - 1]) {
            return None;
        }
        let rest = &self.text[self.pos + 1..];
        let end = rest.find('$')?;
        let tag = &rest[..end];
        let ok = tag.bytes().enumerate().all(|(i, b)| {
            if i == 0 {
                is_ident_start(b)
            } else {
                is_ident_start(b) || b.is_ascii_digit()
            }
        });
        ok.then(|| &self.text[self.pos..self.pos + end + 2])
    }

    fn dollar_quoted(&mut self, delim: &str) -> Result<(), SplitError> {
        let start = self.pos;
        let body = self.pos + delim.len();
        match self.text[body..].find(delim) {
            Some(i) => {
                self.pos = body + i + delim.len();
                Ok(())
            }
            None => Err(self.err(start, "unterminated dollar-quoted string")),
        }
    }

    /// Scans one statement from the current position and records it.
    fn statement(&mut self) -> Result<(), SplitError> {
        if !self.skip_blank()? {
            return Ok(());
        }
        let start = self.pos;
        let mut depth = Depth::default();
        while let Some(b) = self.peek(0) {
            match b {
                b';' if depth.parens == 0 && depth.begin == 0 => {
                    self.pos += 1;
                    break;
                }
                b'\'' => {
                    let e = self.pos > start
                        && matches!(self.bytes[self.pos - 1], b'e' | b'E')
                        && (self.pos - 1 == start || !is_ident_char(self.bytes[self.pos - 2]));
                    self.quoted(b'\'', e, "quoted string")?;
                }
                b'"' => self.quoted(b'"', false, "quoted identifier")?,
                b'$' => match self.dollar_tag().map(str::to_string) {
                    Some(delim) => self.dollar_quoted(&delim)?,
                    None => self.pos += 1,
                },
                b'-' if self.peek(1) == Some(b'-') => self.line_comment(),
                b'/' if self.peek(1) == Some(b'*') => self.block_comment()?,
                b'\\' => return Err(self.meta_command()),
                b'(' => {
                    depth.parens += 1;
                    self.pos += 1;
                }
                b')' => {
                    depth.parens = depth.parens.saturating_sub(1);
                    self.pos += 1;
                }
                b if is_ident_start(b) => {
                    let w = self.pos;
                    while self.peek(0).is_some_and(is_ident_char) {
                        self.pos += 1;
                    }
                    depth.word(&self.text[w..self.pos]);
                }
                _ => self.pos += 1,
            }
        }
        let sql = self.text[start..self.pos].to_string();
        let copy_data = if is_copy_from_stdin(&sql) {
            Some(self.copy_data())
        } else {
            None
        };
        self.out.push(Statement {
            line: self.line_at(start),
            sql,
            copy_data,
        });
        Ok(())
    }

    /// The lines after `COPY … FROM STDIN;` up to `\.` (or the end of the text).
    fn copy_data(&mut self) -> String {
        // the data starts on the line after the statement's end
        let from = self.text[self.pos..]
            .find('\n')
            .map_or(self.bytes.len(), |i| self.pos + i + 1);
        let mut at = from;
        while at < self.bytes.len() {
            let end = self.text[at..]
                .find('\n')
                .map_or(self.bytes.len(), |i| at + i);
            if self.text[at..end].trim_end_matches('\r') == "\\." {
                self.pos = (end + 1).min(self.bytes.len());
                return self.text[from..at].to_string();
            }
            at = end + 1;
        }
        self.pos = self.bytes.len();
        self.text[from.min(self.bytes.len())..].to_string()
    }

    fn meta_command(&self) -> SplitError {
        let name: String = self.text[self.pos..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect();
        self.err(
            self.pos,
            format!(
                "psql meta-command {name} is not supported in setup files (pgrig runs the SQL \
                 statements only, each on its own, stopping at the first error; remove the \
                 meta-command or do its work in SQL)"
            ),
        )
    }
}

/// `COPY … FROM STDIN` (psql sends the data that follows it in the file).
fn is_copy_from_stdin(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.first().is_some_and(|w| w == "copy")
        && words.windows(2).any(|p| p[0] == "from" && p[1] == "stdin")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqls(text: &str) -> Vec<(usize, String)> {
        split(text)
            .unwrap()
            .into_iter()
            .map(|s| (s.line, s.sql))
            .collect()
    }

    #[test]
    fn statements_end_at_semicolons_outside_quotes_and_comments() {
        let text = "-- header\nCREATE TABLE t (a text);\n\nINSERT INTO t VALUES ('a;b'), (E'c\\';d'), ($$e;$$);\n\
                    /* x; /* nested; */ */ SELECT \"we;ird\" FROM t; VACUUM t\n";
        assert_eq!(
            sqls(text),
            vec![
                (2, "CREATE TABLE t (a text);".into()),
                (
                    4,
                    "INSERT INTO t VALUES ('a;b'), (E'c\\';d'), ($$e;$$);".into()
                ),
                (5, "SELECT \"we;ird\" FROM t;".into()),
                (5, "VACUUM t\n".into()),
            ]
        );
    }

    #[test]
    fn function_bodies_stay_whole() {
        let text = "CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END $body$ LANGUAGE plpgsql;\n\
                    CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 1 END; END;\n\
                    SELECT 1;";
        let s = sqls(text);
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(s[1].1.ends_with("END; END;"), "{s:?}");
        assert_eq!(s[2], (3, "SELECT 1;".into()));
        // BEGIN as a transaction start is not a body
        assert_eq!(sqls("BEGIN; SELECT 1; COMMIT;").len(), 3);
    }

    #[test]
    fn copy_from_stdin_takes_the_following_lines() {
        let s = split("COPY t (a) FROM stdin;\n1\n2\n\\.\nSELECT 2;\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].copy_data.as_deref(), Some("1\n2\n"));
        assert_eq!((s[1].line, s[1].sql.as_str()), (5, "SELECT 2;"));
    }

    #[test]
    fn meta_commands_and_unterminated_text_name_their_line() {
        let e = split("SELECT 1;\n\\set x 1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("\\set"), "{}", e.message);
        let e = split("SELECT 1;\nSELECT 'abc\n;\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "unterminated quoted string")
        );
        let e = split("SELECT $x$ a\n").unwrap_err();
        assert!(e.message.contains("dollar"), "{}", e.message);
        // $1 and a$b$ are not dollar quotes
        assert_eq!(sqls("SELECT a$b$ FROM t; SELECT $1;").len(), 2);
    }
}
