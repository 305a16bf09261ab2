//! C number parsing as pgbench's option handling sees it (C locale, 64-bit `long`):
//! `strtol`, `option_parse_int()`, `atoi`, `atof` (= `strtod` prefix parse) and the
//! `sscanf("%lu%c")` used for `--random-seed`. Each returns what the C code would compute,
//! including its quirks (empty strings, leading/trailing blanks, saturation, wrapping).

/// `isspace()` in the C locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    i
}

/// Result of a C `strto*` call: the value, where parsing stopped (`endptr` as a byte offset;
/// 0 when nothing was converted), and whether `errno` was set to `ERANGE`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strto<V> {
    pub value: V,
    pub end: usize,
    pub erange: bool,
}

/// Sign and the run of decimal digits after optional blanks: (negative, digits start, digits end).
fn sign_and_digits(b: &[u8]) -> (bool, usize, usize) {
    let mut i = skip_spaces(b, 0);
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    (neg, start, i)
}

/// `strtol(s, &end, 10)` with a 64-bit `long`: saturates at the bounds with `ERANGE`.
pub fn strtol(s: &str) -> Strto<i64> {
    let b = s.as_bytes();
    let (neg, start, end) = sign_and_digits(b);
    if start == end {
        return Strto {
            value: 0,
            end: 0,
            erange: false,
        };
    }
    let mut acc: i128 = 0;
    let mut erange = false;
    for &d in &b[start..end] {
        acc = acc * 10 + i128::from(d - b'0');
        if acc > i128::from(i64::MAX) + 1 {
            erange = true;
            acc = i128::from(i64::MAX) + 2; // keep bounded
        }
    }
    let signed = if neg { -acc } else { acc };
    let value = if signed > i128::from(i64::MAX) {
        erange = true;
        i64::MAX
    } else if signed < i128::from(i64::MIN) {
        erange = true;
        i64::MIN
    } else {
        signed as i64
    };
    Strto { value, end, erange }
}

/// `strtoull(s, &end, 10)`: a leading `-` negates modulo 2^64; overflow saturates with `ERANGE`.
pub fn strtoull(s: &str) -> Strto<u64> {
    let b = s.as_bytes();
    let (neg, start, end) = sign_and_digits(b);
    if start == end {
        return Strto {
            value: 0,
            end: 0,
            erange: false,
        };
    }
    let mut acc: u64 = 0;
    for &d in &b[start..end] {
        match acc
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) => acc = v,
            None => {
                return Strto {
                    value: u64::MAX,
                    end,
                    erange: true,
                }
            }
        }
    }
    let value = if neg { acc.wrapping_neg() } else { acc };
    Strto {
        value,
        end,
        erange: false,
    }
}

/// Why `option_parse_int()` rejected a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntError {
    /// `invalid value "%s" for option %s`
    Invalid,
    /// `%s must be in range %d..%d`
    Range,
}

/// PostgreSQL's `option_parse_int()`: `strtoint()` (= `strtol` narrowed to `int`, `ERANGE` when
/// it does not fit), trailing blanks allowed, then the range check. Note that an empty or
/// all-blank value converts to 0.
pub fn option_parse_int(s: &str, min: i32, max: i32) -> Result<i32, IntError> {
    let r = strtol(s);
    let b = s.as_bytes();
    let end = skip_spaces(b, r.end);
    if end != b.len() {
        return Err(IntError::Invalid);
    }
    let narrowed = r.value as i32;
    let erange = r.erange || i64::from(narrowed) != r.value;
    if erange || narrowed < min || narrowed > max {
        return Err(IntError::Range);
    }
    Ok(narrowed)
}

/// glibc `atoi()`: `(int) strtol(s, NULL, 10)` (saturated, then truncated to 32 bits).
pub fn atoi(s: &str) -> i32 {
    strtol(s).value as i32
}

/// `atof()`: `strtod()` on the longest valid prefix (decimal, hexadecimal, `inf`/`infinity`,
/// `nan`/`nan(...)`), 0.0 when there is none. Overflow gives ±infinity like glibc.
pub fn atof(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = skip_spaces(b, 0);
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let rest = &b[i..];
    let magnitude = if let Some(v) = parse_inf_nan(rest) {
        v
    } else if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        parse_hex(&rest[2..]).unwrap_or(0.0)
    } else {
        parse_decimal(rest)
    };
    if neg {
        -magnitude
    } else {
        magnitude
    }
}

fn starts_with_ci(b: &[u8], word: &str) -> bool {
    b.len() >= word.len() && b[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

fn parse_inf_nan(b: &[u8]) -> Option<f64> {
    if starts_with_ci(b, "inf") {
        return Some(f64::INFINITY);
    }
    if starts_with_ci(b, "nan") {
        return Some(f64::NAN);
    }
    None
}

/// Decimal `digits[.digits][e[+-]digits]`, at least one mantissa digit.
fn parse_decimal(b: &[u8]) -> f64 {
    let mut i = 0;
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0.0;
    }
    let mantissa_end = i;
    let mut end = mantissa_end;
    if i < b.len() && (b[i] | 0x20) == b'e' {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_digits_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_digits_start {
            end = j;
        }
    }
    // The slice is ASCII digits, '.', 'e'/'E' and signs only, which Rust's parser accepts
    // (including "1." and ".5"); huge exponents give infinity or zero like strtod.
    std::str::from_utf8(&b[..end])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// Hexadecimal float after `0x`: `hex[.hex][p[+-]digits]`. `None` when no hex digit follows
/// (strtod then converts just the leading `0`).
fn parse_hex(b: &[u8]) -> Option<f64> {
    let mut i = 0;
    let mut mantissa = 0.0f64;
    let mut exp: i64 = 0;
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_hexdigit() {
        mantissa = mantissa * 16.0 + f64::from((b[i] as char).to_digit(16).unwrap_or(0));
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_hexdigit() {
            mantissa = mantissa * 16.0 + f64::from((b[i] as char).to_digit(16).unwrap_or(0));
            exp -= 4;
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] | 0x20) == b'p' {
        let r = strtol(std::str::from_utf8(&b[i + 1..]).unwrap_or(""));
        let sign_ok = b
            .get(i + 1)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'+' || *c == b'-');
        if r.end > 0 && sign_ok {
            exp = exp.saturating_add(r.value.clamp(-100_000, 100_000));
        }
    }
    Some(mantissa * 2f64.powi(exp.clamp(-100_000, 100_000) as i32))
}

/// `sscanf(s, "%lu%c", &v, &c) == 1`: an unsigned decimal (blanks and a sign allowed in front,
/// saturating on overflow) and nothing at all after it.
pub fn scan_u64_exact(s: &str) -> Option<u64> {
    let r = strtoull(s);
    if r.end == 0 || r.end != s.len() {
        return None;
    }
    Some(r.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_parse_int_accepts_blanks_around_and_empty_as_zero() {
        assert_eq!(option_parse_int(" 5 ", 1, 10), Ok(5));
        assert_eq!(option_parse_int("", 0, 10), Ok(0));
        assert_eq!(option_parse_int("  ", 1, 10), Err(IntError::Range));
        assert_eq!(option_parse_int("5x", 1, 10), Err(IntError::Invalid));
        assert_eq!(
            option_parse_int("99999999999", 1, i32::MAX),
            Err(IntError::Range)
        );
        assert_eq!(option_parse_int("+7", 1, 10), Ok(7));
        assert_eq!(option_parse_int("-", 1, 10), Err(IntError::Invalid));
    }

    #[test]
    fn atof_parses_the_longest_prefix() {
        assert_eq!(atof("1.5abc"), 1.5);
        assert_eq!(atof(" 2e3"), 2000.0);
        assert_eq!(atof("1e"), 1.0);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof("0x1.8p1"), 3.0);
        assert_eq!(atof("0xg"), 0.0);
        assert_eq!(atof("-inf"), f64::NEG_INFINITY);
        assert!(atof("nan").is_nan());
        assert_eq!(atof("1e999"), f64::INFINITY);
        assert_eq!(atof(".5"), 0.5);
        assert_eq!(atof("."), 0.0);
    }

    #[test]
    fn atoi_wraps_like_glibc() {
        assert_eq!(atoi("3x"), 3);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi("99999999999999999999"), -1);
        assert_eq!(atoi("-5"), -5);
    }

    #[test]
    fn seed_scan_needs_the_whole_string() {
        assert_eq!(scan_u64_exact(" 7"), Some(7));
        assert_eq!(scan_u64_exact("7 "), None);
        assert_eq!(scan_u64_exact(""), None);
        assert_eq!(scan_u64_exact("-1"), Some(u64::MAX));
        assert_eq!(scan_u64_exact("99999999999999999999999"), Some(u64::MAX));
        assert_eq!(scan_u64_exact("0x10"), None);
    }
}
