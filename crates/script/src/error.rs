//! The crate's errors with pgbench's exact wording: parse-time errors and their layout
//! (`ScriptError`, owned by the parser) and run-time evaluation errors (`EvalError`, raised by
//! `eval`, `value`, `vars` and `random`).
//!
//! `Display` renders the text that follows `pgbench: error: `. It may span lines (the offending
//! command text and a caret line) and never ends with a newline: the caller prints
//! `pgbench: error: {err}\n`.

use std::borrow::Cow;
use std::fmt;

/// A script error: either pgbench's `syntax_error()` layout or a one-line message
/// (`condition error in script ...`, `statement has too many arguments ...`, builtin lookups).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptError {
    Syntax(Box<SyntaxError>),
    Message(String),
}

/// pgbench's `syntax_error(source, lineno, line, command, msg, more, column)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Script name as given on the command line (or a builtin's description).
    pub source: String,
    /// 1-based line of the offending command.
    pub lineno: usize,
    /// The offending command's text (from its backslash, continuation lines included, trailing
    /// newline removed), when pgbench prints it.
    pub line: Option<String>,
    /// The meta-command word as written (`set`, `SET`, `foo`), printed as ` in command "..."`.
    pub command: Option<String>,
    pub message: String,
    /// Extra detail printed as ` (MORE)`.
    pub more: Option<String>,
    /// 0-based byte column from the backslash; printed as a caret under `line`, or as
    /// ` at column N+1` when there is no line.
    pub column: Option<usize>,
}

impl ScriptError {
    pub fn message(text: impl Into<String>) -> Self {
        ScriptError::Message(text.into())
    }

    pub fn syntax(err: SyntaxError) -> Self {
        ScriptError::Syntax(Box::new(err))
    }

    /// The syntax-error details, when this is one.
    pub fn as_syntax(&self) -> Option<&SyntaxError> {
        match self {
            ScriptError::Syntax(s) => Some(s),
            ScriptError::Message(_) => None,
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.lineno, self.message)?;
        if let Some(more) = &self.more {
            write!(f, " ({more})")?;
        }
        if let (Some(col), None) = (self.column, &self.line) {
            write!(f, " at column {}", col + 1)?;
        }
        if let Some(cmd) = &self.command {
            write!(f, " in command \"{cmd}\"")?;
        }
        if let Some(line) = &self.line {
            write!(f, "\n{line}")?;
            if let Some(col) = self.column {
                let col = original_column(line, col);
                // written out: a `{:>width$}` width above 65,535 panics in `fmt`
                f.write_str("\n")?;
                for _ in 0..col {
                    f.write_str(" ")?;
                }
                f.write_str("^ error found here")?;
            }
        }
        Ok(())
    }
}

/// `col` (a byte offset into `line`) counted in the bytes pgbench read, where a stand-in for a
/// byte that is not UTF-8 (`crate::bytes`) is one byte.
fn original_column(line: &str, col: usize) -> usize {
    if col >= line.len() || !crate::bytes::has_stand_ins(line) {
        return col;
    }
    let start = (0..=col)
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    let before = crate::bytes::encode(&line[..start]).len();
    match line[start..].chars().next() {
        Some(c) if crate::bytes::has_stand_ins(c.encode_utf8(&mut [0; 4])) => before,
        _ => before + (col - start),
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::Syntax(s) => s.fmt(f),
            ScriptError::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ScriptError {}

/// A run-time evaluation error. `Display` is pgbench's message (what follows `pgbench: error: `).
///
/// One case has no message: a variable holding the empty string (e.g. from `\gset` of a NULL or
/// empty column) fails to convert silently in pgbench; [`EvalError::is_silent`] is then true and
/// the runner prints only the `client N aborted in command ...` line.
///
/// The message is boxed so that `Result<Value, EvalError>` is 16 bytes and returned in registers
/// (errors are rare: they abort the client).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    message: Box<Cow<'static, str>>,
}

impl EvalError {
    #[cold]
    pub fn msg(m: &'static str) -> Self {
        EvalError {
            message: Box::new(Cow::Borrowed(m)),
        }
    }
    #[cold]
    pub fn text(m: String) -> Self {
        EvalError {
            message: Box::new(Cow::Owned(m)),
        }
    }
    pub fn silent() -> Self {
        Self::msg("")
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn is_silent(&self) -> bool {
        self.message.is_empty()
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(line: Option<&str>, column: Option<usize>) -> SyntaxError {
        SyntaxError {
            source: "e.sql".into(),
            lineno: 3,
            line: line.map(str::to_owned),
            command: Some("set".into()),
            message: "syntax error".into(),
            more: None,
            column,
        }
    }

    #[test]
    fn caret_is_printed_under_the_column_when_the_line_is_known() {
        let e = ScriptError::syntax(err(Some("\\set i 1 +"), Some(10)));
        assert_eq!(
            e.to_string(),
            "e.sql:3: syntax error in command \"set\"\n\\set i 1 +\n          ^ error found here"
        );
    }

    #[test]
    fn column_is_printed_inline_when_the_line_is_unknown() {
        let mut s = err(None, Some(4));
        s.more = Some("x".into());
        assert_eq!(
            ScriptError::syntax(s).to_string(),
            "e.sql:3: syntax error (x) at column 5 in command \"set\""
        );
    }

    #[test]
    fn line_without_column_has_no_caret() {
        let e = ScriptError::syntax(err(Some("\\else x"), None));
        assert_eq!(
            e.to_string(),
            "e.sql:3: syntax error in command \"set\"\n\\else x"
        );
    }
}
