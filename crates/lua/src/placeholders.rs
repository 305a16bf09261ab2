//! sysbench's `?` placeholders: numbered `$1, $2, ...` for the server (prepared statements), or
//! replaced by the values for `--db-ps-mode=disable` (sysbench's client-side emulation). A `?`
//! inside quotes is text, not a placeholder.

/// sysbench's `?` placeholders as `$1, $2, ...` (outside quotes), and their count.
pub fn numbered(sql: &str) -> (String, u16) {
    let (mut out, mut n, mut quote) = (String::with_capacity(sql.len() + 8), 0u16, None);
    for ch in sql.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, '?') => {
                n += 1;
                out += &format!("${n}");
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    (out, n)
}

/// `values` inlined into `sql`'s placeholders, as sysbench's client-side emulation writes them
/// (numbers bare, other values quoted).
pub fn inline(sql: &str, values: &[Option<String>]) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut it = values.iter();
    let mut quote = None;
    for ch in sql.chars() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, '?') => {
                match it.next() {
                    Some(Some(v)) if v.parse::<f64>().is_ok() => out += v,
                    Some(Some(v)) => out += &pgrig_wire::quote::literal(v),
                    _ => out += "NULL",
                }
                continue;
            }
            _ => {}
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered("SELECT c FROM t WHERE id = ? AND c <> '?' AND k BETWEEN ? AND ?"),
            (
                "SELECT c FROM t WHERE id = $1 AND c <> '?' AND k BETWEEN $2 AND $3".to_string(),
                3
            )
        );
    }

    #[test]
    fn inlined_values_are_bare_numbers_quoted_text_and_null() {
        let v = [Some("42".to_string()), Some("it's".to_string()), None];
        assert_eq!(
            inline("INSERT INTO t VALUES (?, ?, ?)", &v),
            "INSERT INTO t VALUES (42, 'it''s', NULL)"
        );
    }
}
