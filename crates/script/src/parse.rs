//! Compiling a script: split it ([`crate::lexer`]), parse each meta-command and expression, merge
//! `\gset`/`\aset` into the preceding SQL command, check the `\if` structure and compute its jump
//! targets, and build the SQL commands for the query mode. Entry point: [`parse_script`].

mod expr;
mod expr_lex;
mod meta;
mod sql;

use std::fmt;

use crate::ast::Expr;
use crate::command::{Command, CommandKind, QueryMode};
use crate::error::{ScriptError, SyntaxError};
use crate::lexer::{split_script, Chunk};
use crate::vars::VarTable;

pub use sql::MAX_PARAMS;

/// An expression error: message, optional detail and 0-based column from the start of the text
/// given to the expression lexer (for meta-commands: from the backslash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub message: &'static str,
    pub more: Option<String>,
    pub column: usize,
}

impl ExprError {
    /// An error reported at the token ending at `token_end` (pgbench points at its last byte).
    pub(crate) fn at_end(message: &'static str, more: Option<&str>, token_end: usize) -> Self {
        ExprError {
            message,
            more: more.map(str::to_owned),
            column: token_end.saturating_sub(1),
        }
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message)?;
        if let Some(m) = &self.more {
            write!(f, " ({m})")?;
        }
        write!(f, " at column {}", self.column + 1)
    }
}

/// Parse one expression (as written after `\set var`), up to a newline or the end of `text`.
pub fn parse_expr(text: &str, vars: &mut VarTable) -> Result<Expr, ExprError> {
    let (text, newline) = match text.find('\n') {
        Some(i) => (&text[..i], true),
        None => (text, false),
    };
    expr::ExprParser::new(expr_lex::ExprLexer::new(text, 0, newline), vars).parse_all()
}

/// Compile script `text` (named `source` in messages: the file name as given, or a builtin's
/// description). Variables are interned into `vars`; in prepared mode each SQL command takes the
/// next `P_<n>` name from `prepared_counter`, shared by all scripts of a run.
///
/// Errors come in pgbench's order: the first syntax error, then the `\if` structure, then (extended
/// and prepared modes) commands with more than [`MAX_PARAMS`] parameters. An empty command list is
/// not an error here.
pub fn parse_script(
    source: &str,
    text: &str,
    vars: &mut VarTable,
    mode: QueryMode,
    prepared_counter: &mut usize,
) -> Result<Vec<Command>, ScriptError> {
    let mut commands: Vec<Command> = Vec::new();
    for chunk in split_script(text) {
        match chunk {
            Chunk::Sql(c) => {
                let sql = sql::compile_sql(&c, vars, mode, prepared_counter);
                let first_line = sql::sql_first_line(&c.text);
                commands.push(Command {
                    line: c.line,
                    first_line,
                    kind: CommandKind::Sql(sql),
                });
            }
            Chunk::Meta(m) => match meta::parse_meta(&m, source, vars)? {
                None => {}
                Some(meta::Meta::Command(kind)) => {
                    commands.push(Command {
                        line: m.line,
                        first_line: m.display_text().to_owned(),
                        kind,
                    });
                }
                Some(meta::Meta::Gset(g)) => {
                    let gset_error = |more: Option<String>| {
                        ScriptError::syntax(SyntaxError {
                            source: source.to_owned(),
                            lineno: m.line,
                            line: None,
                            command: None,
                            message: "\\gset must follow an SQL command".to_owned(),
                            more,
                            column: None,
                        })
                    };
                    match commands.last_mut() {
                        None => return Err(gset_error(None)),
                        Some(Command {
                            kind: CommandKind::Sql(s),
                            ..
                        }) if s.gset.is_none() => s.gset = Some(g),
                        Some(Command {
                            kind: CommandKind::Sql(_),
                            ..
                        }) => return Err(gset_error(None)),
                        Some(prev) => return Err(gset_error(Some(prev.first_line.clone()))),
                    }
                }
            },
        }
    }
    resolve_conditionals(source, &mut commands)?;
    for c in &commands {
        if let CommandKind::Sql(s) = &c.kind {
            sql::check_params(s, mode)?;
        }
    }
    Ok(commands)
}

/// Check the `\if`/`\elif`/`\else`/`\endif` structure (pgbench's messages, 1-based command numbers)
/// and fill in the jump targets.
fn resolve_conditionals(source: &str, commands: &mut [Command]) -> Result<(), ScriptError> {
    struct Open {
        /// Branch commands of this `\if` so far (the `\if`, `\elif`s, `\else`).
        branches: Vec<usize>,
        seen_else: bool,
    }
    let error = |i: usize, msg: &str| {
        ScriptError::message(format!(
            "condition error in script \"{source}\" command {}: {msg}",
            i + 1
        ))
    };
    let mut stack: Vec<Open> = Vec::new();
    for i in 0..commands.len() {
        match commands[i].kind {
            CommandKind::If { .. } => stack.push(Open {
                branches: vec![i],
                seen_else: false,
            }),
            CommandKind::Elif { .. } | CommandKind::Else { .. } => {
                let is_else = matches!(commands[i].kind, CommandKind::Else { .. });
                let word = if is_else { "\\else" } else { "\\elif" };
                let Some(open) = stack.last_mut() else {
                    return Err(error(i, &format!("{word} without matching \\if")));
                };
                if open.seen_else {
                    return Err(error(i, &format!("{word} after \\else")));
                }
                let prev = *open.branches.last().unwrap_or(&i);
                set_next(&mut commands[prev].kind, i);
                open.branches.push(i);
                open.seen_else = is_else;
            }
            CommandKind::EndIf => {
                let Some(open) = stack.pop() else {
                    return Err(error(i, "\\endif without matching \\if"));
                };
                if let Some(&last) = open.branches.last() {
                    set_next(&mut commands[last].kind, i);
                }
                for &b in &open.branches {
                    match &mut commands[b].kind {
                        CommandKind::Elif { end, .. } | CommandKind::Else { end } => *end = i,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(error(commands.len(), "\\if without matching \\endif"));
    }
    Ok(())
}

/// Where a false `\if`/`\elif` condition continues.
fn set_next(kind: &mut CommandKind, target: usize) {
    match kind {
        CommandKind::If { next, .. } | CommandKind::Elif { next, .. } => *next = target,
        _ => {}
    }
}
