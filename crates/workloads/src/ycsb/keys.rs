//! YCSB's record keys: key number `n` becomes `user` + the decimal of `n` (ordered inserts) or
//! of FNV-1a-64 over `n`'s eight little-endian bytes with the sign bit cleared (hashed inserts,
//! YCSB's default), left-padded with zeros to `zeropadding` digits. Written into a caller's
//! buffer: building a key never allocates.

use pgrig_engine::workload::decimal;

/// FNV-1 64-bit offset basis.
const FNV_OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
/// FNV-1 64-bit prime.
const FNV_PRIME: u64 = 1_099_511_628_211;

/// YCSB's 64-bit FNV hash of a key number: each of the value's 8 bytes, least significant
/// first, is XORed into the hash, which is then multiplied by the prime (wrapping); the result
/// is made non-negative as a signed 64-bit value (`i64::MIN` stays as it is, as Java's
/// `Math.abs` leaves it).
pub fn fnv_hash64(n: i64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS;
    let mut v = n;
    for _ in 0..8 {
        hash ^= (v & 0xff) as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    (hash as i64).wrapping_abs()
}

/// How key numbers become keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFormat {
    /// `insertorder=hashed` (true, the default) or `ordered`.
    pub hashed: bool,
    /// `zeropadding`: the minimum number of digits after `user`.
    pub zeropadding: usize,
}

impl KeyFormat {
    /// Appends the key of key number `n` to `out`.
    pub fn push(&self, out: &mut Vec<u8>, n: i64) {
        let v = if self.hashed { fnv_hash64(n) } else { n };
        let mut digits = [0u8; 20];
        let text = decimal(v, &mut digits);
        out.extend_from_slice(b"user");
        for _ in text.len()..self.zeropadding {
            out.push(b'0');
        }
        out.extend_from_slice(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(f: KeyFormat, n: i64) -> String {
        let mut out = Vec::new();
        f.push(&mut out, n);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ordered_keys_are_padded_key_numbers() {
        let f = KeyFormat {
            hashed: false,
            zeropadding: 5,
        };
        assert_eq!(key(f, 42), "user00042");
        assert_eq!(key(f, 1234567), "user1234567");
        let f1 = KeyFormat {
            hashed: false,
            zeropadding: 1,
        };
        assert_eq!(key(f1, 0), "user0");
    }

    #[test]
    fn i64_min_formats() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(i64::MIN, &mut b), b"-9223372036854775808");
    }
}
