//! Server errors and notices: the fields of ErrorResponse / NoticeResponse, borrowed
//! ([`ErrorFields`]) for the hot path and owned ([`DbError`]) for reporting, with libpq's
//! default-verbosity text (`ERROR:  message`, `DETAIL:  ...`, `HINT:  ...`).

use std::fmt;

/// An ErrorResponse or NoticeResponse body, borrowed from the read buffer.
///
/// Construction validates the framing, so the accessors never fail.
#[derive(Clone, Copy)]
pub struct ErrorFields<'a> {
    body: &'a [u8],
}

impl<'a> ErrorFields<'a> {
    /// Validates `body` (a sequence of `type byte, C string`, ended by a zero byte).
    pub(crate) fn new(body: &'a [u8]) -> Option<ErrorFields<'a>> {
        let mut rest = body;
        loop {
            match rest.split_first() {
                Some((0, _)) => return Some(ErrorFields { body }),
                Some((_, tail)) => {
                    let nul = tail.iter().position(|&b| b == 0)?;
                    rest = &tail[nul + 1..];
                }
                // Tolerate a missing final terminator.
                None => return Some(ErrorFields { body }),
            }
        }
    }

    /// Iterates over `(field type, value)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &'a [u8])> + 'a {
        let mut rest = self.body;
        std::iter::from_fn(move || {
            let (&ty, tail) = rest.split_first()?;
            if ty == 0 {
                return None;
            }
            let nul = tail.iter().position(|&b| b == 0)?;
            rest = &tail[nul + 1..];
            Some((ty, &tail[..nul]))
        })
    }

    /// The raw value of one field.
    pub fn field(&self, ty: u8) -> Option<&'a [u8]> {
        self.iter().find(|&(t, _)| t == ty).map(|(_, v)| v)
    }

    fn text(&self, ty: u8) -> &'a str {
        self.field(ty)
            .and_then(|v| std::str::from_utf8(v).ok())
            .unwrap_or("")
    }

    /// SQLSTATE, e.g. `40001`.
    pub fn code(&self) -> &'a str {
        self.text(b'C')
    }

    /// Severity, localized (`ERROR`, `FATAL`, `NOTICE`, ...).
    pub fn severity(&self) -> &'a str {
        self.text(b'S')
    }

    /// The primary message.
    pub fn message(&self) -> &'a str {
        self.text(b'M')
    }

    /// An owned copy of all fields.
    pub fn to_db_error(&self) -> DbError {
        let mut e = DbError::default();
        for (ty, v) in self.iter() {
            let v = String::from_utf8_lossy(v).into_owned();
            match ty {
                b'S' => e.severity = v,
                b'V' => e.severity_nonlocalized = Some(v),
                b'C' => e.code = v,
                b'M' => e.message = v,
                b'D' => e.detail = Some(v),
                b'H' => e.hint = Some(v),
                b'P' => e.position = v.parse().ok(),
                b'p' => e.internal_position = v.parse().ok(),
                b'q' => e.internal_query = Some(v),
                b'W' => e.where_ = Some(v),
                b's' => e.schema = Some(v),
                b't' => e.table = Some(v),
                b'c' => e.column = Some(v),
                b'd' => e.datatype = Some(v),
                b'n' => e.constraint = Some(v),
                b'F' => e.file = Some(v),
                b'L' => e.line = v.parse().ok(),
                b'R' => e.routine = Some(v),
                _ => {}
            }
        }
        if e.severity.is_empty() {
            e.severity = e
                .severity_nonlocalized
                .clone()
                .unwrap_or_else(|| "ERROR".into());
        }
        e
    }
}

impl fmt::Debug for ErrorFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorFields")
            .field("severity", &self.severity())
            .field("code", &self.code())
            .field("message", &self.message())
            .finish()
    }
}

/// libpq's text, as for [`DbError`] (allocates; for reporting only).
impl fmt::Display for ErrorFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_db_error(), f)
    }
}

/// A server error or notice with all the fields the server sent.
///
/// `Display` prints libpq's default-verbosity text without a trailing newline:
/// `ERROR:  message`, then `DETAIL:  `, `HINT:  `, `QUERY:  ` and (for errors) `CONTEXT:  ` lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbError {
    /// Localized severity (`ERROR`, `FATAL`, `PANIC`, `WARNING`, `NOTICE`, ...).
    pub severity: String,
    /// Severity in English, if the server sent it (9.6+).
    pub severity_nonlocalized: Option<String>,
    /// SQLSTATE code.
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query string.
    pub position: Option<u32>,
    pub internal_position: Option<u32>,
    pub internal_query: Option<String>,
    /// The `CONTEXT` (call stack) text.
    pub where_: Option<String>,
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub datatype: Option<String>,
    pub constraint: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub routine: Option<String>,
    /// Client side: the statement text the error refers to, if known. With `position` it adds
    /// libpq's `LINE n:` context to the display; without it, libpq's ` at character N`.
    pub query: Option<String>,
}

impl DbError {
    /// Attaches the statement text, so `Display` can point at `position`.
    pub fn with_query(mut self, query: impl Into<String>) -> DbError {
        self.query = Some(query.into());
        self
    }

    fn is_error(&self) -> bool {
        let sev = self
            .severity_nonlocalized
            .as_deref()
            .unwrap_or(&self.severity);
        matches!(sev, "ERROR" | "FATAL" | "PANIC")
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:  {}", self.severity, self.message)?;
        let context = match (self.position, &self.query) {
            (Some(pos), Some(q)) => Some((q.as_str(), pos)),
            (Some(pos), None) => {
                write!(f, " at character {pos}")?;
                None
            }
            (None, _) => self.internal_query.as_deref().zip(self.internal_position),
        };
        if let Some((q, pos)) = context {
            let mut s = String::new();
            super::error_position::write_error_position(&mut s, q, pos);
            f.write_str(&s)?;
        }
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL:  {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT:  {h}")?;
        }
        if let Some(q) = &self.internal_query {
            write!(f, "\nQUERY:  {q}")?;
        }
        if let Some(w) = &self.where_ {
            if self.is_error() {
                write!(f, "\nCONTEXT:  {w}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (t, s) in fields {
            v.push(*t);
            v.extend_from_slice(s.as_bytes());
            v.push(0);
        }
        v.push(0);
        v
    }

    #[test]
    fn owned_error_keeps_all_fields() {
        let b = body(&[
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "23505"),
            (
                b'M',
                "duplicate key value violates unique constraint \"t_pkey\"",
            ),
            (b'D', "Key (id)=(1) already exists."),
            (b's', "public"),
            (b't', "t"),
            (b'n', "t_pkey"),
            (b'P', "15"),
            (b'L', "664"),
            (b'?', "unknown fields are ignored"),
        ]);
        let f = ErrorFields::new(&b).unwrap();
        assert_eq!(f.code(), "23505");
        let e = f.to_db_error();
        assert_eq!(e.severity, "ERROR");
        assert_eq!(e.code, "23505");
        assert_eq!(e.detail.as_deref(), Some("Key (id)=(1) already exists."));
        assert_eq!(e.table.as_deref(), Some("t"));
        assert_eq!(e.constraint.as_deref(), Some("t_pkey"));
        assert_eq!(e.position, Some(15));
        assert_eq!(e.line, Some(664));
    }

    #[test]
    fn display_matches_libpq_default_verbosity() {
        let e = DbError {
            severity: "ERROR".into(),
            code: "42P01".into(),
            message: "relation \"nope\" does not exist".into(),
            detail: Some("some detail".into()),
            hint: Some("some hint".into()),
            where_: Some("PL/pgSQL function f() line 3".into()),
            ..Default::default()
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  relation \"nope\" does not exist\nDETAIL:  some detail\nHINT:  some hint\n\
             CONTEXT:  PL/pgSQL function f() line 3"
        );
    }

    #[test]
    fn position_is_shown_with_query_context_or_as_character_offset() {
        let e = DbError {
            severity: "ERROR".into(),
            message: "syntax error at or near \"SELEC\"".into(),
            position: Some(1),
            ..Default::default()
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \"SELEC\" at character 1"
        );
        let e = e.with_query("SELEC 1");
        assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \"SELEC\"\nLINE 1: SELEC 1\n        ^"
        );
    }

    #[test]
    fn notice_display_omits_context() {
        let e = DbError {
            severity: "NOTICE".into(),
            message: "table \"x\" does not exist, skipping".into(),
            where_: Some("somewhere".into()),
            ..Default::default()
        };
        assert_eq!(
            e.to_string(),
            "NOTICE:  table \"x\" does not exist, skipping"
        );
    }

    #[test]
    fn unterminated_field_is_rejected_not_panicking() {
        assert!(ErrorFields::new(b"Mabc").is_none());
        assert!(ErrorFields::new(b"").is_some());
        let f = ErrorFields::new(b"").unwrap();
        assert_eq!(f.message(), "");
        assert_eq!(f.to_db_error().severity, "ERROR");
    }
}
