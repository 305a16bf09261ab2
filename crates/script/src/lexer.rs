//! Splitting a script into SQL commands and backslash meta-commands, the way pgbench does with
//! psql's SQL lexer: an SQL command ends at an unquoted `;` outside parentheses (and outside a
//! `CREATE FUNCTION ... BEGIN ATOMIC ... END` body) or where a backslash meta-command starts;
//! quotes (`'...'`, `E'...'`, `"..."`, `$tag$...$tag$`) and comments (`--`, nested `/* */`) are
//! respected; `\;` glues statements into one compound command and `\:` is a literal colon.
//! A meta-command runs from its backslash to the end of the line, backslash-newline continuing it.
//!
//! Also owns the meta-command word lexer ([`words`]) shared by the meta-command parser.

/// One piece of a script, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk<'a> {
    Sql(SqlChunk),
    Meta(MetaChunk<'a>),
}

/// An SQL command as pgbench keeps it: leading whitespace and `--` comment lines stripped, `\;`
/// turned into `;`, everything else verbatim (including the terminating `;`, if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlChunk {
    pub text: String,
    /// 1-based line of the first character of `text`.
    pub line: usize,
    /// Number of non-empty statements separated by `\;` (at least 1).
    pub statements: usize,
}

/// A backslash meta-command: `text` runs from the backslash to the end of its (logical) line,
/// continuation lines included, the terminating newline excluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaChunk<'a> {
    pub text: &'a str,
    /// Whether a newline terminated the command (false at end of input). Error columns that
    /// point at "end of command" count that newline.
    pub newline: bool,
    /// 1-based line of the backslash.
    pub line: usize,
}

impl MetaChunk<'_> {
    /// The command text as pgbench prints it (`-r`, error display): up to and including the
    /// terminating newline, then one trailing `\n` and a `\r` before it removed.
    pub fn display_text(&self) -> &str {
        let t = if self.newline {
            self.text
        } else {
            self.text.strip_suffix('\n').unwrap_or(self.text)
        };
        if self.newline || t.len() < self.text.len() {
            t.strip_suffix('\r').unwrap_or(t)
        } else {
            t
        }
    }
}

/// Split `text` into commands. Never fails: like pgbench, unterminated quotes or comments just
/// run to the end of the input.
pub fn split_script(text: &str) -> Vec<Chunk<'_>> {
    let mut s = Splitter::new(text);
    s.run();
    s.out
}

/// `isspace()` in the C locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

fn is_dolq_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// Strip what pgbench does not send: leading whitespace and `--` comments. `None` when nothing
/// else remains.
pub(crate) fn strip_leading_comments(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        if i < b.len() && is_c_space(b[i]) {
            i += 1;
        } else if b[i..].starts_with(b"--") {
            while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                i += 1;
            }
        } else {
            break;
        }
    }
    (i < b.len()).then_some(i)
}

/// psql lexer state that survives across commands (paren depth, BEGIN ATOMIC tracking).
struct Splitter<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    out: Vec<Chunk<'a>>,
    /// Current SQL command being collected.
    buf: String,
    /// Source offset where `buf` started and where the not-yet-copied part of it starts.
    buf_start: usize,
    copied_to: usize,
    statements: usize,
    seg_has_content: bool,
    paren_depth: usize,
    begin_depth: usize,
    ident_count: usize,
    idents: [u8; 4],
    /// Offsets of every `\n`, for line numbers.
    newlines: Vec<usize>,
}

impl<'a> Splitter<'a> {
    fn new(text: &'a str) -> Self {
        let newlines = text
            .bytes()
            .enumerate()
            .filter(|&(_, c)| c == b'\n')
            .map(|(i, _)| i)
            .collect();
        Splitter {
            text,
            b: text.as_bytes(),
            i: 0,
            out: Vec::new(),
            buf: String::new(),
            buf_start: 0,
            copied_to: 0,
            statements: 0,
            seg_has_content: false,
            paren_depth: 0,
            begin_depth: 0,
            ident_count: 0,
            idents: [0; 4],
            newlines,
        }
    }

    fn line_at(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }

    fn peek(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    /// Copy the source text up to the current position into `buf`.
    fn copy_pending(&mut self) {
        self.buf.push_str(&self.text[self.copied_to..self.i]);
        self.copied_to = self.i;
    }

    /// End the current SQL command (at `self.i`), emitting it unless it is empty.
    fn flush(&mut self) {
        self.copy_pending();
        if self.seg_has_content {
            self.statements += 1;
        }
        let buf = std::mem::take(&mut self.buf);
        if let Some(skip) = strip_leading_comments(&buf) {
            let line = self.line_at(self.buf_start + skip);
            self.out.push(Chunk::Sql(SqlChunk {
                text: buf[skip..].to_owned(),
                line,
                statements: self.statements.max(1),
            }));
        }
        self.statements = 0;
        self.seg_has_content = false;
        self.ident_count = 0;
        self.buf_start = self.i;
        self.copied_to = self.i;
    }

    fn run(&mut self) {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'\'' => self.skip_quoted(b'\'', false),
                b'"' => self.skip_quoted(b'"', false),
                b'-' if self.peek(1) == b'-' => self.skip_line_comment(),
                b'/' if self.peek(1) == b'*' => self.skip_block_comment(),
                b'$' => self.dollar(),
                b'(' => {
                    self.paren_depth += 1;
                    self.content(1);
                }
                b')' => {
                    self.paren_depth = self.paren_depth.saturating_sub(1);
                    self.content(1);
                }
                b';' => {
                    self.i += 1;
                    if self.paren_depth == 0 && self.begin_depth == 0 {
                        self.flush();
                    }
                }
                b'\\' => self.backslash(),
                b'e' | b'E' if self.peek(1) == b'\'' => {
                    self.i += 1;
                    self.skip_quoted(b'\'', true);
                }
                c if is_ident_start(c) => self.identifier(),
                c if c.is_ascii_digit() => {
                    while self.i < self.b.len()
                        && (self.b[self.i].is_ascii_digit() || self.b[self.i] == b'.')
                    {
                        self.i += 1;
                    }
                    self.seg_has_content = true;
                    if self.i < self.b.len() && is_ident_start(self.b[self.i]) {
                        // psql's "integer junk": the identifier chars stick to the number
                        while self.i < self.b.len() && is_ident_cont(self.b[self.i]) {
                            self.i += 1;
                        }
                    }
                }
                c if is_c_space(c) => self.i += 1,
                _ => self.content(1),
            }
        }
        self.flush();
    }

    fn content(&mut self, n: usize) {
        self.i += n;
        self.seg_has_content = true;
    }

    /// `'...'` (with `''`), `E'...'` (also backslash escapes) or `"..."` (with `""`).
    fn skip_quoted(&mut self, q: u8, backslash_escapes: bool) {
        self.seg_has_content = true;
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if backslash_escapes && c == b'\\' {
                self.i += 2;
            } else if c == q {
                if self.peek(1) == q {
                    self.i += 2;
                } else {
                    self.i += 1;
                    return;
                }
            } else {
                self.i += 1;
            }
        }
        self.i = self.b.len();
    }

    fn skip_line_comment(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' && self.b[self.i] != b'\r' {
            self.i += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        let mut depth = 0usize;
        while self.i < self.b.len() {
            if self.b[self.i..].starts_with(b"/*") {
                depth += 1;
                self.i += 2;
            } else if self.b[self.i..].starts_with(b"*/") {
                self.i += 2;
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else {
                self.i += 1;
            }
        }
    }

    /// `$tag$ ... $tag$` (tag possibly empty); otherwise a lone `$` (e.g. `$1`).
    fn dollar(&mut self) {
        self.seg_has_content = true;
        let start = self.i;
        let mut j = start + 1;
        if j < self.b.len() && is_ident_start(self.b[j]) {
            while j < self.b.len() && is_dolq_cont(self.b[j]) {
                j += 1;
            }
        }
        if j >= self.b.len() || self.b[j] != b'$' {
            self.i += 1;
            return;
        }
        let delim = &self.b[start..=j];
        let body = j + 1;
        self.i = match self.b[body..].windows(delim.len()).position(|w| w == delim) {
            Some(p) => body + p + delim.len(),
            None => self.b.len(),
        };
    }

    fn identifier(&mut self) {
        self.seg_has_content = true;
        let start = self.i;
        while self.i < self.b.len() && is_ident_cont(self.b[self.i]) {
            self.i += 1;
        }
        let word = &self.text[start..self.i];
        self.track_begin_atomic(word);
    }

    /// psql's heuristic for `CREATE [OR REPLACE] {FUNCTION|PROCEDURE} ... BEGIN ATOMIC ... END`:
    /// semicolons inside the body do not end the command.
    fn track_begin_atomic(&mut self, word: &str) {
        if self.ident_count == 0 {
            self.idents = [0; 4];
        }
        let is = |k: &str| word.eq_ignore_ascii_case(k);
        if ["create", "function", "procedure", "or", "replace"]
            .iter()
            .any(|k| is(k))
            && self.ident_count < 4
        {
            self.idents[self.ident_count] = word.as_bytes()[0].to_ascii_lowercase();
        }
        self.ident_count += 1;
        let id = self.idents;
        let header = id[0] == b'c'
            && (id[1] == b'f'
                || id[1] == b'p'
                || (id[1] == b'o' && id[2] == b'r' && (id[3] == b'f' || id[3] == b'p')));
        if header && self.paren_depth == 0 {
            if is("begin") {
                self.begin_depth += 1;
            } else if is("case") {
                if self.begin_depth >= 1 {
                    self.begin_depth += 1;
                }
            } else if is("end") {
                self.begin_depth = self.begin_depth.saturating_sub(1);
            }
        }
    }

    fn backslash(&mut self) {
        match self.peek(1) {
            b';' => {
                // `\;`: a literal `;` that separates statements of one compound command
                self.copy_pending();
                self.buf.push(';');
                self.i += 2;
                self.copied_to = self.i;
                if self.seg_has_content {
                    self.statements += 1;
                }
                self.seg_has_content = false;
                self.ident_count = 0;
            }
            b':' => {
                self.copy_pending();
                self.buf.push(':');
                self.i += 2;
                self.copied_to = self.i;
                self.seg_has_content = true;
            }
            _ => {
                self.flush();
                let start = self.i;
                let (end, newline) = meta_end(self.b, start);
                self.out.push(Chunk::Meta(MetaChunk {
                    text: &self.text[start..end],
                    newline,
                    line: self.line_at(start),
                }));
                self.i = if newline { end + 1 } else { end };
                self.buf_start = self.i;
                self.copied_to = self.i;
            }
        }
    }
}

/// End of a meta-command starting with the backslash at `start`: the first newline that is not
/// escaped by a backslash (`\` + `\n` or `\` + `\r\n`, not counting the command's own backslash).
fn meta_end(b: &[u8], start: usize) -> (usize, bool) {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\n' {
            let escaped = (i >= start + 2 && b[i - 1] == b'\\')
                || (i >= start + 3 && b[i - 1] == b'\r' && b[i - 2] == b'\\');
            if !escaped {
                return (i, true);
            }
        }
        i += 1;
    }
    (b.len(), false)
}

/// Whitespace inside meta-commands: `[ \t\r\f\v]` (newline ends the command).
pub(crate) fn is_meta_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b')
}

/// Length of a continuation marker (`\` + `\n` or `\` + `\r\n`) at `i`, if there is one.
pub(crate) fn continuation_len(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i), b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), Some(b'\n'), _) => Some(2),
        (Some(b'\\'), Some(b'\r'), Some(b'\n')) => Some(3),
        _ => None,
    }
}

/// A whitespace-separated word of a meta-command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word<'a> {
    pub text: &'a str,
    /// pgbench's notion of the word's column: end of the lexer match minus the word length
    /// (so a word glued to a continuation is reported a little to the right, like pgbench).
    pub offset: usize,
}

/// Lex one word of meta-command `text` from `*pos`, advancing it. `None` at end of command.
pub fn next_word<'a>(text: &'a str, pos: &mut usize) -> Option<Word<'a>> {
    let b = text.as_bytes();
    let mut i = *pos;
    loop {
        if i >= b.len() {
            *pos = i;
            return None;
        }
        if is_meta_space(b[i]) {
            i += 1;
        } else if let Some(n) = continuation_len(b, i) {
            i += n;
        } else {
            break;
        }
    }
    let start = i;
    while i < b.len() && !is_meta_space(b[i]) && b[i] != b'\n' {
        i += 1;
    }
    let mut end_of_match = i;
    let mut word_end = i;
    // a word ending with a backslash directly followed by a newline: the backslash is a
    // continuation marker, not part of the word
    if i > start && b[i - 1] == b'\\' {
        if let Some(n) = continuation_len(b, i - 1) {
            word_end = i - 1;
            end_of_match = i - 1 + n;
        }
    }
    *pos = end_of_match;
    let word = &text[start..word_end];
    Some(Word {
        text: word,
        offset: end_of_match - word.len(),
    })
}

/// All words of a meta-command from `pos` on.
pub fn words(text: &str, mut pos: usize) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    while let Some(w) = next_word(text, &mut pos) {
        out.push(w);
    }
    out
}
