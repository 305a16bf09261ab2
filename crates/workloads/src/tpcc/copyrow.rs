//! One COPY row written field by field in either format the loader asks for: binary (integers,
//! `numeric` in base-10000 digits, `timestamp` as microseconds since 2000-01-01, text as bytes)
//! or text (tab-separated, `\N` for NULL; TPC-C's generated strings need no escaping).

use pgrig_init::dataset::CopyFormat;

/// Microseconds from 1970-01-01 to 2000-01-01 (PostgreSQL's timestamp epoch).
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// A row being appended to a COPY buffer.
pub struct Row<'a> {
    buf: &'a mut Vec<u8>,
    binary: bool,
    first: bool,
}

impl<'a> Row<'a> {
    /// Starts a row of `fields` fields.
    pub fn begin(buf: &'a mut Vec<u8>, format: CopyFormat, fields: i16) -> Self {
        let binary = matches!(format, CopyFormat::Binary { .. });
        if binary {
            buf.extend_from_slice(&fields.to_be_bytes());
        }
        Row {
            buf,
            binary,
            first: true,
        }
    }

    fn sep(&mut self) {
        if !self.binary && !self.first {
            self.buf.push(b'\t');
        }
        self.first = false;
    }

    /// An `integer` field.
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.sep();
        if self.binary {
            self.buf.extend_from_slice(&4i32.to_be_bytes());
            self.buf.extend_from_slice(&(v as i32).to_be_bytes());
        } else {
            push_int(self.buf, v);
        }
        self
    }

    /// A `numeric` field of value `v / 10^scale`.
    pub fn num(&mut self, v: i64, scale: u32) -> &mut Self {
        self.sep();
        if self.binary {
            let at = self.buf.len();
            self.buf.extend_from_slice(&0i32.to_be_bytes());
            push_numeric_binary(self.buf, v, scale);
            let len = (self.buf.len() - at - 4) as i32;
            self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        } else {
            push_decimal(self.buf, v, scale);
        }
        self
    }

    /// A text field (`varchar`, `char`) written by `f`.
    pub fn text_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.sep();
        if self.binary {
            let at = self.buf.len();
            self.buf.extend_from_slice(&0i32.to_be_bytes());
            f(self.buf);
            let len = (self.buf.len() - at - 4) as i32;
            self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        } else {
            f(self.buf);
        }
        self
    }

    pub fn text(&mut self, v: &[u8]) -> &mut Self {
        self.text_with(|b| b.extend_from_slice(v))
    }

    /// A `timestamp` field, `unix_us` microseconds since 1970-01-01 00:00:00.
    pub fn ts(&mut self, unix_us: i64) -> &mut Self {
        self.sep();
        if self.binary {
            self.buf.extend_from_slice(&8i32.to_be_bytes());
            self.buf
                .extend_from_slice(&(unix_us - PG_EPOCH_US).to_be_bytes());
        } else {
            push_timestamp(self.buf, unix_us);
        }
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.sep();
        if self.binary {
            self.buf.extend_from_slice(&(-1i32).to_be_bytes());
        } else {
            self.buf.extend_from_slice(b"\\N");
        }
        self
    }

    /// Ends the row.
    pub fn end(self) {
        if !self.binary {
            self.buf.push(b'\n');
        }
    }
}

/// Appends the decimal digits of `v`.
pub use pgrig_engine::workload::push_int;

/// Appends `v / 10^scale` as decimal text (`-0.05`, `12.30`).
pub fn push_decimal(buf: &mut Vec<u8>, v: i64, scale: u32) {
    if scale == 0 {
        return push_int(buf, v);
    }
    let p = 10i64.pow(scale);
    if v < 0 {
        buf.push(b'-');
    }
    let a = v.unsigned_abs() as i64;
    push_int(buf, a / p);
    buf.push(b'.');
    let frac = a % p;
    let mut digits = [b'0'; 18];
    let mut f = frac;
    for i in (0..scale as usize).rev() {
        digits[i] = b'0' + (f % 10) as u8;
        f /= 10;
    }
    buf.extend_from_slice(&digits[..scale as usize]);
}

/// `numeric`'s binary form: ndigits, weight, sign, dscale, then base-10000 digits.
fn push_numeric_binary(buf: &mut Vec<u8>, v: i64, scale: u32) {
    let frac_groups = scale.div_ceil(4);
    let mut mag = u128::from(v.unsigned_abs()) * 10u128.pow(frac_groups * 4 - scale);
    let mut digits = [0i16; 12];
    let mut n = 0;
    while mag > 0 {
        digits[n] = (mag % 10_000) as i16;
        mag /= 10_000;
        n += 1;
    }
    // digits are least significant first; the last frac_groups of them are fractional
    let weight = n as i16 - frac_groups as i16 - 1;
    let mut low = 0;
    while low < n && digits[low] == 0 {
        low += 1; // trailing zeros
    }
    let count = n - low;
    buf.extend_from_slice(&(count as i16).to_be_bytes());
    buf.extend_from_slice(&(if count == 0 { 0 } else { weight }).to_be_bytes());
    let sign: u16 = if v < 0 { 0x4000 } else { 0 };
    buf.extend_from_slice(&sign.to_be_bytes());
    buf.extend_from_slice(&(scale as i16).to_be_bytes());
    for d in digits[low..n].iter().rev() {
        buf.extend_from_slice(&d.to_be_bytes());
    }
}

/// `YYYY-MM-DD HH:MM:SS.ffffff` (UTC civil time) of `unix_us`.
fn push_timestamp(buf: &mut Vec<u8>, unix_us: i64) {
    let secs = unix_us.div_euclid(1_000_000);
    let us = unix_us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let pad = |buf: &mut Vec<u8>, v: i64, w: usize| {
        let mut t = Vec::with_capacity(8);
        push_int(&mut t, v);
        for _ in t.len()..w {
            buf.push(b'0');
        }
        buf.extend_from_slice(&t);
    };
    pad(buf, y, 4);
    buf.push(b'-');
    pad(buf, m, 2);
    buf.push(b'-');
    pad(buf, d, 2);
    buf.push(b' ');
    pad(buf, sod / 3600, 2);
    buf.push(b':');
    pad(buf, sod / 60 % 60, 2);
    buf.push(b':');
    pad(buf, sod % 60, 2);
    buf.push(b'.');
    pad(buf, us, 6);
}

/// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_render_with_their_scale() {
        let mut b = Vec::new();
        push_decimal(&mut b, -5, 2);
        b.push(b' ');
        push_decimal(&mut b, 1230, 2);
        b.push(b' ');
        push_decimal(&mut b, 1999, 4);
        assert_eq!(b, b"-0.05 12.30 0.1999");
    }

    #[test]
    fn numeric_binary_digits() {
        // 300000.00 = 30 * 10000^1 ; weight 1, digits [30]
        let mut b = Vec::new();
        push_numeric_binary(&mut b, 30_000_000, 2);
        assert_eq!(b, [0, 1, 0, 1, 0, 0, 0, 2, 0, 30]);
        // -10.00 -> [10], weight 0, negative
        b.clear();
        push_numeric_binary(&mut b, -1000, 2);
        assert_eq!(b, [0, 1, 0, 0, 0x40, 0, 0, 2, 0, 10]);
        // 0.1234 (scale 4) -> [1234], weight -1
        b.clear();
        push_numeric_binary(&mut b, 1234, 4);
        assert_eq!(b, [0, 1, 0xff, 0xff, 0, 0, 0, 4, 0x04, 0xd2]);
        // 12.34 -> [12, 3400], weight 0
        b.clear();
        push_numeric_binary(&mut b, 1234, 2);
        assert_eq!(b, [0, 2, 0, 0, 0, 0, 0, 2, 0, 12, 0x0d, 0x48]);
        // zero
        b.clear();
        push_numeric_binary(&mut b, 0, 2);
        assert_eq!(b, [0, 0, 0, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn timestamps_render_as_civil_time() {
        let mut b = Vec::new();
        push_timestamp(&mut b, 951_782_400_000_001); // 2000-02-29
        assert_eq!(b, b"2000-02-29 00:00:00.000001");
    }
}
