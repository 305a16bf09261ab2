//! Expression parsing: precedence and associativity as pgbench's bison grammar resolves them,
//! desugarings (see `ast.rs`), literals and error messages/columns.

use pgrig_script::ast::{Expr, Func};
use pgrig_script::parse::parse_expr;
use pgrig_script::{Value, VarTable};

/// Render a tree compactly: `Add(1,Mul(2,3))`, variables as `:name`.
fn show(e: &Expr, vars: &VarTable) -> String {
    match e {
        Expr::Const(Value::Int(i)) => i.to_string(),
        Expr::Const(Value::Double(d)) => format!("{d:?}"),
        Expr::Const(Value::Bool(b)) => b.to_string(),
        Expr::Const(Value::Null) => "null".into(),
        Expr::Var(v) => format!(":{}", vars.name(*v)),
        Expr::Func { func, args } => {
            let a: Vec<String> = args.iter().map(|x| show(x, vars)).collect();
            format!("{func:?}({})", a.join(","))
        }
    }
}

fn p(s: &str) -> String {
    let mut vars = VarTable::new();
    match parse_expr(s, &mut vars) {
        Ok(e) => show(&e, &vars),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn multiplication_binds_tighter_than_addition() {
    assert_eq!(p("1 + 2 * 3"), "Add(1,Mul(2,3))");
    assert_eq!(p("1 - 2 - 3"), "Sub(Sub(1,2),3)");
}

#[test]
fn greater_than_swaps_operands() {
    assert_eq!(p(":a > :b"), "Lt(:b,:a)");
    assert_eq!(p(":a >= :b"), "Le(:b,:a)");
    assert_eq!(p("1 <> 2"), "Ne(1,2)");
    assert_eq!(p("1 != 2"), "Ne(1,2)");
}

#[test]
fn comparisons_are_non_associative() {
    assert_eq!(p("1 < 2 < 3"), "error: syntax error at column 7");
    assert_eq!(p("1 = 2 <> 3"), "error: syntax error at column 8");
}

#[test]
fn unary_minus_is_zero_minus_and_binds_tightest() {
    assert_eq!(p("-2 * 3"), "Mul(Sub(0,2),3)");
    assert_eq!(p("- -1"), "Sub(0,Sub(0,1))");
    assert_eq!(p("+ :x"), ":x");
}

#[test]
fn int64_min_literal_only_after_unary_minus() {
    assert_eq!(p("-9223372036854775808"), "-9223372036854775808");
    assert_eq!(
        p("- 9223372036854775808 * 2"),
        "Mul(-9223372036854775808,2)"
    );
    assert_eq!(p("9223372036854775808"), "error: syntax error at column 19");
    assert_eq!(
        p("-(9223372036854775808)"),
        "error: syntax error at column 21"
    );
    assert_eq!(p("9223372036854775807"), "9223372036854775807");
    assert_eq!(
        p("-9223372036854775809"),
        "error: bigint constant overflow (9223372036854775809) at column 20"
    );
}

#[test]
fn tilde_binds_at_bitwise_level_like_pgbench() {
    // pgbench: ~1+2 = -4 (i.e. ~(1+2)); ~1|2 = (~1)|2
    assert_eq!(p("~1 + 2"), "BitXor(-1,Add(1,2))");
    assert_eq!(p("~1 | 2"), "BitOr(BitXor(-1,1),2)");
}

#[test]
fn bitwise_operators_are_one_left_associative_level() {
    assert_eq!(
        p("1 | 2 & 3 # 4 << 5 >> 6"),
        "Rshift(Lshift(BitXor(BitAnd(BitOr(1,2),3),4),5),6)"
    );
    assert_eq!(p("1 + 2 | 3"), "BitOr(Add(1,2),3)");
    assert_eq!(p("1 | 2 = 3"), "Eq(BitOr(1,2),3)");
}

#[test]
fn modulo_operator_is_mod() {
    assert_eq!(p("7 % 3 * 2"), "Mul(Mod(7,3),2)");
    assert_eq!(p("MOD(7, 3)"), "Mod(7,3)");
}

#[test]
fn logic_precedence_or_and_not() {
    assert_eq!(
        p("true or false and not true"),
        "Or(true,And(false,Not(true)))"
    );
    assert_eq!(p("not 1 = 2"), "Not(Eq(1,2))");
    assert_eq!(p("NOT NOT true"), "Not(Not(true))");
}

#[test]
fn is_forms_desugar_to_is_and_not() {
    assert_eq!(p(":x is null"), "Is(:x,null)");
    assert_eq!(p(":x ISNULL"), "Is(:x,null)");
    assert_eq!(p(":x is not null"), "Not(Is(:x,null))");
    assert_eq!(p(":x notnull"), "Not(Is(:x,null))");
    assert_eq!(p(":x is true"), "Is(:x,true)");
    assert_eq!(p(":x is not false"), "Not(Is(:x,false))");
    assert_eq!(p("1 = 2 isnull"), "Is(Eq(1,2),null)");
    assert_eq!(p("1 isnull isnull"), "Is(Is(1,null),null)");
    assert_eq!(p("not 1 isnull"), "Not(Is(1,null))");
    assert_eq!(p("1 is 2"), "error: syntax error at column 6");
}

#[test]
fn case_arguments_are_condition_value_pairs_then_else() {
    assert_eq!(
        p("case when :a then 1 when :b then 2 else 3 end"),
        "Case(:a,1,:b,2,3)"
    );
    assert_eq!(p("CASE WHEN true THEN 1 END"), "Case(true,1,null)");
    assert_eq!(
        p("case 1 when 1 then 2 end"),
        "error: syntax error at column 6"
    );
}

#[test]
fn literals_ints_doubles_booleans_null() {
    assert_eq!(p("1.5"), "1.5");
    assert_eq!(p(".5e1"), "5.0");
    assert_eq!(p("1."), "1.0");
    assert_eq!(p("TRUE"), "true");
    assert_eq!(p("Null"), "null");
    assert_eq!(
        p("1e999"),
        "error: double constant overflow (1e999) at column 5"
    );
    assert_eq!(
        p("99999999999999999999"),
        "error: bigint constant overflow (99999999999999999999) at column 20"
    );
}

#[test]
fn function_names_are_case_insensitive_and_checked() {
    assert_eq!(p("Abs(-1)"), "Abs(Sub(0,1))");
    assert_eq!(p("power(2, 3)"), "Pow(2,3)");
    assert_eq!(p("pi()"), "Pi()");
    assert_eq!(p("greatest(1, 2.5, :x)"), "Greatest(1,2.5,:x)");
    assert_eq!(p("random_zipfian(1, 10, 1.5)"), "RandomZipfian(1,10,1.5)");
    assert_eq!(
        p("foo(1)"),
        "error: unexpected function name (foo) at column 3"
    );
    assert_eq!(
        p("abs(1, 2)"),
        "error: unexpected number of arguments (abs) at column 9"
    );
    assert_eq!(
        p("least()"),
        "error: at least one argument expected (least) at column 7"
    );
    assert_eq!(p("abs 1"), "error: syntax error at column 5");
}

#[test]
fn hash_and_permute_get_default_seed_variable() {
    assert_eq!(p("hash(1)"), "HashMurmur2(1,:default_seed)");
    assert_eq!(p("hash_murmur2(1, 2)"), "HashMurmur2(1,2)");
    assert_eq!(p("hash_fnv1a(:k)"), "HashFnv1a(:k,:default_seed)");
    assert_eq!(p("permute(1, 10)"), "Permute(1,10,:default_seed)");
    assert_eq!(p("permute(1, 10, 5)"), "Permute(1,10,5)");
    assert_eq!(
        p("permute(1)"),
        "error: unexpected number of arguments (permute) at column 10"
    );
}

#[test]
fn a_leading_comma_in_arguments_is_accepted_like_bison() {
    assert_eq!(p("abs(,1)"), "Abs(1)");
    assert_eq!(p("abs(1,)"), "error: syntax error at column 7");
}

#[test]
fn variables_are_interned() {
    let mut vars = VarTable::new();
    let e = parse_expr(":a + :b * :a", &mut vars).expect("parses");
    assert_eq!(vars.len(), 2);
    let a = vars.get("a").expect("a interned");
    assert_eq!(
        e,
        Expr::Func {
            func: Func::Add,
            args: vec![
                Expr::Var(a),
                Expr::Func {
                    func: Func::Mul,
                    args: vec![Expr::Var(vars.get("b").unwrap()), Expr::Var(a)].into()
                }
            ]
            .into()
        }
    );
}

#[test]
fn unexpected_characters_are_reported_with_the_character() {
    assert_eq!(p("1 @ 2"), "error: unexpected character (@) at column 3");
    assert_eq!(p("1 ! 2"), "error: unexpected character (!) at column 3");
    assert_eq!(p(":"), "error: unexpected character (:) at column 1");
}

#[test]
fn missing_operand_reports_end_of_line() {
    assert_eq!(p("1 +"), "error: syntax error at column 3");
    assert_eq!(p("1 +\n"), "error: syntax error at column 4");
    assert_eq!(p(""), "error: syntax error at column 1");
    assert_eq!(p("(1"), "error: syntax error at column 2");
}

#[test]
fn deeply_nested_input_does_not_panic() {
    let s = "(".repeat(250) + "1" + &")".repeat(250);
    assert_eq!(p(&s), "1");
    let s = "-(".repeat(5000) + "1";
    assert!(p(&s).starts_with("error: memory exhausted"));
}
