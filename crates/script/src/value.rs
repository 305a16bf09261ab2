//! Typed values of the expression language (NULL, boolean, int64, double) and their coercions,
//! with pgbench's rules and error messages (reference §6.3).

use crate::error::EvalError;
use crate::format::{push_i64_bytes, write_g15, write_i64, ByteWriter, F6};

/// A typed value. Strings never appear here: string variables are converted lazily by [`crate::vars`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// `rint()` in the default rounding mode: round half to even.
#[inline]
pub fn rint(x: f64) -> f64 {
    x.round_ties_even()
}

/// `(int64) x` as x86-64 compiles it (`cvttsd2si`): truncation toward zero, and the "integer
/// indefinite" value `i64::MIN` for NaN and out-of-range inputs (C leaves those undefined; pgbench
/// on x86-64 shows `i64::MIN`, e.g. `random_gaussian(1, 10, 0.0/0)` = `1 + i64::MIN`).
#[inline]
pub fn c_double_to_i64(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

impl Value {
    /// pgbench's type name as used in `cannot coerce %s to ...`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// `coerceToInt`: ints as is, doubles `rint`-ed and range-checked, others are errors.
    #[inline]
    pub fn to_int(&self) -> Result<i64, EvalError> {
        match *self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => double_to_int(d),
            _ => Err(EvalError::text(format!(
                "cannot coerce {} to int",
                self.type_name()
            ))),
        }
    }

    /// `coerceToDouble`: doubles as is, ints converted, others are errors.
    #[inline]
    pub fn to_double(&self) -> Result<f64, EvalError> {
        match *self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            _ => Err(EvalError::text(format!(
                "cannot coerce {} to double",
                self.type_name()
            ))),
        }
    }

    /// `coerceToBool` (AND, OR, NOT): only booleans.
    #[inline]
    pub fn to_bool(&self) -> Result<bool, EvalError> {
        match *self {
            Value::Bool(b) => Ok(b),
            _ => Err(EvalError::text(format!(
                "cannot coerce {} to boolean",
                self.type_name()
            ))),
        }
    }

    /// `valueTruth`, used by `\if`, `\elif` and `CASE WHEN`: NULL is false, numbers are true when
    /// non-zero (NaN is true), never an error.
    #[inline]
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// Writes the text form used for SQL substitution, parameters, `\sleep` and shell arguments:
    /// `NULL`, `true`/`false`, `%lld`, `%.15g`.
    pub fn write_text<W: std::fmt::Write + ?Sized>(&self, out: &mut W) -> std::fmt::Result {
        match *self {
            Value::Null => out.write_str("NULL"),
            Value::Bool(b) => out.write_str(if b { "true" } else { "false" }),
            Value::Int(i) => write_i64(out, i),
            Value::Double(d) => write_g15(out, d),
        }
    }

    /// Appends the text form (see [`Value::write_text`]) to a `String`.
    pub fn push_text(&self, out: &mut String) {
        let _ = self.write_text(out);
    }

    /// Appends the text form (see [`Value::write_text`]) to a byte buffer.
    pub fn push_text_bytes(&self, out: &mut Vec<u8>) {
        match *self {
            Value::Int(i) => push_i64_bytes(out, i),
            _ => {
                let _ = self.write_text(&mut ByteWriter(out));
            }
        }
    }
}

/// A double's conversion to int: `rint`, then `double to int overflow for %f` unless it fits.
#[inline]
pub fn double_to_int(d: f64) -> Result<i64, EvalError> {
    let r = rint(d);
    // FLOAT8_FITS_IN_INT64: -2^63 <= r < 2^63 (false for NaN)
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        Ok(r as i64)
    } else {
        Err(EvalError::text(format!(
            "double to int overflow for {}",
            F6(r)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err<T: std::fmt::Debug>(r: Result<T, EvalError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn int_rounds_half_to_even() {
        assert_eq!(Value::Double(2.5).to_int().unwrap(), 2);
        assert_eq!(Value::Double(3.5).to_int().unwrap(), 4);
        assert_eq!(Value::Double(-0.5).to_int().unwrap(), 0);
        assert_eq!(Value::Double(-1.5).to_int().unwrap(), -2);
        assert_eq!(Value::Double(7.3).to_int().unwrap(), 7);
    }

    #[test]
    fn int_of_int64_min_double_fits() {
        assert_eq!(
            Value::Double(-9223372036854775808.0).to_int().unwrap(),
            i64::MIN
        );
    }

    #[test]
    fn double_to_int_overflow_messages_match_pgbench() {
        // Ground truth: pgbench 15.18.
        assert_eq!(
            err(Value::Double(9223372036854775807.0).to_int()),
            "double to int overflow for 9223372036854775808.000000"
        );
        assert_eq!(
            err(Value::Double(1e19).to_int()),
            "double to int overflow for 10000000000000000000.000000"
        );
        assert_eq!(
            err(Value::Double(f64::NAN).to_int()),
            "double to int overflow for NaN"
        );
        assert_eq!(
            err(Value::Double(f64::INFINITY).to_int()),
            "double to int overflow for Infinity"
        );
        assert_eq!(
            err(Value::Double(f64::NEG_INFINITY).to_int()),
            "double to int overflow for -Infinity"
        );
    }

    #[test]
    fn coercion_errors_name_the_type() {
        assert_eq!(
            err(Value::Bool(true).to_int()),
            "cannot coerce boolean to int"
        );
        assert_eq!(err(Value::Null.to_int()), "cannot coerce null to int");
        assert_eq!(
            err(Value::Bool(false).to_double()),
            "cannot coerce boolean to double"
        );
        assert_eq!(err(Value::Null.to_double()), "cannot coerce null to double");
        assert_eq!(err(Value::Int(1).to_bool()), "cannot coerce int to boolean");
        assert_eq!(
            err(Value::Double(1.0).to_bool()),
            "cannot coerce double to boolean"
        );
        assert_eq!(err(Value::Null.to_bool()), "cannot coerce null to boolean");
    }

    #[test]
    fn truth_follows_valuetruth() {
        assert!(!Value::Null.truth());
        assert!(Value::Bool(true).truth());
        assert!(!Value::Int(0).truth());
        assert!(Value::Int(-3).truth());
        assert!(!Value::Double(0.0).truth());
        assert!(!Value::Double(-0.0).truth());
        assert!(Value::Double(f64::NAN).truth());
    }

    #[test]
    fn text_forms() {
        let mut s = String::new();
        for (v, t) in [
            (Value::Null, "NULL"),
            (Value::Bool(true), "true"),
            (Value::Bool(false), "false"),
            (Value::Int(-42), "-42"),
            (Value::Double(1.5), "1.5"),
            (Value::Double(1e30), "1e+30"),
            (Value::Double(f64::INFINITY), "Infinity"),
        ] {
            s.clear();
            v.push_text(&mut s);
            assert_eq!(s, t);
        }
    }

    #[test]
    fn c_cast_of_nan_and_out_of_range_is_int64_min() {
        assert_eq!(c_double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_double_to_i64(f64::INFINITY), i64::MIN);
        assert_eq!(c_double_to_i64(1e19), i64::MIN);
        assert_eq!(c_double_to_i64(-2.9), -2);
        assert_eq!(c_double_to_i64(2.9), 2);
    }
}
