//! SQL quoting, the one home for it: string literals (with `standard_conforming_strings` on,
//! as on every supported server) and identifiers (libpq's `PQescapeIdentifier`: always
//! double-quoted). Other crates re-export these under their own names.

/// `s` as an SQL string literal: single-quoted, embedded quotes doubled.
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `s` as an SQL quoted identifier: double-quoted, embedded double quotes doubled.
pub fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_doubled() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(""), "''");
        assert_eq!(ident("My \"Table\""), "\"My \"\"Table\"\"\"");
        assert_eq!(ident("pgbench_accounts_1"), "\"pgbench_accounts_1\"");
    }
}
