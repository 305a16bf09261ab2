//! The expression tree that `\set`, `\if` and `\elif` compile to. Shapes follow pgbench's
//! `PgBenchExpr`: operators are functions with argument lists, so one evaluator handles all.
//!
//! CONTRACT shared by the parser (`parse`) and the evaluator (`eval`): change only additively.
//! Desugarings done by the parser (as pgbench's grammar does):
//! - `a > b`  => `Lt(b, a)`,  `a >= b` => `Le(b, a)` (operands swapped: b is evaluated first)
//! - `a % b`  => `Mod(a, b)`; `-e` => `Sub(Const(Int 0), e)`; `+e` => `e`; `~e` => `BitXor(Const(Int -1), e)`
//! - `-9223372036854775808` => `Const(Int(i64::MIN))`
//! - `e IS NULL` / `e ISNULL` => `Is(e, Const(Null))`; `e IS NOT NULL` / `e NOTNULL` => `Not(Is(e, Const(Null)))`
//! - `e IS TRUE` => `Is(e, Const(Bool true))`; `IS NOT TRUE` => `Not(Is(e, Const(Bool true)))`; FALSE alike
//! - `CASE WHEN c1 THEN v1 [WHEN c2 THEN v2 ...] [ELSE e] END` => `Case([c1, v1, c2, v2, ..., e])`
//!   (missing ELSE => `Const(Null)` as last argument; the argument count is always odd)
//! - `hash(v)`, `hash_murmur2(v)`, `hash_fnv1a(v)` => second argument `Var(default_seed)`;
//!   `permute(i, n)` => third argument `Var(default_seed)` (looked up at run time like pgbench)
//! - `hash(...)` is `HashMurmur2`; `power` is `Pow`.

use crate::value::Value;
use crate::vars::VarId;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(VarId),
    Func { func: Func, args: Box<[Expr]> },
}

/// Operators and built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    // arithmetic and comparison operators
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    BitAnd,
    BitOr,
    BitXor,
    Lshift,
    Rshift,
    // logic (lazy: And, Or, Case)
    And,
    Or,
    Not,
    Is,
    Case,
    // named functions
    Abs,
    Debug,
    Double,
    Int,
    Exp,
    Ln,
    Sqrt,
    Pow,
    Pi,
    Greatest,
    Least,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
    HashMurmur2,
    HashFnv1a,
    Permute,
}
