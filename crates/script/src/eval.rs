//! Expression evaluation with pgbench's semantics (reference §6.3–6.5): NULL propagation (except
//! `IS` and `debug`), lazy AND/OR/CASE with pgbench's NULL rules, int64 overflow errors, `rint`
//! coercions, raw x86-64 shifts, and the run-time error messages.
//!
//! Evaluation does not allocate: arguments are evaluated into fixed arrays on the stack. Only
//! error paths build a message `String`.
//!
//! Shifts: pgbench computes `a << b` / `a >> b` with C's int64 shifts, undefined for counts
//! outside 0..63; on x86-64 the hardware uses the count modulo 64 (verified with pgbench 15.18:
//! `1 << 64` = 1, `1 << -1` = i64::MIN, `-8 >> 70` = -1, `5 >> -63` = 2), which is what we do.

use crate::ast::{Expr, Func};
pub use crate::error::EvalError;
use crate::format::G15;
use crate::prng::Prng;
use crate::random;
use crate::value::Value;
use crate::vars::{VarId, VarTable, Vars};

/// Maximum number of evaluated arguments of one function call (pgbench's `MAX_FARGS`).
pub const MAX_FARGS: usize = 16;

/// Everything an evaluation needs from the client executing it.
pub struct EvalCtx<'a> {
    pub vars: &'a mut Vars,
    /// Variable names, for `undefined variable "%s"` and `malformed variable ...` messages.
    pub names: &'a VarTable,
    /// The client's PRNG (random functions).
    pub rng: &'a mut Prng,
    /// The `:default_seed` slot. Informational: the parser already desugars the default seed
    /// argument of `hash*()`/`permute()` into `Var(default_seed)`.
    pub default_seed: VarId,
    /// Receives each `debug()` argument; the runner prints [`debug_line`] of it to stderr.
    pub debug: &'a mut dyn FnMut(&Value),
}

/// pgbench's `debug()` output line (without the trailing newline):
/// `debug(script=0,command=1): int 17`. `script` is 0-based, `command_1based` 1-based.
pub fn debug_line(script: usize, command_1based: usize, v: &Value) -> String {
    let head = format!("debug(script={script},command={command_1based}): ");
    match *v {
        Value::Null => head + "null",
        Value::Bool(b) => format!("{head}boolean {b}"),
        Value::Int(i) => format!("{head}int {i}"),
        Value::Double(d) => format!("{head}double {}", G15(d)),
    }
}

/// Evaluates `expr` for one client.
pub fn eval(expr: &Expr, ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match expr {
        Expr::Const(v) => Ok(*v),
        Expr::Var(id) => ctx.vars.get(*id, ctx.names),
        Expr::Func { func, args } => match func {
            Func::And | Func::Or => eval_and_or(*func, args, ctx),
            Func::Case => eval_case(args, ctx),
            _ => eval_std(*func, args, ctx),
        },
    }
}

#[cold]
fn bad_arity() -> EvalError {
    EvalError::msg("unexpected number of arguments")
}

/// Lazy AND / OR: left NULL => NULL; left must be boolean; short-circuit; right NULL => NULL;
/// right must be boolean.
fn eval_and_or(func: Func, args: &[Expr], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let [l, r] = args else {
        return Err(bad_arity());
    };
    let a = eval(l, ctx)?;
    if a.is_null() {
        return Ok(Value::Null);
    }
    let ba = a.to_bool()?;
    match (func, ba) {
        (Func::And, false) => return Ok(Value::Bool(false)),
        (Func::Or, true) => return Ok(Value::Bool(true)),
        _ => {}
    }
    let b = eval(r, ctx)?;
    if b.is_null() {
        return Ok(Value::Null);
    }
    Ok(Value::Bool(b.to_bool()?))
}

/// Lazy CASE over `[c1, v1, c2, v2, ..., else]`: conditions use truth rules.
fn eval_case(args: &[Expr], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let mut rest = args;
    loop {
        match rest {
            [cond, then, tail @ ..] if !tail.is_empty() => {
                if eval(cond, ctx)?.truth() {
                    return eval(then, ctx);
                }
                rest = tail;
            }
            [otherwise] => return eval(otherwise, ctx),
            _ => return Err(bad_arity()),
        }
    }
}

/// Non-lazy functions: all arguments first (in order), then NULL propagation, then the function.
fn eval_std(func: Func, args: &[Expr], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match args {
        [] => apply(func, &[], ctx),
        [a] => {
            let x = eval_arg(a, ctx)?;
            apply(func, &[x], ctx)
        }
        [a, b] => {
            let x = eval_arg(a, ctx)?;
            let y = eval_arg(b, ctx)?;
            apply(func, &[x, y], ctx)
        }
        [a, b, c] => {
            let x = eval_arg(a, ctx)?;
            let y = eval_arg(b, ctx)?;
            let z = eval_arg(c, ctx)?;
            apply(func, &[x, y, z], ctx)
        }
        _ => eval_variadic(func, args, ctx),
    }
}

/// One argument: leaves are handled in place (no recursive call).
#[inline(always)]
fn eval_arg(e: &Expr, ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match e {
        Expr::Const(v) => Ok(*v),
        Expr::Var(id) => ctx.vars.get(*id, ctx.names),
        Expr::Func { .. } => eval(e, ctx),
    }
}

/// More than three arguments (least/greatest, malformed trees): a fixed array of MAX_FARGS.
#[inline(never)]
fn eval_variadic(func: Func, args: &[Expr], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let mut buf = [Value::Null; MAX_FARGS];
    eval_args(args, &mut buf, ctx)?;
    apply(func, &buf[..args.len().min(MAX_FARGS)], ctx)
}

fn eval_args(args: &[Expr], buf: &mut [Value], ctx: &mut EvalCtx<'_>) -> Result<(), EvalError> {
    for (slot, arg) in buf.iter_mut().zip(args) {
        *slot = eval_arg(arg, ctx)?;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError::msg("too many function arguments, maximum is 16"));
    }
    Ok(())
}

#[inline]
fn arg<const N: usize>(a: &[Value]) -> Result<&[Value; N], EvalError> {
    a.try_into().map_err(|_| bad_arity())
}

fn apply(func: Func, a: &[Value], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    use Func::*;
    if !matches!(func, Is | Debug) && a.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    match func {
        Add | Sub | Mul | Div | Mod => {
            let [l, r] = arg::<2>(a)?;
            arithmetic(func, l, r)
        }
        Eq | Ne | Lt | Le => {
            let [l, r] = arg::<2>(a)?;
            compare(func, l, r)
        }
        BitAnd | BitOr | BitXor | Lshift | Rshift => {
            let [l, r] = arg::<2>(a)?;
            bitwise(func, *l, *r)
        }
        Not => Ok(Value::Bool(!arg::<1>(a)?[0].to_bool()?)),
        Is => {
            let [l, r] = arg::<2>(a)?;
            Ok(Value::Bool(is_same(*l, *r)))
        }
        Debug => {
            let v = arg::<1>(a)?[0];
            (ctx.debug)(&v);
            Ok(v)
        }
        Abs => abs(arg::<1>(a)?[0]),
        Double => Ok(Value::Double(arg::<1>(a)?[0].to_double()?)),
        Int => Ok(Value::Int(arg::<1>(a)?[0].to_int()?)),
        Exp => Ok(Value::Double(arg::<1>(a)?[0].to_double()?.exp())),
        Ln => Ok(Value::Double(arg::<1>(a)?[0].to_double()?.ln())),
        Sqrt => Ok(Value::Double(arg::<1>(a)?[0].to_double()?.sqrt())),
        Pow => {
            let [x, y] = arg::<2>(a)?;
            Ok(Value::Double(x.to_double()?.powf(y.to_double()?)))
        }
        Pi => {
            arg::<0>(a)?;
            Ok(Value::Double(std::f64::consts::PI))
        }
        Greatest | Least => extremum(func == Least, a),
        Random | RandomExponential | RandomGaussian | RandomZipfian => random_fn(func, a, ctx),
        HashMurmur2 | HashFnv1a | Permute => hash_fn(func, a),
        And | Or | Case => Err(bad_arity()),
    }
}

/// `& | # << >>` on integers.
#[inline]
fn bitwise(func: Func, l: Value, r: Value) -> Result<Value, EvalError> {
    let (x, y) = (l.to_int()?, r.to_int()?);
    Ok(Value::Int(match func {
        Func::BitAnd => x & y,
        Func::BitOr => x | y,
        Func::BitXor => x ^ y,
        // count modulo 64, as x86-64's shl/sar (see the module comment)
        Func::Lshift => x.wrapping_shl(y as u32),
        _ => x.wrapping_shr(y as u32),
    }))
}

/// `IS`: same type and value (doubles bit for bit), NULL IS NULL.
#[inline]
fn is_same(l: Value, r: Value) -> bool {
    match (l, r) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        _ => false,
    }
}

/// `abs()`, as pgbench computes it.
#[inline]
fn abs(v: Value) -> Result<Value, EvalError> {
    match v {
        // C negation: abs(INT64_MIN) wraps to itself
        Value::Int(i) => Ok(Value::Int(if i < 0 { i.wrapping_neg() } else { i })),
        // pgbench reads the value union as a double without a type check. For a boolean
        // that is the byte 0/1 over (usually) zero bytes: 0 or the smallest subnormal.
        // (For computed booleans pgbench reads uninitialised bytes; we cannot mimic that.)
        Value::Bool(b) => Ok(Value::Double(f64::from_bits(u64::from(b)))),
        // `d < 0.0 ? -d : d`: abs(-0.0) stays -0.0
        v => {
            let d = v.to_double()?;
            Ok(Value::Double(if d < 0.0 { -d } else { d }))
        }
    }
}

/// `hash_murmur2`, `hash_fnv1a`, `permute`.
#[inline]
fn hash_fn(func: Func, a: &[Value]) -> Result<Value, EvalError> {
    if func == Func::Permute {
        let [v, n, s] = arg::<3>(a)?;
        let (v, n, s) = (v.to_int()?, n.to_int()?, s.to_int()?);
        if n <= 0 {
            return Err(EvalError::msg(
                "permute size parameter must be greater than zero",
            ));
        }
        return Ok(Value::Int(random::permute(v, n, s)));
    }
    let [v, s] = arg::<2>(a)?;
    let (v, s) = (v.to_int()?, s.to_int()?);
    Ok(Value::Int(if func == Func::HashMurmur2 {
        random::hash_murmur2(v, s)
    } else {
        random::hash_fnv1a(v, s)
    }))
}

/// `+ - * /` (double if either side is double) and `%` (always int, doubles `rint`-ed).
fn arithmetic(func: Func, l: &Value, r: &Value) -> Result<Value, EvalError> {
    let any_double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
    if any_double && func != Func::Mod {
        let (x, y) = (l.to_double()?, r.to_double()?);
        return Ok(Value::Double(match func {
            Func::Add => x + y,
            Func::Sub => x - y,
            Func::Mul => x * y,
            _ => x / y,
        }));
    }
    let (x, y) = (l.to_int()?, r.to_int()?);
    let res = match func {
        Func::Add => x
            .checked_add(y)
            .ok_or_else(|| EvalError::msg("bigint add out of range"))?,
        Func::Sub => x
            .checked_sub(y)
            .ok_or_else(|| EvalError::msg("bigint sub out of range"))?,
        Func::Mul => x
            .checked_mul(y)
            .ok_or_else(|| EvalError::msg("bigint mul out of range"))?,
        _ => {
            if y == 0 {
                return Err(EvalError::msg("division by zero"));
            }
            if y == -1 {
                return match func {
                    Func::Div if x == i64::MIN => Err(EvalError::msg("bigint div out of range")),
                    Func::Div => Ok(Value::Int(-x)),
                    _ => Ok(Value::Int(0)),
                };
            }
            if func == Func::Div {
                x / y
            } else {
                x % y
            }
        }
    };
    Ok(Value::Int(res))
}

/// `= <> < <=`: double comparison if either side is double, else int64.
fn compare(func: Func, l: &Value, r: &Value) -> Result<Value, EvalError> {
    let any_double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
    let b = if any_double {
        let (x, y) = (l.to_double()?, r.to_double()?);
        match func {
            Func::Eq => x == y,
            Func::Ne => x != y,
            Func::Lt => x < y,
            _ => x <= y,
        }
    } else {
        let (x, y) = (l.to_int()?, r.to_int()?);
        match func {
            Func::Eq => x == y,
            Func::Ne => x != y,
            Func::Lt => x < y,
            _ => x <= y,
        }
    };
    Ok(Value::Bool(b))
}

/// `least`/`greatest`: double if any argument is double, with C's `Min`/`Max` macros
/// (`x < y ? x : y`), so NaN handling depends on the argument order like in pgbench.
fn extremum(least: bool, a: &[Value]) -> Result<Value, EvalError> {
    let Some(first) = a.first() else {
        return Err(bad_arity());
    };
    if a.iter().any(|v| matches!(v, Value::Double(_))) {
        let mut m = first.to_double()?;
        for v in &a[1..] {
            let d = v.to_double()?;
            m = if least {
                if m < d {
                    m
                } else {
                    d
                }
            } else if m > d {
                m
            } else {
                d
            };
        }
        Ok(Value::Double(m))
    } else {
        let mut m = first.to_int()?;
        for v in &a[1..] {
            let i = v.to_int()?;
            m = if least { m.min(i) } else { m.max(i) };
        }
        Ok(Value::Int(m))
    }
}

fn random_fn(func: Func, a: &[Value], ctx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let (lb, ub) = match a {
        [lb, ub] if func == Func::Random => (lb, ub),
        [lb, ub, _] if func != Func::Random => (lb, ub),
        _ => return Err(bad_arity()),
    };
    let (min, max) = (lb.to_int()?, ub.to_int()?);
    random::check_range(min, max)?;
    let rng = &mut *ctx.rng;
    let v = match func {
        Func::Random => random::uniform(rng, min, max),
        _ => {
            let p = a[2].to_double()?;
            match func {
                Func::RandomGaussian => {
                    random::check_gaussian(p)?;
                    random::gaussian(rng, min, max, p)
                }
                Func::RandomZipfian => {
                    random::check_zipfian(p)?;
                    random::zipfian(rng, min, max, p)
                }
                _ => {
                    random::check_exponential(p)?;
                    random::exponential(rng, min, max, p)
                }
            }
        }
    };
    Ok(Value::Int(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_fits_in_two_registers() {
        assert_eq!(std::mem::size_of::<Result<Value, EvalError>>(), 16);
    }

    #[test]
    fn debug_line_formats_like_pgbench() {
        assert_eq!(
            debug_line(0, 1, &Value::Int(17)),
            "debug(script=0,command=1): int 17"
        );
        assert_eq!(
            debug_line(1, 3, &Value::Null),
            "debug(script=1,command=3): null"
        );
        assert_eq!(
            debug_line(0, 2, &Value::Bool(true)),
            "debug(script=0,command=2): boolean true"
        );
        assert_eq!(
            debug_line(0, 2, &Value::Double(f64::INFINITY)),
            "debug(script=0,command=2): double Infinity"
        );
        assert_eq!(
            debug_line(0, 2, &Value::Double(1e30)),
            "debug(script=0,command=2): double 1e+30"
        );
    }

    #[test]
    fn silent_error_has_empty_message() {
        assert!(EvalError::silent().is_silent());
        assert!(!EvalError::msg("division by zero").is_silent());
        assert_eq!(
            EvalError::msg("division by zero").to_string(),
            "division by zero"
        );
    }
}
