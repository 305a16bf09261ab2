//! Connection strings of a target: the admin connection, the benchmark sessions with the point's
//! `default_transaction_isolation` as a startup option (so it covers every statement of every
//! session, reconnects included), and the password-free form that is recorded.

use pgrig_engine::config::ConnArgs;

use crate::error::StudyError;

/// A server to connect to: a `postgresql://` URI or a libpq keyword/value string.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub conninfo: String,
}

fn is_uri(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://")
}

/// The startup `options` value that sets default_transaction_isolation (spaces escaped with a
/// backslash, as the server's option splitting wants).
pub fn isolation_option(level: &str) -> String {
    format!(
        "-c default_transaction_isolation={}",
        level.to_ascii_lowercase().replace(' ', "\\ ")
    )
}

fn pct_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Endpoint {
    /// The connection string with `options` added (refused when the string already has its own).
    pub fn with_options(&self, options: &str) -> Result<String, StudyError> {
        let c = &self.conninfo;
        let has = if is_uri(c) {
            c.split_once('?')
                .is_some_and(|(_, q)| q.split('&').any(|kv| kv.starts_with("options=")))
        } else {
            c.split_whitespace().any(|kv| kv.starts_with("options"))
        };
        if has {
            return Err(StudyError::Refused(format!(
                "target {} sets its own \"options\"; pgrig needs them to set default_transaction_isolation (drop them from the target, or drop isolation from the study)",
                self.redacted()
            )));
        }
        Ok(if is_uri(c) {
            let sep = if c.contains('?') { '&' } else { '?' };
            format!("{c}{sep}options={}", pct_encode(options))
        } else {
            let q = options.replace('\\', "\\\\").replace('\'', "\\'");
            format!("{c} options='{q}'")
        })
    }

    /// Engine connection arguments, with the isolation level when given.
    pub fn conn_args(&self, isolation: Option<&str>) -> Result<ConnArgs, StudyError> {
        let dbname = match isolation {
            Some(level) => self.with_options(&isolation_option(level))?,
            None => self.conninfo.clone(),
        };
        Ok(ConnArgs {
            dbname: Some(dbname),
            ..Default::default()
        })
    }

    /// The connection string without any password (for the store and messages).
    pub fn redacted(&self) -> String {
        redact(&self.conninfo)
    }
}

/// Removes passwords from a URI (`user:pw@`, `password=` parameter) or keyword/value string.
pub fn redact(c: &str) -> String {
    if is_uri(c) {
        let (scheme, rest) = c.split_once("://").unwrap_or(("postgresql", c));
        let (main, query) = match rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (rest, None),
        };
        let main = match main.split_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split(':').next().unwrap_or("");
                format!("{user}@{host}")
            }
            None => main.to_string(),
        };
        let mut out = format!("{scheme}://{main}");
        if let Some(q) = query {
            let kept: Vec<&str> = q
                .split('&')
                .filter(|kv| !kv.starts_with("password=") && !kv.starts_with("sslpassword="))
                .collect();
            if !kept.is_empty() {
                out.push('?');
                out.push_str(&kept.join("&"));
            }
        }
        out
    } else {
        redact_keywords(c)
    }
}

/// `text` (a whole study file) with the password of every `scheme://user:password@` written
/// anywhere in it, comments included, replaced by `****`.
pub fn mask_url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || "/?#\"'<>".contains(c))
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@').and_then(|a| {
            let colon = authority[..a].find(':')?;
            Some((colon, a))
        }) {
            Some((colon, a)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("****");
                out.push_str(&authority[a..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Keyword/value string without `password`/`sslpassword` pairs (quoted values handled).
fn redact_keywords(c: &str) -> String {
    let mut out = Vec::new();
    let mut chars = c.chars().peekable();
    loop {
        while chars.peek().is_some_and(|ch| ch.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut pair = String::new();
        let mut in_quote = false;
        let mut seen_eq = false;
        while let Some(&ch) = chars.peek() {
            if !in_quote && ch.is_whitespace() && seen_eq && !pair.ends_with('=') {
                break;
            }
            chars.next();
            pair.push(ch);
            match ch {
                '=' => seen_eq = true,
                '\\' if in_quote => {
                    if let Some(n) = chars.next() {
                        pair.push(n);
                    }
                }
                '\'' => in_quote = !in_quote,
                _ => {}
            }
        }
        let key = pair.split('=').next().unwrap_or("").trim();
        if key != "password" && key != "sslpassword" {
            out.push(pair);
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_goes_into_startup_options() {
        let e = Endpoint {
            conninfo: "host=/tmp port=5 dbname=postgres".into(),
        };
        let c = e.conn_args(Some("Repeatable Read")).unwrap();
        assert_eq!(
            c.dbname.as_deref(),
            Some(
                r"host=/tmp port=5 dbname=postgres options='-c default_transaction_isolation=repeatable\\ read'"
            )
        );
        let cfg = pgrig_wire::Config::parse(c.dbname.as_deref().unwrap()).unwrap();
        assert_eq!(
            cfg.options.as_deref(),
            Some(r"-c default_transaction_isolation=repeatable\ read")
        );
        let u = Endpoint {
            conninfo: "postgresql://h/db?sslmode=disable".into(),
        };
        let d = u.conn_args(Some("serializable")).unwrap().dbname.unwrap();
        let cfg = pgrig_wire::Config::parse(&d).unwrap();
        assert_eq!(
            cfg.options.as_deref(),
            Some("-c default_transaction_isolation=serializable")
        );
        assert_eq!(
            u.conn_args(None).unwrap().dbname.unwrap(),
            "postgresql://h/db?sslmode=disable"
        );
    }

    #[test]
    fn own_options_are_not_overwritten() {
        let u = Endpoint {
            conninfo: "postgresql://h/db?options=-cwork_mem%3D1MB".into(),
        };
        assert!(u.conn_args(Some("serializable")).is_err());
    }

    #[test]
    fn url_passwords_anywhere_in_a_study_text_are_masked() {
        let text = "# old: postgresql://bob:hunter2@db1/x\nurl = \"postgres://amy:pw@h:5/d?sslmode=require\"\n# mailto://a@b, https://example.org/a:b@c";
        let masked = mask_url_passwords(text);
        assert_eq!(
            masked,
            "# old: postgresql://bob:****@db1/x\nurl = \"postgres://amy:****@h:5/d?sslmode=require\"\n# mailto://a@b, https://example.org/a:b@c"
        );
    }

    #[test]
    fn passwords_are_stripped() {
        assert_eq!(
            redact("postgresql://bob:secret@h:5432/db?password=x&sslmode=require"),
            "postgresql://bob@h:5432/db?sslmode=require"
        );
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        assert_eq!(
            redact("host=h password='a b\\'c' user=bob"),
            "host=h user=bob"
        );
        assert_eq!(redact("host=h password = x user=bob"), "host=h user=bob");
    }
}
