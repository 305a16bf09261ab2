//! Variables: lazy string conversion (`-D`, `\gset`), rendering, reuse of string buffers, name
//! validation and `\sleep :var`. Expected conversions are pgbench 15.18's (`-D v=...` then
//! `\set x debug(:v)`).

mod eval_common;
use eval_common::*;
use pgrig_script::vars::{
    c_atoi, c_strtod_full, c_strtoi64, invalid_variable_name_message, valid_variable_name,
};
use pgrig_script::{Value, VarId, Vars};

fn conv(s: &str) -> String {
    let mut env = Env::new(1);
    env.set_str("v", s);
    let v = env.var("v");
    env.show(&v)
}

#[test]
fn string_values_convert_like_pgbench() {
    let cases: &[(&str, &str)] = &[
        (" ", "error: invalid input syntax for type bigint: \" \""),
        ("+", "error: invalid input syntax for type bigint: \"+\""),
        ("-", "error: invalid input syntax for type bigint: \"-\""),
        ("t", "boolean true"),
        ("TR", "boolean true"),
        ("trueX", "error: malformed variable \"v\" value: \"trueX\""),
        ("ye", "boolean true"),
        ("yes", "boolean true"),
        ("o", "error: malformed variable \"v\" value: \"o\""),
        ("on", "boolean true"),
        ("of", "boolean false"),
        ("off", "boolean false"),
        ("n", "boolean false"),
        ("FALSE", "boolean false"),
        ("NULL", "null"),
        ("nUlL", "null"),
        (" 12", "int 12"),
        ("\t7", "int 7"),
        (" 12 ", "error: malformed variable \"v\" value: \" 12 \""),
        ("+3", "int 3"),
        ("-0", "int 0"),
        (
            "9223372036854775808",
            "error: value \"9223372036854775808\" is out of range for type bigint",
        ),
        ("-9223372036854775808", "int -9223372036854775808"),
        (
            "99999999999999999999",
            "error: value \"99999999999999999999\" is out of range for type bigint",
        ),
        ("1.0", "double 1"),
        ("-10.1", "double -10.1"),
        ("1e400", "error: malformed variable \"v\" value: \"1e400\""),
        (
            "1e-400",
            "error: malformed variable \"v\" value: \"1e-400\"",
        ),
        (
            "1e-310",
            "error: malformed variable \"v\" value: \"1e-310\"",
        ),
        (
            "4.9e-324",
            "error: malformed variable \"v\" value: \"4.9e-324\"",
        ),
        ("0x10", "double 16"),
        ("0x1p-2", "double 0.25"),
        ("inf", "double Infinity"),
        ("-Infinity", "double -Infinity"),
        ("nan", "double NaN"),
        ("NaN(123)", "double NaN"),
        (" 1.5", "double 1.5"),
        ("1.5 ", "error: malformed variable \"v\" value: \"1.5 \""),
        (".5", "double 0.5"),
        ("5.", "double 5"),
        ("1e5", "double 100000"),
        ("0e-400", "double 0"),
        ("1_0", "error: malformed variable \"v\" value: \"1_0\""),
        ("１", "error: malformed variable \"v\" value: \"１\""),
        ("0x", "error: malformed variable \"v\" value: \"0x\""),
        ("infx", "error: malformed variable \"v\" value: \"infx\""),
    ];
    for &(s, want) in cases {
        assert_eq!(conv(s), want, "value {s:?}");
    }
}

#[test]
fn empty_string_fails_silently() {
    // pgbench: `\gset` of a NULL or '' column, then `:v` in an expression => no message.
    let mut env = Env::new(1);
    env.set_str("v", "");
    let v = env.var("v");
    let err = env.eval(&v).unwrap_err();
    assert!(err.is_silent());
    assert_eq!(err.to_string(), "");
}

#[test]
fn strtod_matches_glibc_corner_cases() {
    assert_eq!(c_strtod_full("0x1p-1074"), Some(5e-324)); // exact subnormal: no ERANGE
    assert_eq!(c_strtod_full("0x1p1024"), None);
    assert_eq!(c_strtod_full("0x1.fffffffffffff8p1023"), None);
    assert_eq!(c_strtod_full("1.7976931348623158e308"), Some(f64::MAX));
    assert_eq!(c_strtod_full("1.7976931348623159e308"), None);
    assert_eq!(c_strtod_full("2.2250738585072011e-308"), None);
    assert_eq!(
        c_strtod_full("2.2250738585072014e-308"),
        Some(f64::MIN_POSITIVE)
    );
    assert_eq!(c_strtod_full("0e999999999999"), Some(0.0));
    assert_eq!(c_strtod_full("0x.8"), Some(0.5));
    assert_eq!(c_strtod_full("0x1."), Some(1.0));
    assert_eq!(c_strtod_full("0x1p"), None);
    assert_eq!(c_strtod_full("1e"), None);
    assert_eq!(c_strtod_full("1e+"), None);
    assert!(c_strtod_full("nan()").unwrap().is_nan());
    assert!(c_strtod_full("nan(_a1)").unwrap().is_nan());
    assert_eq!(c_strtod_full("nan(-)"), None);
    assert_eq!(c_strtod_full("infinit"), None);
    assert_eq!(
        c_strtod_full("0x123456789abcdef01"),
        Some(0x123456789abcdef01u128 as f64)
    );
    assert_eq!(c_strtod_full("."), None);
    assert_eq!(c_strtod_full(""), None);
}

#[test]
fn strtoi64_and_atoi() {
    assert_eq!(c_strtoi64(" -9223372036854775808"), Ok(i64::MIN));
    assert_eq!(c_strtoi64("9223372036854775808"), Err(true));
    assert_eq!(c_strtoi64("12a"), Err(false));
    assert_eq!(c_strtoi64(""), Err(false));
    assert_eq!(c_atoi(" 42abc"), 42);
    assert_eq!(c_atoi("-7"), -7);
    assert_eq!(c_atoi("5000000000"), 705032704); // (int) of the long
    assert_eq!(c_atoi("99999999999999999999"), -1); // LONG_MAX truncated
    assert_eq!(c_atoi("x"), 0);
}

#[test]
fn conversion_is_cached_and_string_form_is_kept() {
    let mut env = Env::new(1);
    env.set_str("v", "1.50");
    let v = env.var("v");
    assert_eq!(env.show(&v), "double 1.5");
    let id = env.names.get("v").unwrap();
    let mut out = Vec::new();
    assert!(env.vars.render(id, &mut out));
    assert_eq!(
        out, b"1.50",
        "a string variable renders as its original text"
    );
}

#[test]
fn typed_values_render_like_getvariable() {
    let mut vars = Vars::with_len(4);
    let mut out = Vec::new();
    for (v, text) in [
        (Value::Null, "NULL"),
        (Value::Bool(false), "false"),
        (Value::Int(-12), "-12"),
        (Value::Double(1e30), "1e+30"),
        (Value::Double(f64::NEG_INFINITY), "-Infinity"),
    ] {
        vars.set_value(VarId(1), v);
        out.clear();
        assert!(vars.render(VarId(1), &mut out));
        assert_eq!(std::str::from_utf8(&out).unwrap(), text);
        let mut s = String::from("x=");
        assert!(vars.render_str(VarId(1), &mut s));
        assert_eq!(s, format!("x={text}"));
    }
}

#[test]
fn undefined_variables_render_nothing() {
    let mut vars = Vars::with_len(2);
    let mut out = b"abc".to_vec();
    assert!(!vars.render(VarId(0), &mut out));
    assert!(
        !vars.render(VarId(99), &mut out),
        "ids past the end are undefined too"
    );
    assert_eq!(out, b"abc");
    vars.set_value(VarId(0), Value::Int(1));
    assert!(vars.is_defined(VarId(0)));
    vars.unset(VarId(0));
    assert!(!vars.is_defined(VarId(0)));
}

#[test]
fn set_str_reuses_capacity() {
    let mut vars = Vars::with_len(1);
    vars.set_str(VarId(0), "some long initial value for the buffer");
    let p1 = vars.str_value(VarId(0)).unwrap().as_ptr();
    vars.set_value(VarId(0), Value::Int(3));
    vars.set_str(VarId(0), "short");
    let p2 = vars.str_value(VarId(0)).unwrap().as_ptr();
    assert_eq!(p1, p2, "the String's buffer is reused");
    assert_eq!(vars.str_value(VarId(0)), Some("short"));
}

#[test]
fn variable_names_follow_pgbench_rules() {
    for ok in ["a", "_", "A9_", "é", "x\u{80}y", "default_seed"] {
        assert!(valid_variable_name(ok), "{ok:?}");
    }
    for bad in ["", "9a", "a-b", "a b", "a.b", ":a", "a$"] {
        assert!(!valid_variable_name(bad), "{bad:?}");
    }
    assert_eq!(
        invalid_variable_name_message("option", "9x"),
        "option: invalid variable name: \"9x\""
    );
}

#[test]
fn sleep_variable_uses_atoi_of_the_text_form() {
    let mut vars = Vars::with_len(3);
    let id = VarId(0);
    assert_eq!(
        vars.sleep_value(id, "s").unwrap_err(),
        "sleep: undefined variable \"s\""
    );
    for (s, want) in [(" 5", Ok(5)), ("0", Ok(0)), ("5x", Ok(5)), ("-3", Ok(-3))] {
        vars.set_str(id, s);
        assert_eq!(vars.sleep_value(id, "s"), want, "{s:?}");
    }
    for s in ["abc", "-0", ""] {
        vars.set_str(id, s);
        assert_eq!(
            vars.sleep_value(id, "s").unwrap_err(),
            format!("sleep: invalid sleep time \"{s}\" for variable \"s\"")
        );
    }
    vars.set_value(id, Value::Double(1.5));
    assert_eq!(vars.sleep_value(id, "s"), Ok(1));
    vars.set_value(id, Value::Null);
    assert_eq!(
        vars.sleep_value(id, "n").unwrap_err(),
        "sleep: invalid sleep time \"NULL\" for variable \"n\""
    );
}
