//! The selection syntax of `pgrig compare A B`, parsed without touching the store:
//! `12` or `12,15,18` (run ids), `STUDY` (all its runs), `STUDY[key=value,...]` (one point of
//! it; keys as the study file's matrix names them, plus `target` and `round`). Values may be
//! quoted (`"a,b"`) and may hold brackets (`scripts=[a.sql]`). Errors point at the character.

use crate::error::CompareError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Runs(Vec<i64>),
    Study { name: String, filters: Vec<Filter> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub key: String,
    pub value: String,
}

/// Parses one selection (`which` is "A" or "B", for messages).
pub fn parse(which: &str, text: &str) -> Result<Selector, CompareError> {
    let err = |pos: usize, message: &str| CompareError::Selector {
        which: which.to_string(),
        text: text.to_string(),
        pos,
        message: message.to_string(),
    };
    if text.trim().is_empty() {
        return Err(err(
            0,
            "empty selection (give a run id, a study name or STUDY[key=value])",
        ));
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return run_ids(text).map_err(|pos| err(pos, "expected a run id"));
    }
    let Some(open) = text.find('[') else {
        if let Some(pos) = text.find(']') {
            return Err(err(pos, "`]` without `[`"));
        }
        return Ok(Selector::Study {
            name: text.to_string(),
            filters: Vec::new(),
        });
    };
    if open == 0 {
        return Err(err(0, "expected a study name before `[`"));
    }
    let filters = filters(text, open + 1).map_err(|(pos, m)| err(pos, &m))?;
    Ok(Selector::Study {
        name: text[..open].to_string(),
        filters,
    })
}

/// `12,15,18`; on error the byte offset of the bad (empty) id.
fn run_ids(text: &str) -> Result<Selector, usize> {
    let mut ids = Vec::new();
    let mut pos = 0;
    for part in text.split(',') {
        ids.push(part.parse::<i64>().map_err(|_| pos)?);
        pos += part.len() + 1;
    }
    Ok(Selector::Runs(ids))
}

/// `key=value,...]` from byte `start`; the closing `]` must end the text.
fn filters(text: &str, start: usize) -> Result<Vec<Filter>, (usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = start;
    loop {
        let key_start = i;
        while i < b.len() && !matches!(b[i], b'=' | b',' | b']') {
            i += 1;
        }
        let key = text[key_start..i].trim();
        if key.is_empty() {
            return Err((key_start, "expected a matrix key (key=value)".into()));
        }
        if i >= b.len() || b[i] != b'=' {
            return Err((i, format!("expected `=` after the key `{key}`")));
        }
        i += 1;
        let (value, next) = value(text, i)?;
        out.push(Filter {
            key: key.to_string(),
            value,
        });
        i = next;
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') if i + 1 == b.len() => return Ok(out),
            Some(b']') => return Err((i + 1, "unexpected text after `]`".into())),
            _ => return Err((i, "expected `,` or the closing `]`".into())),
        }
    }
}

/// One value from byte `i`: quoted, or up to the next `,`/`]` outside brackets. Returns the
/// value and the offset after it.
fn value(text: &str, mut i: usize) -> Result<(String, usize), (usize, String)> {
    let b = text.as_bytes();
    if b.get(i) == Some(&b'"') {
        let close = text[i + 1..]
            .find('"')
            .ok_or((i, "unterminated quoted value".to_string()))?;
        return Ok((text[i + 1..i + 1 + close].to_string(), i + close + 2));
    }
    let start = i;
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'[' => depth += 1,
            b']' if depth > 0 => depth -= 1,
            b',' | b']' if depth == 0 => break,
            _ => {}
        }
        i += 1;
    }
    let v = text[start..i].trim();
    if v.is_empty() {
        return Err((start, "expected a value after `=`".into()));
    }
    Ok((v.to_string(), i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(key: &str, value: &str) -> Filter {
        Filter {
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn run_ids_studies_and_points() {
        assert_eq!(parse("A", "12").unwrap(), Selector::Runs(vec![12]));
        assert_eq!(parse("A", "1,3,5").unwrap(), Selector::Runs(vec![1, 3, 5]));
        assert_eq!(
            parse("A", "insert").unwrap(),
            Selector::Study {
                name: "insert".into(),
                filters: vec![]
            }
        );
        assert_eq!(
            parse("A", "insert[settings.synchronous_commit=on,clients=4]").unwrap(),
            Selector::Study {
                name: "insert".into(),
                filters: vec![f("settings.synchronous_commit", "on"), f("clients", "4")]
            }
        );
        assert_eq!(
            parse(
                "A",
                r#"iso[isolation="read committed",scripts=[a.sql, b.sql]]"#
            )
            .unwrap(),
            Selector::Study {
                name: "iso".into(),
                filters: vec![
                    f("isolation", "read committed"),
                    f("scripts", "[a.sql, b.sql]")
                ]
            }
        );
    }

    fn pos(text: &str) -> (usize, String) {
        match parse("B", text).unwrap_err() {
            CompareError::Selector { pos, message, .. } => (pos, message),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn errors_point_at_the_character() {
        assert_eq!(pos("insert[clients]").0, 14);
        assert!(pos("insert[clients]")
            .1
            .contains("`=` after the key `clients`"));
        assert_eq!(pos("insert[clients=4").0, 16);
        assert_eq!(pos("insert[clients=4]x").0, 17);
        assert_eq!(pos("insert[=4]").0, 7);
        assert_eq!(pos("insert[clients=]").0, 15);
        assert_eq!(pos("[clients=4]").0, 0);
        assert_eq!(pos("1,,3").0, 2);
        assert_eq!(pos("insert]").0, 6);
        assert_eq!(pos(r#"x[a="b]"#).0, 4);
        let shown = parse("B", "insert[clients]").unwrap_err().to_string();
        assert_eq!(
            shown,
            "selection B \"insert[clients]\", character 15: expected `=` after the key `clients`\n  \
             insert[clients]\n                ^"
        );
    }
}
