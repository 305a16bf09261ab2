//! Number → text exactly as pgbench prints it: doubles with `%.15g` and `%f` through PostgreSQL's
//! own snprintf (so `Infinity`, `-Infinity`, `NaN`; otherwise C semantics: at least two exponent
//! digits, `-0` kept, round-half-even on exact decimal ties), ints with `%lld`.
//!
//! Nothing here allocates except when appending to a caller's `String` that lacks capacity.

use std::fmt::{self, Write};

/// A fixed-size byte buffer implementing `fmt::Write` (formatting on the stack).
pub(crate) struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    pub(crate) fn new() -> Self {
        StackBuf {
            buf: [0; N],
            len: 0,
        }
    }
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > N {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Text of a non-finite double as PostgreSQL's snprintf writes it; `None` for finite values.
fn non_finite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("NaN")
    } else if x == f64::INFINITY {
        Some("Infinity")
    } else if x == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

fn as_str(d: &[u8]) -> Result<&str, fmt::Error> {
    std::str::from_utf8(d).map_err(|_| fmt::Error)
}

/// Significant digits used by `%.15g` (`DBL_DIG`).
const PRECISION: i32 = 15;

/// Writes `x` as C's `%.15g` (PostgreSQL flavour for non-finite values).
pub fn write_g15<W: Write + ?Sized>(out: &mut W, x: f64) -> fmt::Result {
    if let Some(s) = non_finite(x) {
        return out.write_str(s);
    }
    // Correctly rounded mantissa digits and decimal exponent: "-d.dddddddddddddde-X".
    let mut sci = StackBuf::<40>::new();
    write!(sci, "{:.*e}", (PRECISION - 1) as usize, x)?;
    let s = sci.as_bytes();
    let neg = s[0] == b'-';
    let body = if neg { &s[1..] } else { s };
    let e_pos = body.iter().position(|&b| b == b'e').ok_or(fmt::Error)?;
    let mut digits = [0u8; PRECISION as usize];
    let mut nd = 0;
    for &b in &body[..e_pos] {
        if b.is_ascii_digit() && nd < digits.len() {
            digits[nd] = b;
            nd += 1;
        }
    }
    let exp_text = std::str::from_utf8(&body[e_pos + 1..]).map_err(|_| fmt::Error)?;
    let exp: i32 = exp_text.parse().map_err(|_| fmt::Error)?;
    // %g drops trailing zeros of the fraction (no '#' flag).
    while nd > 1 && digits[nd - 1] == b'0' {
        nd -= 1;
    }
    let digits = &digits[..nd];
    if neg {
        out.write_char('-')?;
    }
    if !(-4..PRECISION).contains(&exp) {
        // %e style: d[.ddd]e±XX (at least two exponent digits)
        out.write_str(as_str(&digits[..1])?)?;
        if digits.len() > 1 {
            out.write_char('.')?;
            out.write_str(as_str(&digits[1..])?)?;
        }
        let sign = if exp < 0 { '-' } else { '+' };
        write!(out, "e{}{:02}", sign, exp.unsigned_abs())
    } else if exp < 0 {
        // 0.000ddd
        out.write_str("0.")?;
        for _ in 0..(-exp - 1) {
            out.write_char('0')?;
        }
        out.write_str(as_str(digits)?)
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.write_str(as_str(digits)?)?;
            for _ in digits.len()..int_len {
                out.write_char('0')?;
            }
            Ok(())
        } else {
            out.write_str(as_str(&digits[..int_len])?)?;
            out.write_char('.')?;
            out.write_str(as_str(&digits[int_len..])?)
        }
    }
}

/// Writes `x` as C's `%f` (six decimals; PostgreSQL flavour for non-finite values).
pub fn write_f6<W: Write + ?Sized>(out: &mut W, x: f64) -> fmt::Result {
    match non_finite(x) {
        Some(s) => out.write_str(s),
        None => write!(out, "{:.6}", x),
    }
}

/// Appends `%.15g` of `x` to `out` (no allocation beyond `out`'s growth).
pub fn push_g15(out: &mut String, x: f64) {
    // Writing to a String cannot fail and the internal buffer is large enough for any double.
    let _ = write_g15(out, x);
}

/// Appends `%lld` of `v` to `out`.
pub fn push_i64(out: &mut String, v: i64) {
    let _ = write_i64(out, v);
}

/// `fmt::Write` into a byte vector (wire buffers).
pub struct ByteWriter<'a>(pub &'a mut Vec<u8>);

impl Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// `%lld` digits of `v` into `buf`, returning the used tail.
#[inline]
fn i64_digits(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    // two digits per division, from a table of "00".."99"
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i] = PAIRS[d];
        buf[i + 1] = PAIRS[d + 1];
    }
    if n >= 10 {
        let d = n as usize * 2;
        i -= 2;
        buf[i] = PAIRS[d];
        buf[i + 1] = PAIRS[d + 1];
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    &buf[i..]
}

/// Writes `%lld` of `v`.
pub fn write_i64<W: Write + ?Sized>(out: &mut W, v: i64) -> fmt::Result {
    let mut buf = [0u8; 20];
    if v < 0 {
        out.write_char('-')?;
    }
    out.write_str(std::str::from_utf8(i64_digits(v, &mut buf)).map_err(|_| fmt::Error)?)
}

/// Appends `%lld` of `v` to a byte buffer.
#[inline]
pub fn push_i64_bytes(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(i64_digits(v, &mut buf));
}

/// `Display` adaptor: `%.15g`.
#[derive(Clone, Copy, Debug)]
pub struct G15(pub f64);

impl fmt::Display for G15 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_g15(f, self.0)
    }
}

/// `Display` adaptor: `%f`.
#[derive(Clone, Copy, Debug)]
pub struct F6(pub f64);

impl fmt::Display for F6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_f6(f, self.0)
    }
}
