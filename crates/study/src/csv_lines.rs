//! Where a COPY error is in the file. pgrig sends a CSV file's bytes unchanged in one COPY, and
//! the server counts the file's physical lines (a line end inside a quoted field counts too;
//! the header is line 1) and says `COPY t, line N, column c: "value"` in the error's context:
//! N is the file's line.

/// The line number in a COPY error's context (`COPY title, line 3, column x: "..."`).
pub fn line_in_context(context: &str) -> Option<u64> {
    let rest = &context[context.find(", line ")? + ", line ".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_number_is_read_from_the_context() {
        assert_eq!(
            line_in_context("COPY title, line 12, column year: \"x\""),
            Some(12)
        );
        assert_eq!(line_in_context("COPY title, line 7"), Some(7));
        assert_eq!(line_in_context("SQL statement"), None);
    }
}
