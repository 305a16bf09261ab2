//! Input generation shared by the five transactions (clause 2.4.1–2.8.1): the terminal's
//! warehouse, districts, customers by number or by last name, items, and remote warehouses.

use pgrig_engine::workload::push_int;

use super::load::{CUSTOMERS, DISTRICTS, ITEMS};
use super::rand::{NurandC, Rng};

/// What one transaction's inputs are drawn from.
pub struct Draw<'a> {
    pub rng: &'a mut Rng,
    /// run-time NURand constants
    pub c: NurandC,
    pub warehouses: i64,
    /// the terminal's warehouse for this transaction
    pub w: i64,
    /// the terminal's own district (terminal mode; Stock-Level's D_ID), else `None`
    pub home_d: Option<i64>,
}

/// How Payment and Order-Status name their customer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Customer {
    #[default]
    None,
    /// C_ID = NURand(1023, 1, 3000)
    Id(i64),
    /// C_LAST = the syllables of NURand(255, 0, 999)
    LastName(i64),
}

impl Draw<'_> {
    pub fn district(&mut self) -> i64 {
        self.rng.range(1, DISTRICTS)
    }

    pub fn customer_id(&mut self) -> i64 {
        self.rng.nurand(1023, 1, CUSTOMERS, self.c.c_id)
    }

    pub fn item_id(&mut self) -> i64 {
        self.rng.nurand(8191, 1, ITEMS, self.c.ol_i_id)
    }

    /// 60 % by last name, 40 % by number (clause 2.5.1.2, 2.6.1.2).
    pub fn customer(&mut self) -> Customer {
        if self.rng.range(1, 100) <= 60 {
            Customer::LastName(self.rng.nurand(255, 0, 999, self.c.c_last))
        } else {
            Customer::Id(self.customer_id())
        }
    }

    /// A warehouse other than the home one (the home one when there is only one).
    pub fn other_warehouse(&mut self) -> i64 {
        if self.warehouses < 2 {
            return self.w;
        }
        let o = self.rng.range(1, self.warehouses - 1);
        if o >= self.w {
            o + 1
        } else {
            o
        }
    }
}

/// The 0-based position of the customer chosen among `n` sorted by C_FIRST: position n/2
/// rounded up, 1-based (clause 2.5.2.2).
pub fn middle(n: usize) -> usize {
    n.div_ceil(2).saturating_sub(1)
}

/// Appends `{a,b,c}` (an integer array parameter) without allocating.
pub fn int_array(b: &mut Vec<u8>, values: impl Iterator<Item = i64>) {
    b.push(b'{');
    for (i, v) in values.enumerate() {
        if i > 0 {
            b.push(b',');
        }
        push_int(b, v);
    }
    b.push(b'}');
}

/// `12.34` → 1234 (a numeric reply with up to two decimals).
pub fn parse_cents(v: &[u8]) -> Option<i64> {
    let (neg, v) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        _ => (false, v),
    };
    let mut int = 0i64;
    let mut frac = 0i64;
    let mut frac_digits = 0;
    let mut seen_point = false;
    for &c in v {
        match c {
            b'.' if !seen_point => seen_point = true,
            b'0'..=b'9' if !seen_point => int = int * 10 + i64::from(c - b'0'),
            b'0'..=b'9' if frac_digits < 2 => {
                frac = frac * 10 + i64::from(c - b'0');
                frac_digits += 1;
            }
            b'0'..=b'9' => {}
            _ => return None,
        }
    }
    for _ in frac_digits..2 {
        frac *= 10;
    }
    let c = int * 100 + frac;
    Some(if neg { -c } else { c })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middle_rounds_up() {
        assert_eq!([1, 2, 3, 4, 5].map(middle), [0, 0, 1, 1, 2]);
    }

    #[test]
    fn int_arrays_are_array_literals() {
        let mut b = Vec::new();
        int_array(&mut b, [3, -1, 10].into_iter());
        assert_eq!(b, b"{3,-1,10}");
        b.clear();
        int_array(&mut b, std::iter::empty());
        assert_eq!(b, b"{}");
    }

    #[test]
    fn cents_parse() {
        assert_eq!(parse_cents(b"12.34"), Some(1234));
        assert_eq!(parse_cents(b"-0.5"), Some(-50));
        assert_eq!(parse_cents(b"7"), Some(700));
        assert_eq!(parse_cents(b"x"), None);
    }

    #[test]
    fn other_warehouse_is_never_home() {
        let mut rng = Rng::new(3);
        for w in 1..=4 {
            let mut d = Draw {
                rng: &mut rng,
                c: NurandC::load(1),
                warehouses: 4,
                w,
                home_d: None,
            };
            for _ in 0..100 {
                let o = d.other_warehouse();
                assert!(o != w && (1..=4).contains(&o));
            }
        }
    }
}
