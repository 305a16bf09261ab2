//! Bind parameters from a `DETAIL:  parameters: $1 = '...', $2 = NULL` log message.

/// The values, `None` for NULL. The error is pgreplay's message (`lineno` is named in it).
pub fn parse_bind_args(line: &[u8], lineno: u64) -> Result<Vec<Option<Vec<u8>>>, String> {
    let mut out = Vec::new();
    let mut p = 0usize;
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    while at(p) != 0 {
        let count = out.len();
        if at(p) != b'$' {
            return Err(format!(
                "Error: no dollar sign found in argument {count} in line {lineno}"
            ));
        }
        p += 1;
        while at(p).is_ascii_digit() {
            p += 1;
        }
        if at(p) != b' ' || at(p + 1) != b'=' || at(p + 2) != b' ' {
            return Err(format!(
                "Error: bad format in argument {count} in line {lineno}"
            ));
        }
        p += 3;
        if at(p) == b'\'' {
            p += 1;
            let mut v = Vec::new();
            loop {
                match at(p) {
                    0 => {
                        return Err(format!(
                            "Error: unexpected end of line in argument {count} in line {lineno}"
                        ))
                    }
                    b'\'' if at(p + 1) == b'\'' => {
                        v.push(b'\'');
                        p += 2;
                    }
                    b'\'' => {
                        p += 1;
                        break;
                    }
                    c => {
                        v.push(c);
                        p += 1;
                    }
                }
            }
            out.push(Some(v));
        } else if line[p..].starts_with(b"NULL") {
            p += 4;
            out.push(None);
        } else {
            return Err(format!(
                "Error: expected NULL in argument {count} in line {lineno}"
            ));
        }
        if at(p) == b',' && at(p + 1) == b' ' {
            p += 2;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_nulls() {
        let v = parse_bind_args(b"$1 = '1', $2 = 'ein ''x', $3 = NULL", 1).unwrap();
        assert_eq!(v, vec![Some(b"1".to_vec()), Some(b"ein 'x".to_vec()), None]);
        assert_eq!(
            parse_bind_args(b"$1 = 1", 9).unwrap_err(),
            "Error: expected NULL in argument 0 in line 9"
        );
    }
}
