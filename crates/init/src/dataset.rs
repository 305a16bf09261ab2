//! The shape every built-in dataset loads through: dataset → tables → parallel row generators →
//! indexes/constraints. pgbench's tables are the first [`Dataset`]; sysbench, TPC-C or YCSB
//! tables can plug in by describing their tables and rows the same way, and reuse the loader
//! (COPY over several connections, progress, FREEZE decisions) and the concurrent key builds.
//!
//! A [`RowSource`] produces row `k` of a table, for any `k` in `0..rows`, with no state shared
//! between rows: that is what lets the loader hand out row ranges to connections freely.

/// COPY data formats a row source can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    /// `COPY ... FROM STDIN` text format, one line per row.
    Text,
    /// `COPY ... WITH (FORMAT binary)`; `wide_key` = the key column is `bigint` (else `int`).
    Binary { wide_key: bool },
}

/// Rows of one table, addressable by their 0-based number.
pub trait RowSource: Sync {
    /// The table the rows go into (its partitions may be loaded directly).
    fn table(&self) -> &str;
    /// Number of rows.
    fn rows(&self) -> i64;
    /// Appends row `k` in `format`.
    fn push_row(&self, buf: &mut Vec<u8>, k: i64, format: CopyFormat);
    /// The column types (as `format_type` spells them) binary COPY needs, with `key` standing
    /// for the key column's `integer`/`bigint`; `None` when the source only speaks text.
    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// Rows `from..to` whose key lies in `[lo, hi)` (for loading range partitions directly);
    /// by default none (the source's tables are not loaded by partition).
    fn rows_for_keys(&self, _lo: i64, _hi: i64) -> (i64, i64) {
        (0, 0)
    }
}

/// A loadable dataset (its tables are created by its own `t` step, which has its messages).
pub trait Dataset {
    /// The tables to fill, in loading order (referenced tables first).
    fn sources(&self) -> Vec<&dyn RowSource>;
    /// Primary keys / unique indexes: independent statements that may run concurrently.
    fn key_statements(&self) -> Vec<String>;
    /// Foreign keys, run in order after the keys.
    fn foreign_key_statements(&self) -> Vec<String>;
}

/// The binary COPY header (signature, flags, header extension length).
pub const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The binary COPY trailer (field count -1).
pub const BINARY_TRAILER: &[u8] = &[0xff, 0xff];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_header_is_nineteen_bytes() {
        assert_eq!(BINARY_HEADER.len(), 11 + 4 + 4);
        assert_eq!(&BINARY_HEADER[..11], b"PGCOPY\n\xff\r\n\0");
    }
}
