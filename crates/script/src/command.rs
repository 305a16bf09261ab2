//! Compiled scripts: the command list the runner executes. Produced by `parse`, consumed by the
//! engine.
//!
//! CONTRACT shared by `parse` (producer) and the engine (consumer): change only additively.

use crate::ast::Expr;
use crate::vars::VarId;

/// pgbench's `-M` query mode. It changes how SQL commands are compiled and sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueryMode {
    #[default]
    Simple,
    Extended,
    Prepared,
}

impl QueryMode {
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// A query mode by its [`name`](QueryMode::name) (`-M`, `pgrig run --protocol`, a study's
/// `protocol`); the error says which names there are.
impl std::str::FromStr for QueryMode {
    type Err = String;

    fn from_str(s: &str) -> Result<QueryMode, String> {
        [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("invalid query mode \"{s}\" (expected simple, extended or prepared)")
            })
    }
}

/// One script (`-f FILE`, `-b NAME`), compiled.
#[derive(Clone, Debug)]
pub struct Script {
    /// What the report calls it: the file name as given, or the builtin's description
    /// (`<builtin: TPC-B (sort of)>`).
    pub desc: String,
    /// `@W` weight (1 when not given).
    pub weight: i64,
    pub commands: Vec<Command>,
}

#[derive(Clone, Debug)]
pub struct Command {
    /// 1-based line number of the command's first line in its source.
    pub line: usize,
    /// The text `-r` prints for this command: SQL: first line after comment stripping (≤127 bytes);
    /// meta-commands: the whole command text including continuation lines, trailing newline removed.
    pub first_line: String,
    pub kind: CommandKind,
}

#[derive(Clone, Debug)]
pub enum CommandKind {
    Sql(SqlCommand),
    Set {
        var: VarId,
        expr: Expr,
    },
    SetShell {
        var: VarId,
        args: Vec<ShellArg>,
    },
    Shell {
        args: Vec<ShellArg>,
    },
    Sleep {
        duration: SleepArg,
        /// multiplier to microseconds: 1 (us), 1000 (ms), 1_000_000 (s, the default)
        unit_us: i64,
    },
    /// `\if`: when `cond` is false, continue at `next` (index of the matching `\elif`, `\else` or
    /// `\endif`), evaluating an `\elif` found there.
    If {
        cond: Expr,
        next: usize,
    },
    /// `\elif`: reached by falling through (a previous branch ran) => continue after `end` (the
    /// matching `\endif`); reached from a false branch => evaluate `cond`, false => go to `next`.
    Elif {
        cond: Expr,
        next: usize,
        end: usize,
    },
    /// `\else`: reached by falling through => continue after `end`; reached from a false branch =>
    /// run its body.
    Else {
        end: usize,
    },
    EndIf,
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

impl CommandKind {
    /// The meta-command word pgbench prints in `client N aborted in command M (WORD) of script S`.
    pub fn meta_name(&self) -> &'static str {
        match self {
            CommandKind::Sql(_) => "SQL",
            CommandKind::Set { .. } => "set",
            CommandKind::SetShell { .. } => "setshell",
            CommandKind::Shell { .. } => "shell",
            CommandKind::Sleep { .. } => "sleep",
            CommandKind::If { .. } => "if",
            CommandKind::Elif { .. } => "elif",
            CommandKind::Else { .. } => "else",
            CommandKind::EndIf => "endif",
            CommandKind::StartPipeline => "startpipeline",
            CommandKind::SyncPipeline => "syncpipeline",
            CommandKind::EndPipeline => "endpipeline",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SleepArg {
    Literal(i64),
    /// `\sleep :name` — `name` kept for the error messages.
    Var {
        var: VarId,
        name: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ShellArg {
    Literal(String),
    /// `:name` — `name` kept for `undefined variable ":name"`.
    Var {
        var: VarId,
        name: String,
    },
}

/// An SQL command (possibly compound: several statements glued with `\;`).
#[derive(Clone, Debug)]
pub struct SqlCommand {
    /// The command text as written (leading comments/whitespace stripped, `\;` turned into `;`),
    /// without variable substitution.
    pub text: String,
    /// `text` split into literal pieces and `:name` references, for simple-mode substitution: a
    /// defined variable is replaced by its text value, an undefined one is left as `:name`.
    pub parts: Vec<SqlPart>,
    /// `text` with each `:name` occurrence replaced by `$1, $2, ...` (extended/prepared modes).
    pub param_sql: String,
    /// The bytes of `param_sql` as sent (the script file's bytes: see [`crate::bytes`]).
    pub param_sql_bytes: Vec<u8>,
    /// The variable of each `$n`, in order (duplicates included). Undefined at run time => NULL.
    pub params: Vec<VarId>,
    /// Prepared-statement name `P_<n>`, n = global counter over all SQL commands of all scripts.
    pub prepared_name: String,
    /// Number of statements (1 + number of `\;` separators that end a non-empty statement).
    pub statements: usize,
    /// `\gset [prefix]` / `\aset [prefix]` following the command.
    pub gset: Option<Gset>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SqlPart {
    /// Literal SQL, as the bytes sent (the script file's bytes: see [`crate::bytes`]).
    Lit(Vec<u8>),
    Var {
        var: VarId,
        name: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Gset {
    pub prefix: String,
    /// `\aset` (every result's last row) instead of `\gset` (last result, exactly one row).
    pub all: bool,
}
