//! Log timestamps: pgreplay's `nnnn-nn-nn nn:nn:nn.nnn` (the time zone ignored), counted in
//! seconds and microseconds since 2000-01-01 00:00:00 of the same (naive) calendar.

/// A point in recorded time: seconds since 2000-01-01 and microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Timestamp {
    pub sec: i64,
    pub usec: u32,
}

impl Timestamp {
    /// Microseconds since the epoch (for differences).
    pub fn micros(&self) -> i64 {
        self.sec * 1_000_000 + i64::from(self.usec)
    }
}

const FORMAT: &[u8] = b"nnnn-nn-nn nn:nn:nn.nnn";
const BUFLEN: usize = 1024;

/// Checks and converts a timestamp string (only its first 23 characters are read); the error
/// is pgreplay's wording, e.g. `character 5 in timestamp string is '/', expected '-'`.
pub fn parse_time(s: &[u8]) -> Result<Timestamp, String> {
    if s.len() < FORMAT.len() {
        return Err(format!(
            "timestamp string is less than {} characters long",
            FORMAT.len()
        ));
    }
    if s.len() >= BUFLEN {
        return Err(format!(
            "timestamp string is more than {} characters long",
            BUFLEN - 1
        ));
    }
    for (i, (&f, &c)) in FORMAT.iter().zip(s).enumerate() {
        if f == b'n' {
            if !c.is_ascii_digit() {
                return Err(format!(
                    "character {} in timestamp string is '{}', expected digit",
                    i + 1,
                    c as char
                ));
            }
        } else if c != f {
            return Err(format!(
                "character {} in timestamp string is '{}', expected '{}'",
                i + 1,
                c as char,
                f as char
            ));
        }
    }
    let num = |a: usize, b: usize| -> i64 {
        s[a..b]
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'))
    };
    let days = days_from_civil(num(0, 4), num(5, 7), num(8, 10)) - days_from_civil(2000, 1, 1);
    let sec = days * 86_400 + num(11, 13) * 3600 + num(14, 16) * 60 + num(17, 19);
    Ok(Timestamp {
        sec,
        usec: (num(20, 23) * 1000) as u32,
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date; months and days out of range roll
/// over as mktime(3) rolls them.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let (y, m) = (y + (m - 1).div_euclid(12), (m - 1).rem_euclid(12) + 1);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgreplay_epoch_and_errors() {
        let t = parse_time(b"2010-12-31 10:59:52.241 UTC").unwrap();
        assert_eq!((t.sec, t.usec), (347_108_392, 241_000));
        assert_eq!(
            parse_time(b"2010/12-31 10:59:52.241").unwrap_err(),
            "character 5 in timestamp string is '/', expected '-'"
        );
        assert_eq!(
            parse_time(b"2010-12-31").unwrap_err(),
            "timestamp string is less than 23 characters long"
        );
    }
}
