//! Field values as YCSB makes them (its `RandomByteIterator`): printable ASCII, six
//! characters from each 32-bit random number, in 5-, 6- and 7-bit groups offset from the
//! space character. Written straight into a caller's buffer (no allocation).

use super::rng::Rng;

/// Appends `len` random characters to `out`.
pub fn push_value(out: &mut Vec<u8>, len: usize, rng: &mut Rng) {
    let mut left = len;
    while left > 0 {
        let r = rng.next_u64() as u32;
        let group = [
            (r & 31) as u8,
            ((r >> 5) & 63) as u8,
            ((r >> 10) & 95) as u8,
            ((r >> 15) & 31) as u8,
            ((r >> 20) & 63) as u8,
            ((r >> 25) & 95) as u8,
        ];
        let n = left.min(6);
        out.extend(group[..n].iter().map(|c| c + b' '));
        left -= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_have_the_length_asked_and_are_printable() {
        let mut rng = Rng::new(3, 4);
        for len in [0, 1, 5, 6, 7, 100] {
            let mut out = Vec::new();
            push_value(&mut out, len, &mut rng);
            assert_eq!(out.len(), len);
            assert!(out.iter().all(|c| (b' '..=127).contains(c)));
        }
    }
}
