//! Backslash meta-commands: `\set`, `\setshell`, `\shell`, `\sleep`, `\if`/`\elif`/`\else`/`\endif`,
//! `\gset`/`\aset`, the pipeline commands and the legacy `\setrandom`, with pgbench's argument
//! checks, messages and error columns.

use super::expr::ExprParser;
use super::expr_lex::ExprLexer;
use crate::ast::{Expr, Func};
use crate::command::{CommandKind, Gset, ShellArg, SleepArg};
use crate::error::{ScriptError, SyntaxError};
use crate::lexer::{next_word, MetaChunk, Word};
use crate::value::Value;
use crate::vars::VarTable;

/// pgbench's `MAX_ARGS`: a meta-command has at most this many words, its name included.
const MAX_ARGS: usize = 256;

pub(crate) enum Meta {
    Command(CommandKind),
    /// `\gset`/`\aset`, to be merged into the preceding SQL command.
    Gset(Gset),
}

/// Reports errors about one meta-command.
struct Ctx<'a> {
    source: &'a str,
    chunk: &'a MetaChunk<'a>,
    name: &'a str,
}

impl Ctx<'_> {
    fn error(
        &self,
        with_line: bool,
        message: &str,
        more: Option<&str>,
        column: Option<usize>,
    ) -> ScriptError {
        ScriptError::syntax(SyntaxError {
            source: self.source.to_owned(),
            lineno: self.chunk.line,
            line: with_line.then(|| self.chunk.display_text().to_owned()),
            command: Some(self.name.to_owned()),
            message: message.to_owned(),
            more: more.map(str::to_owned),
            column,
        })
    }
}

/// Parse one meta-command. `Ok(None)` when there is no command word (a lone backslash).
pub(crate) fn parse_meta(
    chunk: &MetaChunk<'_>,
    source: &str,
    vars: &mut VarTable,
) -> Result<Option<Meta>, ScriptError> {
    let text = chunk.text;
    let mut pos = 1;
    let Some(cmd) = next_word(text, &mut pos) else {
        return Ok(None);
    };
    let cx = Ctx {
        source,
        chunk,
        name: cmd.text,
    };
    let lower = cmd.text.to_ascii_lowercase();
    if matches!(lower.as_str(), "set" | "if" | "elif") {
        return expression_command(&cx, &lower, pos, vars).map(|k| Some(Meta::Command(k)));
    }
    let mut args: Vec<Word<'_>> = Vec::new();
    while let Some(w) = next_word(text, &mut pos) {
        if args.len() + 1 >= MAX_ARGS {
            return Err(cx.error(false, "too many arguments", None, None));
        }
        args.push(w);
    }
    word_command(&cx, &lower, &args, vars).map(Some)
}

/// `\set VAR EXPR`, `\if EXPR`, `\elif EXPR`: the rest of the command from `pos` is an
/// expression.
fn expression_command(
    cx: &Ctx<'_>,
    lower: &str,
    mut pos: usize,
    vars: &mut VarTable,
) -> Result<CommandKind, ScriptError> {
    let text = cx.chunk.text;
    let var = if lower == "set" {
        match next_word(text, &mut pos) {
            Some(w) => Some(w.text),
            None => return Err(cx.error(false, "missing argument", None, None)),
        }
    } else {
        None
    };
    let lexer = ExprLexer::new(text, pos, cx.chunk.newline);
    let expr = ExprParser::new(lexer, vars)
        .parse_all()
        .map_err(|e| cx.error(true, e.message, e.more.as_deref(), Some(e.column)))?;
    Ok(match (lower, var) {
        ("set", Some(v)) => CommandKind::Set {
            var: vars.intern(v),
            expr,
        },
        ("if", _) => CommandKind::If {
            cond: expr,
            next: 0,
        },
        _ => CommandKind::Elif {
            cond: expr,
            next: 0,
            end: 0,
        },
    })
}

/// The meta-commands made of words: `\sleep`, `\shell`, `\setshell`, `\gset`/`\aset`, the ones
/// without arguments, and the removed `\setrandom`.
fn word_command(
    cx: &Ctx<'_>,
    lower: &str,
    args: &[Word<'_>],
    vars: &mut VarTable,
) -> Result<Meta, ScriptError> {
    let no_args = |kind: CommandKind| {
        if args.is_empty() {
            Ok(Meta::Command(kind))
        } else {
            Err(cx.error(true, "unexpected argument", None, None))
        }
    };
    match lower {
        "sleep" => sleep(cx, args, vars).map(Meta::Command),
        "setshell" => {
            if args.len() < 2 {
                return Err(cx.error(true, "missing argument", None, None));
            }
            let var = vars.intern(args[0].text);
            Ok(Meta::Command(CommandKind::SetShell {
                var,
                args: shell_args(&args[1..], vars),
            }))
        }
        "shell" => {
            if args.is_empty() {
                return Err(cx.error(true, "missing command", None, None));
            }
            Ok(Meta::Command(CommandKind::Shell {
                args: shell_args(args, vars),
            }))
        }
        "else" => no_args(CommandKind::Else { end: 0 }),
        "endif" => no_args(CommandKind::EndIf),
        "startpipeline" => no_args(CommandKind::StartPipeline),
        "syncpipeline" => no_args(CommandKind::SyncPipeline),
        "endpipeline" => no_args(CommandKind::EndPipeline),
        "gset" | "aset" => {
            if args.len() > 1 {
                return Err(cx.error(true, "too many arguments", None, None));
            }
            let prefix = args.first().map(|w| w.text.to_owned()).unwrap_or_default();
            Ok(Meta::Gset(Gset {
                prefix,
                all: lower == "aset",
            }))
        }
        "setrandom" => setrandom(cx, args, vars).map(Meta::Command),
        _ => Err(cx.error(true, "invalid command", None, None)),
    }
}

/// `:name` => variable, `::x` => literal `:x`, anything else literal.
fn shell_args(words: &[Word<'_>], vars: &mut VarTable) -> Vec<ShellArg> {
    words
        .iter()
        .map(|w| match w.text.strip_prefix(':') {
            Some(rest) if rest.starts_with(':') => ShellArg::Literal(rest.to_owned()),
            Some(name) => ShellArg::Var {
                var: vars.intern(name),
                name: name.to_owned(),
            },
            None => ShellArg::Literal(w.text.to_owned()),
        })
        .collect()
}

/// C's `atoi()` (as glibc does it: `strtol` clamped to `long`, then truncated to `int`).
pub(crate) fn atoi(s: &str) -> i64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && crate::lexer::is_c_space(b[i]) {
        i += 1;
    }
    let neg = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut v: i128 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = (v * 10 + i128::from(b[i] - b'0')).min(i128::from(i64::MAX) + 1);
        i += 1;
    }
    let v = if neg { -v } else { v };
    let v = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    i64::from(v as i32)
}

fn sleep(cx: &Ctx<'_>, args: &[Word<'_>], vars: &mut VarTable) -> Result<CommandKind, ScriptError> {
    let col = |w: &Word<'_>| Some(w.offset);
    if args.is_empty() {
        return Err(cx.error(true, "missing argument", None, None));
    }
    if args.len() > 2 {
        return Err(cx.error(true, "too many arguments", None, col(&args[2])));
    }
    let value = args[0];
    let mut unit: Option<(&str, usize)> = args.get(1).map(|w| (w.text, w.offset));
    let duration = if let Some(name) = value.text.strip_prefix(':') {
        SleepArg::Var {
            var: vars.intern(name),
            name: name.to_owned(),
        }
    } else {
        let b = value.text.as_bytes();
        let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
        let have_digit = b.get(i).is_some_and(u8::is_ascii_digit);
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() {
            if unit.is_none() && have_digit {
                unit = Some((&value.text[i..], value.offset + i));
            } else {
                let msg = "invalid sleep time, must be an integer";
                return Err(cx.error(true, msg, Some(value.text), col(&value)));
            }
        }
        SleepArg::Literal(atoi(value.text))
    };
    let unit_us = match unit {
        None => 1_000_000,
        Some((u, _)) if u.eq_ignore_ascii_case("us") => 1,
        Some((u, _)) if u.eq_ignore_ascii_case("ms") => 1_000,
        Some((u, _)) if u.eq_ignore_ascii_case("s") => 1_000_000,
        Some((u, off)) => {
            return Err(cx.error(
                true,
                "unrecognized time unit, must be us, ms or s",
                Some(u),
                Some(off),
            ));
        }
    };
    Ok(CommandKind::Sleep { duration, unit_us })
}

/// Legacy (pgbench <= 9.5) `\setrandom var min max [uniform | gaussian T | exponential T]`,
/// compiled to `\set var random(...)` / `random_gaussian(...)` / `random_exponential(...)`.
/// Error wording follows pgbench 9.5.
fn setrandom(
    cx: &Ctx<'_>,
    args: &[Word<'_>],
    vars: &mut VarTable,
) -> Result<CommandKind, ScriptError> {
    if args.len() < 3 {
        return Err(cx.error(true, "missing arguments", None, None));
    }
    let dist = args.get(3).map(|w| w.text.to_ascii_lowercase());
    let func = match dist.as_deref() {
        None | Some("uniform") => {
            if args.len() > 4 {
                return Err(cx.error(
                    true,
                    "too many arguments",
                    Some(args[3].text),
                    Some(args[4].offset),
                ));
            }
            Func::Random
        }
        Some(d @ ("gaussian" | "exponential")) => {
            if args.len() < 5 {
                return Err(cx.error(true, "missing parameter", Some(args[3].text), None));
            }
            if args.len() > 5 {
                return Err(cx.error(
                    true,
                    "too many arguments",
                    Some(args[3].text),
                    Some(args[5].offset),
                ));
            }
            if d == "gaussian" {
                Func::RandomGaussian
            } else {
                Func::RandomExponential
            }
        }
        Some(_) => {
            return Err(cx.error(
                true,
                "unexpected argument",
                Some(args[3].text),
                Some(args[3].offset),
            ))
        }
    };
    let mut operands = vec![operand(cx, &args[1], vars)?, operand(cx, &args[2], vars)?];
    if func != Func::Random {
        operands.push(operand(cx, &args[4], vars)?);
    }
    let var = vars.intern(args[0].text);
    Ok(CommandKind::Set {
        var,
        expr: Expr::Func {
            func,
            args: operands.into_boxed_slice(),
        },
    })
}

/// A `\setrandom` bound or parameter: `:variable`, integer or double.
fn operand(cx: &Ctx<'_>, w: &Word<'_>, vars: &mut VarTable) -> Result<Expr, ScriptError> {
    if let Some(name) = w.text.strip_prefix(':') {
        return Ok(Expr::Var(vars.intern(name)));
    }
    if let Ok(v) = w.text.parse::<i64>() {
        return Ok(Expr::Const(Value::Int(v)));
    }
    let looks_numeric = w
        .text
        .bytes()
        .all(|b| b.is_ascii_digit() || b".+-eE".contains(&b));
    match w.text.parse::<f64>() {
        Ok(v) if looks_numeric && v.is_finite() => Ok(Expr::Const(Value::Double(v))),
        _ => Err(cx.error(true, "invalid number", Some(w.text), Some(w.offset))),
    }
}
