//! Expression evaluation (owned by the evaluator).

use crate::ast::Expr;
use crate::prng::Prng;
use crate::value::Value;
use crate::vars::{VarId, Vars};

#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub message: String,
}

pub struct EvalCtx<'a> {
    pub vars: &'a mut Vars,
    pub rng: &'a mut Prng,
    pub default_seed: VarId,
    /// Receives each `debug()` value; the runner formats and prints it.
    pub debug: &'a mut dyn FnMut(&Value),
}

pub fn eval(_expr: &Expr, _ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    unimplemented!()
}
