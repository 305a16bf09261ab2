//! pgbench's script language, exactly: splitting scripts into commands, parsing meta-commands and
//! expressions, typed variables, evaluation, and pg_prng-compatible randomness.
//!
//! Pure: no sockets, no threads, no printing; the one I/O is reading a script file ([`file`](mod@file)). Scripts are compiled once ([`parse::parse_script`]) into
//! [`command::Script`]s whose variables are resolved to slots ([`vars::VarId`]) so the runner executes
//! them without string lookups.

pub mod ast;
pub mod builtin;
pub mod bytes;
pub mod command;
pub mod error;
pub mod eval;
pub mod file;
pub mod format;
pub mod lexer;
pub mod parse;
pub mod prng;
pub mod random;
pub mod seeding;
pub mod value;
pub mod vars;

pub use ast::{Expr, Func};
pub use command::{Command, CommandKind, QueryMode, Script, SqlCommand};
pub use error::{EvalError, ScriptError};
pub use eval::{eval, EvalCtx};
pub use prng::Prng;
pub use value::Value;
pub use vars::{VarId, VarTable, Vars};
