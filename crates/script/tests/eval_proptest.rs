//! Property tests: random expression trees (wrong arities, overflows, NaN, infinities, huge
//! shifts, odd variables included) never panic; formatting and variable conversion never panic
//! and round-trip where they should.

mod eval_common;
use eval_common::*;
use pgrig_script::ast::{Expr, Func};
use pgrig_script::format::{F6, G15};
use pgrig_script::vars::convert;
use pgrig_script::Value;
use proptest::prelude::*;

const FUNCS: &[Func] = &[
    Func::Add,
    Func::Sub,
    Func::Mul,
    Func::Div,
    Func::Mod,
    Func::Eq,
    Func::Ne,
    Func::Lt,
    Func::Le,
    Func::BitAnd,
    Func::BitOr,
    Func::BitXor,
    Func::Lshift,
    Func::Rshift,
    Func::And,
    Func::Or,
    Func::Not,
    Func::Is,
    Func::Case,
    Func::Abs,
    Func::Debug,
    Func::Double,
    Func::Int,
    Func::Exp,
    Func::Ln,
    Func::Sqrt,
    Func::Pow,
    Func::Pi,
    Func::Greatest,
    Func::Least,
    Func::Random,
    Func::RandomExponential,
    Func::RandomGaussian,
    Func::RandomZipfian,
    Func::HashMurmur2,
    Func::HashFnv1a,
    Func::Permute,
];

/// Variables of the test environment: typed, strings of every conversion outcome, undefined.
const VARS: &[&str] = &[
    "i", "d", "nan", "s_int", "s_bad", "s_empty", "s_big", "s_bool", "undef",
];

/// 3000 cases per property in the suite; `PROPTEST_CASES=N` for long fuzzing runs.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn env() -> Env {
    let mut e = Env::new(5432);
    e.set("i", Value::Int(i64::MIN));
    e.set("d", Value::Double(-0.0));
    e.set("nan", Value::Double(f64::NAN));
    e.set_str("s_int", " 42");
    e.set_str("s_bad", "1e400");
    e.set_str("s_empty", "");
    e.set_str("s_big", "9223372036854775808");
    e.set_str("s_bool", "of");
    e.var("undef");
    e
}

fn double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(9223372036854775807.0),
        Just(-9223372036854775808.0),
        Just(1.001),
        Just(2.0),
        Just(2.5),
        -1e6..1e6f64,
    ]
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(-1i64),
        Just(0i64),
        Just(64i64),
        -100i64..100,
    ]
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        int().prop_map(i),
        double().prop_map(d),
        any::<bool>().prop_map(b),
        Just(null()),
        (0..VARS.len()).prop_map(|k| Expr::Var(pgrig_script::VarId(k as u32 + 2))),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 64, 5, |inner| {
        (
            0..FUNCS.len(),
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5),
                prop::collection::vec(inner, 15..19),
            ],
        )
            .prop_map(|(k, args)| call(FUNCS[k], args))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn eval_never_panics(e in expr()) {
        let mut env = env();
        // names 0, 1 are default_seed/random_seed; VARS follow in order
        for (k, name) in VARS.iter().enumerate() {
            prop_assert_eq!(env.names.get(name).map(|v| v.0), Some(k as u32 + 2));
        }
        let _ = env.eval(&e);
    }

    #[test]
    fn well_typed_random_calls_stay_in_range(lb in int(), span in 0i64..1_000_000, p in 2.0f64..50.0) {
        let ub = lb.saturating_add(span);
        let mut env = env();
        for func in [Func::Random, Func::RandomExponential, Func::RandomGaussian, Func::RandomZipfian] {
            let mut args = vec![i(lb), i(ub)];
            if func != Func::Random {
                args.push(d(p));
            }
            if let Ok(Value::Int(v)) = env.eval(&call(func, args)) {
                prop_assert!(lb <= v && v <= ub, "{:?} gave {} outside {}..={}", func, v, lb, ub);
            }
        }
    }

    #[test]
    fn permute_stays_in_range(v in int(), size in 1i64..i64::MAX, seed in int()) {
        let p = pgrig_script::random::permute(v, size, seed);
        prop_assert!(0 <= p && p < size);
    }

    #[test]
    fn g15_round_trips_to_15_digits(x in any::<f64>()) {
        let s = G15(x).to_string();
        let _ = F6(x).to_string();
        if x.is_finite() {
            let back: f64 = s.parse().unwrap();
            let tol = x.abs() * 1e-14;
            prop_assert!((back - x).abs() <= tol, "{} -> {}", x, s);
        }
    }

    #[test]
    fn convert_never_panics(s in ".{0,24}") {
        let _ = convert("v", &s);
    }

    #[test]
    fn converted_ints_round_trip(v in any::<i64>()) {
        prop_assert_eq!(convert("v", &v.to_string()), Ok(Value::Int(v)));
    }
}
