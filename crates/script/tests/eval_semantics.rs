//! Expression semantics (reference §6.3–6.5), each expected result taken from pgbench 15.18
//! (`\set x debug(EXPR)`, x86-64). Trees are built by hand with the parser's desugarings.

mod eval_common;
use eval_common::*;
use pgrig_script::ast::Func::*;
use pgrig_script::Value;

const MIN: i64 = i64::MIN;
const MAX: i64 = i64::MAX;

fn nan() -> pgrig_script::Expr {
    div(d(0.0), i(0))
}
fn inf() -> pgrig_script::Expr {
    div(d(1.0), i(0))
}

fn check(cases: Vec<(pgrig_script::Expr, &str)>) {
    let mut env = Env::new(5432);
    for (n, (e, want)) in cases.into_iter().enumerate() {
        assert_eq!(env.show(&e), want, "case #{n}: {e:?}");
    }
}

#[test]
fn shifts_use_count_modulo_64_like_x86() {
    check(vec![
        (f2(Lshift, i(1), i(64)), "int 1"),
        (f2(Lshift, i(1), i(65)), "int 2"),
        (f2(Lshift, i(1), neg(i(1))), "int -9223372036854775808"),
        (f2(Rshift, neg(i(8)), i(70)), "int -1"),
        (f2(Rshift, i(5), neg(i(63))), "int 2"),
        (f2(Lshift, i(1), i(63)), "int -9223372036854775808"),
        (f2(Rshift, neg(i(1)), i(1)), "int -1"),
        (f2(Lshift, d(1.5), i(1)), "int 4"),
    ]);
}

#[test]
fn int64_overflow_is_an_error() {
    check(vec![
        (add(i(MAX), i(1)), "error: bigint add out of range"),
        (sub(neg(i(MAX)), i(2)), "error: bigint sub out of range"),
        (mul(i(MAX), i(2)), "error: bigint mul out of range"),
        (mul(i(MIN), neg(i(1))), "error: bigint mul out of range"),
        (div(i(MIN), neg(i(1))), "error: bigint div out of range"),
        (neg(i(MIN)), "error: bigint sub out of range"),
        (div(i(MAX), neg(i(1))), "int -9223372036854775807"),
        (f2(Mod, i(MIN), neg(i(1))), "int 0"),
        (modulo(i(7), neg(i(1))), "int 0"),
    ]);
}

#[test]
fn division_by_zero() {
    check(vec![
        (div(i(1), i(0)), "error: division by zero"),
        (modulo(i(1), i(0)), "error: division by zero"),
        (div(d(1.0), d(0.0)), "double Infinity"),
        (div(d(2.5), i(0)), "double Infinity"),
        (div(i(0), d(0.0)), "double NaN"),
        (div(neg(d(1.0)), i(0)), "double -Infinity"),
    ]);
}

#[test]
fn integer_division_and_modulo_follow_c() {
    check(vec![
        (div(i(7), i(2)), "int 3"),
        (div(neg(i(7)), i(2)), "int -3"),
        (modulo(i(7), i(3)), "int 1"),
        (modulo(neg(i(7)), i(3)), "int -1"),
        (div(neg(d(7.5)), i(2)), "double -3.75"),
    ]);
}

#[test]
fn modulo_rints_doubles() {
    check(vec![
        (f2(Mod, d(7.5), i(2)), "int 0"),
        (modulo(d(7.5), d(2.5)), "int 0"),
        (modulo(i(5), d(2.5)), "int 1"),
        (f2(BitAnd, i(5), d(3.5)), "int 4"),
    ]);
}

#[test]
fn int_rounds_half_to_even() {
    check(vec![
        (f1(Int, d(2.5)), "int 2"),
        (f1(Int, neg(d(0.5))), "int 0"),
        (f1(Int, d(3.5)), "int 4"),
        (
            f1(Int, neg(d(9223372036854775808.0))),
            "int -9223372036854775808",
        ),
        (
            f1(Int, d(9223372036854775807.0)),
            "error: double to int overflow for 9223372036854775808.000000",
        ),
        (
            f1(Int, d(1e19)),
            "error: double to int overflow for 10000000000000000000.000000",
        ),
        (f1(Int, nan()), "error: double to int overflow for NaN"),
        (f1(Int, inf()), "error: double to int overflow for Infinity"),
        (
            f1(Int, neg(inf())),
            "error: double to int overflow for -Infinity",
        ),
        (f1(Int, b(true)), "error: cannot coerce boolean to int"),
        (
            f2(Random, i(1), d(1e19)),
            "error: double to int overflow for 10000000000000000000.000000",
        ),
    ]);
}

#[test]
fn huge_double_to_int_message_prints_all_digits() {
    let mut env = Env::new(1);
    let got = env.show(&f1(Int, d(1e300)));
    assert!(got
        .starts_with("error: double to int overflow for 1000000000000000052504760255204420248704"));
    assert!(got.ends_with("459400540160.000000"));
}

#[test]
fn null_or_true_is_null() {
    check(vec![
        (or(null(), b(true)), "null"),
        (or(b(true), null()), "boolean true"),
        (and(b(true), null()), "null"),
        (or(b(false), null()), "null"),
        (and(null(), b(false)), "null"),
        (or(null(), i(1)), "null"),
    ]);
}

#[test]
fn and_or_need_booleans_but_short_circuit() {
    check(vec![
        (and(b(false), i(1)), "boolean false"),
        (or(b(true), i(1)), "boolean true"),
        (and(i(1), b(true)), "error: cannot coerce int to boolean"),
        (and(b(true), i(1)), "error: cannot coerce int to boolean"),
        (not(i(1)), "error: cannot coerce int to boolean"),
        (not(null()), "null"),
        (not(b(true)), "boolean false"),
    ]);
}

#[test]
fn is_compares_type_and_value() {
    check(vec![
        (is(null(), null()), "boolean true"),
        (is(i(1), b(true)), "boolean false"),
        (is(i(1), null()), "boolean false"),
        (is(null(), b(true)), "boolean false"),
        (not(is(null(), b(false))), "boolean true"),
        (not(is(i(3), null())), "boolean true"),
        (not(is(b(true), b(true))), "boolean false"),
    ]);
}

#[test]
fn case_uses_truth_rules_and_defaults_to_null() {
    check(vec![
        (case(vec![i(0), i(1), nan(), i(2), null()]), "int 2"),
        (case(vec![i(0), i(1), null()]), "null"),
        (case(vec![null(), i(1), i(2)]), "int 2"),
        (case(vec![b(false), i(1), b(true), i(2), i(3)]), "int 2"),
    ]);
}

#[test]
fn null_propagates_through_functions_before_type_errors() {
    check(vec![
        (eq(null(), i(1)), "null"),
        (f3(Greatest, i(1), null(), d(2.0)), "null"),
        (f1(Least, null()), "null"),
        (f1(Double, null()), "null"),
        (add(b(true), null()), "null"),
    ]);
}

#[test]
fn comparisons() {
    check(vec![
        (eq(nan(), nan()), "boolean false"),
        (call(Ne, vec![nan(), nan()]), "boolean true"),
        (lt(nan(), i(1)), "boolean false"),
        (eq(i(1), d(1.0)), "boolean true"),
        (call(Le, vec![i(2), i(1)]), "boolean false"),
        (gt(i(2), i(1)), "boolean true"),
        (eq(b(true), b(true)), "error: cannot coerce boolean to int"),
        (
            eq(i(9007199254740993), d(9007199254740992.0)),
            "boolean true",
        ),
    ]);
}

#[test]
fn mixed_types_coerce_or_fail_like_pgbench() {
    check(vec![
        (add(i(1), b(true)), "error: cannot coerce boolean to int"),
        (
            add(d(1.0), b(true)),
            "error: cannot coerce boolean to double",
        ),
        (
            add(b(true), d(1.0)),
            "error: cannot coerce boolean to double",
        ),
        (
            f3(Least, i(1), d(2.5), b(true)),
            "error: cannot coerce boolean to double",
        ),
        (
            f2(Greatest, i(1), b(true)),
            "error: cannot coerce boolean to int",
        ),
    ]);
}

#[test]
fn least_greatest_types_and_nan_order() {
    check(vec![
        (f3(Greatest, i(1), d(2.0), i(3)), "double 3"),
        (f3(Least, i(1), i(2), i(3)), "int 1"),
        (f2(Least, nan(), i(1)), "double 1"),
        (f2(Least, i(1), nan()), "double NaN"),
        (f1(Greatest, i(3)), "int 3"),
        (f1(Least, d(2.0)), "double 2"),
    ]);
}

#[test]
fn too_many_arguments_after_evaluating_sixteen() {
    let mut env = Env::new(1);
    let mut args: Vec<_> = (1..=17).map(i).collect();
    args[0] = f1(Debug, i(1));
    args[16] = f1(Debug, i(17));
    let r = env.show(&call(Least, args));
    assert_eq!(r, "error: too many function arguments, maximum is 16");
    assert_eq!(
        env.debug,
        [Value::Int(1)],
        "the 17th argument is not evaluated"
    );
    let ok: Vec<_> = (1..=16).map(i).collect();
    assert_eq!(env.show(&call(Greatest, ok)), "int 16");
}

#[test]
fn greater_than_evaluates_right_operand_first() {
    let mut env = Env::new(1);
    let e = gt(f1(Debug, i(1)), f1(Debug, i(2)));
    assert_eq!(env.show(&e), "boolean false");
    assert_eq!(env.debug, [Value::Int(2), Value::Int(1)]);
}

#[test]
fn lazy_branches_are_not_evaluated() {
    let mut env = Env::new(1);
    let e = case(vec![i(1), f1(Debug, i(1)), f1(Debug, i(2))]);
    assert_eq!(env.show(&e), "int 1");
    let e = case(vec![b(false), i(1), b(true), i(2), f1(Debug, i(3))]);
    assert_eq!(env.show(&e), "int 2");
    let e = and(b(false), f1(Debug, i(9)));
    assert_eq!(env.show(&e), "boolean false");
    assert_eq!(env.debug, [Value::Int(1)]);
}

#[test]
fn debug_passes_null_and_returns_its_argument() {
    let mut env = Env::new(1);
    assert_eq!(env.show(&f1(Debug, null())), "null");
    assert_eq!(
        env.show(&f1(Abs, f1(Debug, b(true)))),
        "double 4.94065645841247e-324"
    );
    assert_eq!(env.debug, [Value::Null, Value::Bool(true)]);
}

#[test]
fn math_functions() {
    check(vec![
        (f2(Pow, neg(i(2)), neg(i(3))), "double -0.125"),
        (f2(Pow, i(0), i(0)), "double 1"),
        (f1(Ln, i(0)), "double -Infinity"),
        (f1(Ln, neg(i(1))), "double NaN"),
        (f1(Sqrt, neg(i(1))), "double NaN"),
        (f1(Exp, i(1000)), "double Infinity"),
        (f1(Exp, neg(i(1000))), "double 0"),
        (call(Pi, vec![]), "double 3.14159265358979"),
        (mul(call(Pi, vec![]), i(2)), "double 6.28318530717959"),
        (f1(Sqrt, i(2)), "double 1.4142135623731"),
        (f1(Exp, i(1)), "double 2.71828182845905"),
        (f2(Pow, i(2), d(0.5)), "double 1.4142135623731"),
        (f1(Ln, i(10)), "double 2.30258509299405"),
        (f1(Double, i(3)), "double 3"),
        (f1(Abs, neg(i(3))), "int 3"),
        (f1(Abs, neg(d(2.5))), "double 2.5"),
        (f1(Abs, i(MIN)), "int -9223372036854775808"),
        (f1(Abs, mul(d(0.0), neg(i(1)))), "double -0"),
        (f1(Abs, b(false)), "double 0"),
    ]);
}

#[test]
#[allow(clippy::excessive_precision)] // literals as written in the pgbench scripts
fn double_results_print_as_g15() {
    check(vec![
        (mul(d(0.0), neg(i(1))), "double -0"),
        (mul(d(1e300), d(1e10)), "double Infinity"),
        (d(1e30), "double 1e+30"),
        (d(123456789012345678.0), "double 1.23456789012346e+17"),
        (d(0.0001), "double 0.0001"),
        (d(0.00001), "double 1e-05"),
        (add(d(1e15), d(0.3)), "double 1e+15"),
        (mul(d(1000000.0), i(1000000000)), "double 1e+15"),
        (d(123456.7890123456789), "double 123456.789012346"),
        (d(0.000123456789012345678), "double 0.000123456789012346"),
        (sub(i(1), d(0.9)), "double 0.1"),
        (add(d(0.1), d(0.2)), "double 0.3"),
        (div(d(1.0), i(3)), "double 0.333333333333333"),
    ]);
}

#[test]
fn bitwise_operators() {
    check(vec![
        (f2(BitXor, i(-1), i(5)), "int -6"),
        (f2(BitXor, i(7), i(3)), "int 4"),
        (f2(BitOr, i(7), i(8)), "int 15"),
        (f2(BitAnd, i(12), i(10)), "int 8"),
    ]);
}

#[test]
fn random_argument_checks() {
    check(vec![
        (f2(Random, i(2), i(1)), "error: empty range given to random"),
        (
            f2(Random, i(MIN), i(MAX - 1)),
            "error: random range is too large",
        ),
        (
            f2(Random, i(MIN), i(MAX - 2)),
            "error: random range is too large",
        ),
        (
            f3(RandomExponential, i(1), i(10), neg(i(1))),
            "error: exponential parameter must be greater than zero (not -1.000000)",
        ),
        (
            f3(RandomExponential, i(1), i(10), i(0)),
            "error: exponential parameter must be greater than zero (not 0.000000)",
        ),
        (
            f3(RandomGaussian, i(1), i(10), d(1.5)),
            "error: gaussian parameter must be at least 2.000000 (not 1.500000)",
        ),
        (
            f3(RandomZipfian, i(1), i(10), d(0.5)),
            "error: zipfian parameter must be in range [1.001, 1000] (not 0.500000)",
        ),
        (
            f3(RandomZipfian, i(1), i(10), d(2000.0)),
            "error: zipfian parameter must be in range [1.001, 1000] (not 2000.000000)",
        ),
        (
            f3(RandomZipfian, i(1), i(10), d(1.0009)),
            "error: zipfian parameter must be in range [1.001, 1000] (not 1.000900)",
        ),
        (
            f3(Permute, i(0), i(0), i(1)),
            "error: permute size parameter must be greater than zero",
        ),
        (f3(Permute, i(5), i(1), i(1)), "int 0"),
    ]);
}

#[test]
fn non_finite_distribution_parameters_behave_like_x86_pgbench() {
    // C casts NaN to i64::MIN on x86-64: pgbench prints min + i64::MIN.
    check(vec![
        (
            f3(RandomGaussian, i(1), i(10), nan()),
            "int -9223372036854775807",
        ),
        (
            f3(RandomExponential, i(1), i(10), nan()),
            "int -9223372036854775807",
        ),
        (
            f3(RandomGaussian, i(1), i(10), inf()),
            "int -9223372036854775807",
        ),
        (f3(RandomExponential, i(1), i(10), inf()), "int 1"),
    ]);
}

#[test]
fn zipfian_nan_is_rejected_instead_of_looping_forever() {
    // Deviation: pgbench 15 never returns here.
    let mut env = Env::new(1);
    let r = env.show(&f3(RandomZipfian, i(1), i(10), nan()));
    assert_eq!(
        r,
        "error: zipfian parameter must be in range [1.001, 1000] (not NaN)"
    );
}

#[test]
fn hashes_rint_their_arguments() {
    check(vec![
        (f2(HashMurmur2, d(2.5), i(1)), "int -3163560438150112631"),
        (f2(HashMurmur2, i(2), i(1)), "int -3163560438150112631"),
        (f2(HashFnv1a, i(0), i(0)), "int -6284781860667377211"),
        (f2(HashMurmur2, i(0), i(0)), "int 8217090173679840641"),
        (f3(Permute, i(5), d(2.5), i(3)), "int 1"),
    ]);
}

#[test]
fn undefined_variable_names_the_variable() {
    let mut env = Env::new(1);
    let v = env.var("nosuch");
    assert_eq!(env.show(&v), "error: undefined variable \"nosuch\"");
    assert_eq!(
        env.show(&add(i(1), v)),
        "error: undefined variable \"nosuch\""
    );
}
