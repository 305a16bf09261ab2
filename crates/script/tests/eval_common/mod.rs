//! Test helpers: hand-built expression trees (the parser's desugarings applied by hand) and a
//! one-client evaluation environment seeded like pgbench.
#![allow(dead_code)]

use pgrig_script::ast::{Expr, Func};
use pgrig_script::eval::{eval, EvalCtx, EvalError};
use pgrig_script::seeding::seed_states;
use pgrig_script::{Prng, Value, VarId, VarTable, Vars};

pub fn i(v: i64) -> Expr {
    Expr::Const(Value::Int(v))
}
pub fn d(v: f64) -> Expr {
    Expr::Const(Value::Double(v))
}
pub fn b(v: bool) -> Expr {
    Expr::Const(Value::Bool(v))
}
pub fn null() -> Expr {
    Expr::Const(Value::Null)
}
pub fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func {
        func,
        args: args.into_boxed_slice(),
    }
}
pub fn add(a: Expr, b: Expr) -> Expr {
    call(Func::Add, vec![a, b])
}
pub fn sub(a: Expr, b: Expr) -> Expr {
    call(Func::Sub, vec![a, b])
}
pub fn mul(a: Expr, b: Expr) -> Expr {
    call(Func::Mul, vec![a, b])
}
pub fn div(a: Expr, b: Expr) -> Expr {
    call(Func::Div, vec![a, b])
}
pub fn modulo(a: Expr, b: Expr) -> Expr {
    call(Func::Mod, vec![a, b])
}
/// unary minus: `0 - e`
pub fn neg(e: Expr) -> Expr {
    sub(i(0), e)
}
pub fn lt(a: Expr, b: Expr) -> Expr {
    call(Func::Lt, vec![a, b])
}
/// `a > b` => `b < a`
pub fn gt(a: Expr, b: Expr) -> Expr {
    call(Func::Lt, vec![b, a])
}
pub fn eq(a: Expr, b: Expr) -> Expr {
    call(Func::Eq, vec![a, b])
}
pub fn and(a: Expr, b: Expr) -> Expr {
    call(Func::And, vec![a, b])
}
pub fn or(a: Expr, b: Expr) -> Expr {
    call(Func::Or, vec![a, b])
}
pub fn not(a: Expr) -> Expr {
    call(Func::Not, vec![a])
}
pub fn is(a: Expr, b: Expr) -> Expr {
    call(Func::Is, vec![a, b])
}
pub fn case(args: Vec<Expr>) -> Expr {
    call(Func::Case, args)
}
pub fn f1(func: Func, a: Expr) -> Expr {
    call(func, vec![a])
}
pub fn f2(func: Func, a: Expr, b: Expr) -> Expr {
    call(func, vec![a, b])
}
pub fn f3(func: Func, a: Expr, b: Expr, c: Expr) -> Expr {
    call(func, vec![a, b, c])
}

/// One client: variables, PRNG, names, `:default_seed`/`:random_seed` set as pgbench does.
pub struct Env {
    pub names: VarTable,
    pub vars: Vars,
    pub rng: Prng,
    pub default_seed: VarId,
    pub debug: Vec<Value>,
}

impl Env {
    /// Client 0 of a one-client, one-thread run with `--random-seed=seed`.
    pub fn new(seed: u64) -> Env {
        let st = seed_states(seed, 1, 1);
        let mut names = VarTable::new();
        let default_seed = names.intern("default_seed");
        let random_seed = names.intern("random_seed");
        let mut vars = Vars::with_len(names.len());
        vars.set_value(default_seed, Value::Int(st.default_seed.unwrap()));
        vars.set_value(random_seed, Value::Int(seed as i64));
        Env {
            names,
            vars,
            rng: st.clients[0],
            default_seed,
            debug: Vec::new(),
        }
    }

    pub fn var(&mut self, name: &str) -> Expr {
        Expr::Var(self.names.intern(name))
    }

    pub fn set(&mut self, name: &str, v: Value) {
        let id = self.names.intern(name);
        self.vars.set_value(id, v);
    }

    pub fn set_str(&mut self, name: &str, s: &str) {
        let id = self.names.intern(name);
        self.vars.set_str(id, s);
    }

    pub fn eval(&mut self, e: &Expr) -> Result<Value, EvalError> {
        let debug = &mut self.debug;
        let mut sink = |v: &Value| debug.push(*v);
        let mut ctx = EvalCtx {
            vars: &mut self.vars,
            names: &self.names,
            rng: &mut self.rng,
            default_seed: self.default_seed,
            debug: &mut sink,
        };
        eval(e, &mut ctx)
    }

    /// The result as `debug()` shows it (`int 17`, `double 1e+30`, ...) or `error: MESSAGE`.
    pub fn show(&mut self, e: &Expr) -> String {
        match self.eval(e) {
            Ok(v) => show_value(&v),
            Err(err) => format!("error: {err}"),
        }
    }
}

pub fn show_value(v: &Value) -> String {
    let line = pgrig_script::eval::debug_line(0, 1, v);
    line["debug(script=0,command=1): ".len()..].to_string()
}
