//! The expression parser: a precedence-climbing parser that resolves operators exactly like
//! pgbench's bison grammar (`exprparse.y`), including where it detects errors (the lookahead token
//! that cannot continue a valid prefix) and the desugarings documented in [`crate::ast`].
//!
//! Precedence, lowest first: OR, AND, NOT (right), IS/ISNULL/NOTNULL, comparisons (non-associative),
//! `| # & << >> ~` (the prefix `~` binds at this level too, as in pgbench), `+ -`, `* / %`,
//! unary `+ -` (right).

use super::expr_lex::{ExprLexer, Tok};
use super::ExprError;
use crate::ast::{Expr, Func};
use crate::value::Value;
use crate::vars::VarTable;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Or = 1,
    And,
    Not,
    Is,
    Cmp,
    Bit,
    Add,
    Mul,
    Unary,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Assoc {
    Left,
    Right,
    Neither,
}

/// The operator whose right operand is being parsed.
type Pending = Option<(Level, Assoc)>;

/// Binary and postfix operators: precedence level and associativity.
fn infix(tok: &Tok) -> Option<(Level, Assoc)> {
    use Tok::*;
    Some(match tok {
        Or => (Level::Or, Assoc::Left),
        And => (Level::And, Assoc::Left),
        Is | IsNull | NotNull => (Level::Is, Assoc::Neither),
        Lt | Gt | Eq | Le | Ge | Ne => (Level::Cmp, Assoc::Neither),
        BitOr | Hash | BitAnd | Shl | Shr => (Level::Bit, Assoc::Left),
        Plus | Minus => (Level::Add, Assoc::Left),
        Star | Slash | Percent => (Level::Mul, Assoc::Left),
        _ => return None,
    })
}

/// Function names callable from scripts: name, function, allowed argument counts.
const FUNCTIONS: [(&str, Func, Arity); 24] = [
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("hash", Func::HashMurmur2, Arity::SeedDefault(1)),
    ("hash_murmur2", Func::HashMurmur2, Arity::SeedDefault(1)),
    ("hash_fnv1a", Func::HashFnv1a, Arity::SeedDefault(1)),
    ("permute", Func::Permute, Arity::SeedDefault(2)),
    // spelled-out operators pgbench also registers under these names
    ("!and", Func::And, Arity::Exactly(2)),
    ("!or", Func::Or, Arity::Exactly(2)),
    ("!case_end", Func::Case, Arity::Case),
];

#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    AtLeastOne,
    /// `n` arguments plus an optional seed that defaults to `:default_seed`.
    SeedDefault(usize),
    Case,
}

/// Nesting limit (parentheses, prefix operators, function calls): deeper input is rejected with
/// bison's "memory exhausted" instead of overflowing the stack. (pgbench's own limit is higher,
/// about 10000 parser states, but no real script comes close.)
const MAX_DEPTH: usize = 256;

/// Operators and function calls in one expression. Every one adds at most two levels to the
/// tree, so this bounds its height (a left-deep chain `1+1+...` is as deep as it is long) and
/// with it the evaluator's and the destructor's recursion: a 14,000-term sum overflowed the
/// stack (pgbench 15 crashes on it). Refused as "expression is too complex".
pub(crate) const MAX_OPERATORS: usize = 1000;

pub(crate) struct ExprParser<'a, 'v> {
    lex: ExprLexer<'a>,
    look: Option<(Tok, usize)>,
    vars: &'v mut VarTable,
    depth: usize,
    operators: usize,
}

impl<'a, 'v> ExprParser<'a, 'v> {
    pub(crate) fn new(lex: ExprLexer<'a>, vars: &'v mut VarTable) -> Self {
        ExprParser {
            lex,
            look: None,
            vars,
            depth: 0,
            operators: 0,
        }
    }

    /// A whole expression up to the end of the command.
    pub(crate) fn parse_all(mut self) -> Result<Expr, ExprError> {
        let e = self.expr(None)?;
        match self.peek()? {
            (Tok::Eol, _) => Ok(e),
            (_, end) => Err(syntax_error(end)),
        }
    }

    fn peek(&mut self) -> Result<(Tok, usize), ExprError> {
        if self.look.is_none() {
            self.look = Some(self.lex.next()?);
        }
        Ok(self.look.clone().unwrap_or((Tok::Eol, 0)))
    }

    /// Consume the lookahead token, returning its end offset.
    fn bump(&mut self) -> usize {
        self.look.take().map(|(_, end)| end).unwrap_or(0)
    }

    fn expect(&mut self, want: Tok) -> Result<usize, ExprError> {
        let (tok, end) = self.peek()?;
        if tok == want {
            Ok(self.bump())
        } else {
            Err(syntax_error(end))
        }
    }

    /// Count one more operator or function call, ending at `end`; see [`MAX_OPERATORS`].
    fn operator(&mut self, end: usize) -> Result<(), ExprError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(ExprError::at_end(
                "expression is too complex",
                Some("more than 1000 operators and function calls"),
                end,
            ));
        }
        Ok(())
    }

    fn expr(&mut self, pending: Pending) -> Result<Expr, ExprError> {
        self.depth += 1;
        let r = self.expr_inner(pending);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, pending: Pending) -> Result<Expr, ExprError> {
        if self.depth > MAX_DEPTH {
            let (_, end) = self.peek()?;
            return Err(ExprError::at_end("memory exhausted", None, end));
        }
        let mut lhs = self.prefix()?;
        loop {
            let (tok, end) = self.peek()?;
            let Some((level, assoc)) = infix(&tok) else {
                return Ok(lhs);
            };
            if let Some((plevel, passoc)) = pending {
                if level < plevel || (level == plevel && passoc == Assoc::Left) {
                    return Ok(lhs);
                }
                if level == plevel && passoc == Assoc::Neither {
                    return Err(syntax_error(end));
                }
            }
            self.operator(end)?;
            self.bump();
            lhs = match tok {
                Tok::IsNull => is(lhs, Value::Null),
                Tok::NotNull => not(is(lhs, Value::Null)),
                Tok::Is => self.is_tail(lhs)?,
                op => {
                    let rhs = self.expr(Some((level, assoc)))?;
                    binary(op, lhs, rhs)
                }
            };
        }
    }

    /// After `e IS`: `[NOT] NULL|TRUE|FALSE`.
    fn is_tail(&mut self, lhs: Expr) -> Result<Expr, ExprError> {
        let (mut tok, mut end) = self.peek()?;
        let negate = tok == Tok::Not;
        if negate {
            self.bump();
            (tok, end) = self.peek()?;
        }
        let v = match tok {
            Tok::Null => Value::Null,
            Tok::True => Value::Bool(true),
            Tok::False => Value::Bool(false),
            _ => return Err(syntax_error(end)),
        };
        self.bump();
        let e = is(lhs, v);
        Ok(if negate { not(e) } else { e })
    }

    /// An operand: constant, variable, function call, CASE, parenthesised or prefix expression.
    fn prefix(&mut self) -> Result<Expr, ExprError> {
        let (tok, end) = self.peek()?;
        if matches!(
            tok,
            Tok::Minus | Tok::Tilde | Tok::Not | Tok::Func(_) | Tok::Case
        ) {
            self.operator(end)?;
        }
        let e = match tok {
            Tok::LParen => {
                self.bump();
                let e = self.expr(None)?;
                self.expect(Tok::RParen)?;
                e
            }
            Tok::Plus => {
                self.bump();
                self.expr(Some((Level::Unary, Assoc::Right)))?
            }
            Tok::Minus => {
                self.bump();
                if let (Tok::MaxIntPlusOne, _) = self.peek()? {
                    self.bump();
                    Expr::Const(Value::Int(i64::MIN))
                } else {
                    let e = self.expr(Some((Level::Unary, Assoc::Right)))?;
                    func(Func::Sub, vec![Expr::Const(Value::Int(0)), e])
                }
            }
            Tok::Tilde => {
                self.bump();
                let e = self.expr(Some((Level::Bit, Assoc::Left)))?;
                func(Func::BitXor, vec![Expr::Const(Value::Int(-1)), e])
            }
            Tok::Not => {
                self.bump();
                not(self.expr(Some((Level::Not, Assoc::Right)))?)
            }
            Tok::Int(v) => self.constant(Value::Int(v)),
            Tok::Double(v) => self.constant(Value::Double(v)),
            Tok::True => self.constant(Value::Bool(true)),
            Tok::False => self.constant(Value::Bool(false)),
            Tok::Null => self.constant(Value::Null),
            Tok::Var(name) => {
                self.bump();
                Expr::Var(self.vars.intern(&name))
            }
            Tok::Func(name) => {
                self.bump();
                self.call(&name, end)?
            }
            Tok::Case => {
                self.bump();
                self.case()?
            }
            _ => return Err(syntax_error(end)),
        };
        Ok(e)
    }

    fn constant(&mut self, v: Value) -> Expr {
        self.bump();
        Expr::Const(v)
    }

    /// `name ( [,] expr {, expr} )` — the name is looked up as soon as it is read.
    fn call(&mut self, name: &str, name_end: usize) -> Result<Expr, ExprError> {
        let Some(&(canon, f, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(ExprError::at_end(
                "unexpected function name",
                Some(name),
                name_end,
            ));
        };
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        match self.peek()?.0 {
            Tok::RParen => {}
            Tok::Comma => {
                // bison's `elist: elist ',' expr` accepts a leading comma after an empty list
                self.bump();
                args.push(self.expr(None)?);
            }
            _ => args.push(self.expr(None)?),
        }
        let close_end = loop {
            match self.peek()? {
                (Tok::RParen, _) => break self.bump(),
                (Tok::Comma, _) => {
                    self.bump();
                    args.push(self.expr(None)?);
                }
                (_, end) => return Err(syntax_error(end)),
            }
        };
        let n = args.len();
        let err = |msg| Err(ExprError::at_end(msg, Some(canon), close_end));
        match arity {
            Arity::Exactly(k) if n != k => return err("unexpected number of arguments"),
            Arity::AtLeastOne if n == 0 => return err("at least one argument expected"),
            Arity::SeedDefault(k) if n != k && n != k + 1 => {
                return err("unexpected number of arguments")
            }
            Arity::SeedDefault(k) if n == k => {
                args.push(Expr::Var(self.vars.intern("default_seed")))
            }
            Arity::Case if n < 3 || n % 2 == 0 => {
                return err("odd and >= 3 number of arguments expected")
            }
            _ => {}
        }
        Ok(func(f, args))
    }

    /// After `CASE`: `WHEN c THEN v {WHEN c THEN v} [ELSE e] END`.
    fn case(&mut self) -> Result<Expr, ExprError> {
        let mut args = Vec::new();
        self.expect(Tok::When)?;
        loop {
            args.push(self.expr(None)?);
            self.expect(Tok::Then)?;
            args.push(self.expr(None)?);
            match self.peek()? {
                (Tok::When, _) => {
                    self.bump();
                }
                (Tok::Else, _) => {
                    self.bump();
                    args.push(self.expr(None)?);
                    self.expect(Tok::End)?;
                    break;
                }
                (Tok::End, _) => {
                    self.bump();
                    args.push(Expr::Const(Value::Null));
                    break;
                }
                (_, end) => return Err(syntax_error(end)),
            }
        }
        Ok(func(Func::Case, args))
    }
}

fn syntax_error(token_end: usize) -> ExprError {
    ExprError::at_end("syntax error", None, token_end)
}

fn func(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func {
        func,
        args: args.into_boxed_slice(),
    }
}

fn is(e: Expr, v: Value) -> Expr {
    func(Func::Is, vec![e, Expr::Const(v)])
}

fn not(e: Expr) -> Expr {
    func(Func::Not, vec![e])
}

fn binary(op: Tok, l: Expr, r: Expr) -> Expr {
    let (f, l, r) = match op {
        Tok::Plus => (Func::Add, l, r),
        Tok::Minus => (Func::Sub, l, r),
        Tok::Star => (Func::Mul, l, r),
        Tok::Slash => (Func::Div, l, r),
        Tok::Percent => (Func::Mod, l, r),
        Tok::Eq => (Func::Eq, l, r),
        Tok::Ne => (Func::Ne, l, r),
        Tok::Lt => (Func::Lt, l, r),
        Tok::Le => (Func::Le, l, r),
        Tok::Gt => (Func::Lt, r, l),
        Tok::Ge => (Func::Le, r, l),
        Tok::BitAnd => (Func::BitAnd, l, r),
        Tok::BitOr => (Func::BitOr, l, r),
        Tok::Hash => (Func::BitXor, l, r),
        Tok::Shl => (Func::Lshift, l, r),
        Tok::Shr => (Func::Rshift, l, r),
        Tok::And => (Func::And, l, r),
        _ => (Func::Or, l, r),
    };
    func(f, vec![l, r])
}
