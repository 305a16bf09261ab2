//! Client-side rows of the `g` step, appended to reusable buffers: COPY text format for all three
//! tables (branches and tellers with a NULL filler `\N`, accounts with an empty filler that the
//! server blank-pads), and COPY binary format for accounts (the same values: an empty `char(84)`
//! value is blank-padded by the server exactly like the text one).

use crate::dataset::{CopyFormat, RowSource};
use crate::ddl::{NACCOUNTS, NBRANCHES, NTELLERS};

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

    /// Appends the COPY text line of row `k` (0-based; the key is `k + 1`).
    pub fn push_text(self, buf: &mut Vec<u8>, k: i64) {
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

/// A table's rows at a scale: pgbench's tables as a [`RowSource`].
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    pub table: Table,
    pub scale: i32,
}

/// Binary COPY columns of `pgbench_accounts` (`key` = `integer` or `bigint`).
const ACCOUNTS_BINARY: [&str; 4] = ["key", "integer", "integer", "character"];

impl RowSource for Rows {
    fn table(&self) -> &str {
        self.table.name()
    }

    fn rows(&self) -> i64 {
        self.table.total(self.scale)
    }

    fn push_row(&self, buf: &mut Vec<u8>, k: i64, format: CopyFormat) {
        match format {
            CopyFormat::Text => self.table.push_text(buf, k),
            CopyFormat::Binary { wide_key } => {
                // 4 fields: aid, bid, abalance, filler (empty)
                buf.extend_from_slice(&4i16.to_be_bytes());
                if wide_key {
                    buf.extend_from_slice(&8i32.to_be_bytes());
                    buf.extend_from_slice(&(k + 1).to_be_bytes());
                } else {
                    buf.extend_from_slice(&4i32.to_be_bytes());
                    buf.extend_from_slice(&((k + 1) as i32).to_be_bytes());
                }
                buf.extend_from_slice(&4i32.to_be_bytes());
                buf.extend_from_slice(&((k / self.table.base() + 1) as i32).to_be_bytes());
                buf.extend_from_slice(&4i32.to_be_bytes());
                buf.extend_from_slice(&0i32.to_be_bytes());
                buf.extend_from_slice(&0i32.to_be_bytes());
            }
        }
    }

    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        (self.table == Table::Accounts).then_some(&ACCOUNTS_BINARY[..])
    }

    fn rows_for_keys(&self, lo: i64, hi: i64) -> (i64, i64) {
        // key = k + 1, so keys [lo, hi) are rows [lo - 1, hi - 1), clipped to the table.
        let total = self.rows();
        (
            lo.saturating_sub(1).clamp(0, total),
            hi.saturating_sub(1).clamp(0, total),
        )
    }
}

/// Appends the decimal text of `v`.
pub use pgrig_engine::workload::push_int;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: Table, k: i64) -> String {
        let mut b = Vec::new();
        t.push_text(&mut b, k);
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
    fn binary_accounts_rows_carry_the_same_values() {
        let r = Rows {
            table: Table::Accounts,
            scale: 2,
        };
        let mut b = Vec::new();
        r.push_row(&mut b, 100_000, CopyFormat::Binary { wide_key: false });
        let mut want = vec![0, 4, 0, 0, 0, 4];
        want.extend_from_slice(&100_001i32.to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(b, want);
        b.clear();
        r.push_row(&mut b, 0, CopyFormat::Binary { wide_key: true });
        assert_eq!(&b[2..6], &[0, 0, 0, 8]);
        assert_eq!(&b[6..14], &1i64.to_be_bytes());
        assert_eq!(r.rows_for_keys(i64::MIN, 100_001), (0, 100_000));
        assert_eq!(r.rows_for_keys(100_001, i64::MAX), (100_000, 200_000));
    }

    #[test]
    fn totals_scale_with_factor() {
        assert_eq!(Table::Branches.total(3), 3);
        assert_eq!(Table::Tellers.total(3), 30);
        assert_eq!(Table::Accounts.total(30_000), 3_000_000_000);
    }
}
