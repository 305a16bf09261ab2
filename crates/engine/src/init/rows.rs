//! Client-side rows of the `g` step in COPY text format, appended to reusable buffers: branches
//! and tellers with a NULL filler (`\N`), accounts with an empty (blank-padded) filler.

use super::ddl::{NACCOUNTS, NBRANCHES, NTELLERS};

/// One of the three tables the `g` step fills, in loading order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Branches,
    Tellers,
    Accounts,
}

impl Table {
    pub const LOAD_ORDER: [Table; 3] = [Table::Branches, Table::Tellers, Table::Accounts];

    pub fn name(self) -> &'static str {
        match self {
            Table::Branches => "pgbench_branches",
            Table::Tellers => "pgbench_tellers",
            Table::Accounts => "pgbench_accounts",
        }
    }

    /// Rows per scale unit.
    pub fn base(self) -> i64 {
        match self {
            Table::Branches => NBRANCHES,
            Table::Tellers => NTELLERS,
            Table::Accounts => NACCOUNTS,
        }
    }

    /// Total rows at `scale`.
    pub fn total(self, scale: i32) -> i64 {
        self.base() * i64::from(scale)
    }

    /// Appends the COPY line of row `k` (0-based; the key is `k + 1`).
    pub fn push_row(self, buf: &mut Vec<u8>, k: i64) {
        push_int(buf, k + 1);
        match self {
            Table::Branches => buf.extend_from_slice(b"\t0\t\\N\n"),
            Table::Tellers => {
                buf.push(b'\t');
                push_int(buf, k / NTELLERS + 1);
                buf.extend_from_slice(b"\t0\t\\N\n");
            }
            Table::Accounts => {
                buf.push(b'\t');
                push_int(buf, k / NACCOUNTS + 1);
                buf.extend_from_slice(b"\t0\t\n");
            }
        }
    }
}

/// Appends the decimal text of `v`.
pub fn push_int(buf: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: Table, k: i64) -> String {
        let mut b = Vec::new();
        t.push_row(&mut b, k);
        String::from_utf8(b).unwrap_or_default()
    }

    #[test]
    fn branches_have_null_filler() {
        assert_eq!(row(Table::Branches, 0), "1\t0\t\\N\n");
        assert_eq!(row(Table::Branches, 41), "42\t0\t\\N\n");
    }

    #[test]
    fn tellers_belong_to_branch_by_tens() {
        assert_eq!(row(Table::Tellers, 0), "1\t1\t0\t\\N\n");
        assert_eq!(row(Table::Tellers, 9), "10\t1\t0\t\\N\n");
        assert_eq!(row(Table::Tellers, 10), "11\t2\t0\t\\N\n");
    }

    #[test]
    fn accounts_have_blank_filler_and_branch_by_hundred_thousands() {
        assert_eq!(row(Table::Accounts, 0), "1\t1\t0\t\n");
        assert_eq!(row(Table::Accounts, 99_999), "100000\t1\t0\t\n");
        assert_eq!(row(Table::Accounts, 100_000), "100001\t2\t0\t\n");
        assert_eq!(
            row(Table::Accounts, 2_199_999_999),
            "2200000000\t22000\t0\t\n"
        );
    }

    #[test]
    fn integers_print_like_printf() {
        for v in [0i64, 7, 10, 99, 100, 123_456_789, i64::MAX, i64::MIN, -5] {
            let mut b = Vec::new();
            push_int(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap_or_default(), v.to_string());
        }
    }

    #[test]
    fn totals_scale_with_factor() {
        assert_eq!(Table::Branches.total(3), 3);
        assert_eq!(Table::Tellers.total(3), 30);
        assert_eq!(Table::Accounts.total(30_000), 3_000_000_000);
    }
}
