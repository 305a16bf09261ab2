//! String → typed value conversion of variables set from text (`-D`, `\gset`, `\aset`), exactly
//! as pgbench's `makeVariableValue` does it (reference §5.2), with C's `strtoi64`/`strtod`/`atoi`
//! number syntax re-implemented (glibc behaviour: hex floats, `inf`/`nan(...)`, ERANGE).

use crate::error::EvalError;
use crate::value::Value;

/// C `isspace` in the "C" locale.
#[inline]
fn c_isspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_space(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| c_isspace(b)).count();
    &s[n..]
}

/// `pg_strncasecmp(s, word, strlen(s)) == 0`: `s` is a non-empty prefix of `word`.
fn is_prefix_ci(s: &str, word: &str) -> bool {
    !s.is_empty()
        && s.len() <= word.len()
        && word.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
}

/// pgbench's `is_an_int`: optional leading whitespace, optional sign, digits, end. Quirk kept:
/// a string with no digit at all (`"+"`, `"  "`) also passes (and then fails as bigint syntax).
fn is_an_int(s: &[u8]) -> bool {
    let mut p = skip_space(s);
    if let [b'+' | b'-', rest @ ..] = p {
        p = rest;
    }
    p.iter().all(|b| b.is_ascii_digit())
}

/// Takes a leading `-` or `+` off `p`; true for `-`.
fn take_sign(p: &mut &[u8]) -> bool {
    match p.first() {
        Some(b'-') => {
            *p = &p[1..];
            true
        }
        Some(b'+') => {
            *p = &p[1..];
            false
        }
        _ => false,
    }
}

/// C `strtoi64` on the whole string: `Ok(v)`, or `Err(true)` on overflow (ERANGE), `Err(false)` on
/// a syntax error (no digits, trailing characters).
pub fn c_strtoi64(s: &str) -> Result<i64, bool> {
    let mut p = skip_space(s.as_bytes());
    let neg = take_sign(&mut p);
    let ndig = p.iter().take_while(|b| b.is_ascii_digit()).count();
    if ndig == 0 {
        return Err(false);
    }
    let mut overflow = false;
    let mut acc: i64 = 0;
    for &b in &p[..ndig] {
        let d = i64::from(b - b'0');
        // accumulate negatively so i64::MIN is reachable
        match acc.checked_mul(10).and_then(|a| a.checked_sub(d)) {
            Some(a) => acc = a,
            None => overflow = true,
        }
    }
    if overflow {
        return Err(true);
    }
    if ndig != p.len() {
        return Err(false);
    }
    if neg {
        Ok(acc)
    } else {
        acc.checked_neg().ok_or(true)
    }
}

/// glibc `atoi`: `(int) strtol(s, NULL, 10)` — leading whitespace, sign, digits, stop at the
/// first other character; out-of-range longs clamp, then keep the low 32 bits.
pub fn c_atoi(s: &str) -> i32 {
    let mut p = skip_space(s.as_bytes());
    let neg = take_sign(&mut p);
    let mut acc: i128 = 0;
    for &b in p.iter().take_while(|b| b.is_ascii_digit()) {
        acc = (acc * 10 + i128::from(b - b'0')).min(1 << 64);
    }
    let v = if neg { -acc } else { acc };
    let l = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    l as i32
}

/// C `strtod` that must consume the whole string without ERANGE (pgbench's `strtodouble`).
pub fn c_strtod_full(s: &str) -> Option<f64> {
    let p = skip_space(s.as_bytes());
    let (neg, p) = match p.first() {
        Some(b'-') => (true, &p[1..]),
        Some(b'+') => (false, &p[1..]),
        _ => (false, p),
    };
    let v = if p.len() >= 2 && p[0] == b'0' && (p[1] | 0x20) == b'x' {
        parse_hex(&p[2..])?
    } else if let Some(v) = parse_special(p) {
        v
    } else {
        parse_dec(p)?
    };
    Some(if neg { -v } else { v })
}

/// `inf`, `infinity`, `nan`, `nan(chars)` (case-insensitive), whole string.
fn parse_special(p: &[u8]) -> Option<f64> {
    if p.eq_ignore_ascii_case(b"inf") || p.eq_ignore_ascii_case(b"infinity") {
        return Some(f64::INFINITY);
    }
    if p.len() >= 3 && p[..3].eq_ignore_ascii_case(b"nan") {
        let rest = &p[3..];
        let ok = rest.is_empty()
            || (rest.len() >= 2
                && rest[0] == b'('
                && rest[rest.len() - 1] == b')'
                && rest[1..rest.len() - 1]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_'));
        return if ok { Some(f64::NAN) } else { None };
    }
    None
}

/// Length of an exponent part `[eEpP][+-]?digits` at the start of `p` (0 if incomplete) and its
/// value saturated to ±1e6.
fn exponent(p: &[u8]) -> (usize, i64) {
    let mut i = 1;
    let mut neg = false;
    if let Some(&c) = p.get(1) {
        if c == b'+' || c == b'-' {
            neg = c == b'-';
            i = 2;
        }
    }
    let nd = p[i.min(p.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if nd == 0 {
        return (0, 0);
    }
    let mut e: i64 = 0;
    for &b in &p[i..i + nd] {
        e = (e * 10 + i64::from(b - b'0')).min(1_000_000);
    }
    (i + nd, if neg { -e } else { e })
}

fn parse_dec(p: &[u8]) -> Option<f64> {
    let int_len = p.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = int_len;
    let mut frac_len = 0;
    if p.get(i) == Some(&b'.') {
        i += 1;
        frac_len = p[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        i += frac_len;
    }
    if int_len + frac_len == 0 {
        return None;
    }
    if matches!(p.get(i), Some(b'e' | b'E')) {
        i += exponent(&p[i..]).0;
    }
    if i != p.len() {
        return None;
    }
    let text = std::str::from_utf8(p).ok()?;
    let v: f64 = text.parse().ok()?;
    let nonzero_digits = p
        .iter()
        .take_while(|&&b| b != b'e' && b != b'E')
        .any(|&b| (b'1'..=b'9').contains(&b));
    // ERANGE: overflow, underflow to zero, or a (necessarily inexact) subnormal result
    if v.is_infinite() || (nonzero_digits && v.abs() < f64::MIN_POSITIVE) {
        return None;
    }
    Some(v)
}

fn hex_val(b: u8) -> Option<u64> {
    (b as char).to_digit(16).map(u64::from)
}

fn parse_hex(p: &[u8]) -> Option<f64> {
    let mut mant: u64 = 0;
    let mut exp2: i64 = 0;
    let mut sticky = false;
    let mut ndig = 0;
    let mut i = 0;
    let mut seen_point = false;
    while i < p.len() {
        let b = p[i];
        if b == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = hex_val(b) {
            ndig += 1;
            if mant >> 60 == 0 {
                mant = (mant << 4) | d;
                if seen_point {
                    exp2 -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp2 += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if ndig == 0 {
        return None; // "0x" alone: strtod stops after the "0"
    }
    if matches!(p.get(i), Some(b'p' | b'P')) {
        let (len, e) = exponent(&p[i..]);
        i += len;
        exp2 += e;
    }
    if i != p.len() {
        return None;
    }
    if mant == 0 {
        return Some(0.0);
    }
    let top = 63 - i64::from(mant.leading_zeros()) + exp2; // binary exponent of the leading bit
    if top > 1024 {
        return None;
    }
    if top < -1022 {
        // subnormal or underflow: ERANGE unless exactly representable
        let exact = !sticky && exp2 + i64::from(mant.trailing_zeros()) >= -1074;
        if !exact {
            return None;
        }
    }
    let m = (if sticky { mant | 1 } else { mant }) as f64;
    let a = exp2 / 2;
    let v = m * 2f64.powi(a as i32) * 2f64.powi((exp2 - a) as i32);
    if v.is_infinite() {
        return None;
    }
    Some(v)
}

/// pgbench's `makeVariableValue`: the typed value of a string variable `name` holding `s`.
/// Errors: `""` (silent), `value "%s" is out of range for type bigint`,
/// `invalid input syntax for type bigint: "%s"`, `malformed variable "%s" value: "%s"`.
pub fn convert(name: &str, s: &str) -> Result<Value, EvalError> {
    if s.is_empty() {
        return Err(EvalError::silent());
    }
    if s.eq_ignore_ascii_case("null") {
        return Ok(Value::Null);
    }
    if is_prefix_ci(s, "true") || is_prefix_ci(s, "yes") || s.eq_ignore_ascii_case("on") {
        return Ok(Value::Bool(true));
    }
    if is_prefix_ci(s, "false")
        || is_prefix_ci(s, "no")
        || s.eq_ignore_ascii_case("off")
        || s.eq_ignore_ascii_case("of")
    {
        return Ok(Value::Bool(false));
    }
    if is_an_int(s.as_bytes()) {
        return match c_strtoi64(s) {
            Ok(v) => Ok(Value::Int(v)),
            Err(true) => Err(EvalError::text(format!(
                "value \"{s}\" is out of range for type bigint"
            ))),
            Err(false) => Err(EvalError::text(format!(
                "invalid input syntax for type bigint: \"{s}\""
            ))),
        };
    }
    match c_strtod_full(s) {
        Some(d) => Ok(Value::Double(d)),
        None => Err(EvalError::text(format!(
            "malformed variable \"{name}\" value: \"{s}\""
        ))),
    }
}
