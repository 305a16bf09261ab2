//! Connection strings of a target: the admin connection, the benchmark sessions with the point's
//! `default_transaction_isolation` as a startup option (so it covers every statement of every
//! session, reconnects included), and the masked form that is recorded (`pgrig_wire::mask_passwords`).

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

    /// The connection string with its password masked (for the store and messages).
    pub fn redacted(&self) -> String {
        pgrig_wire::mask_passwords(&self.conninfo)
    }
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
    fn recorded_form_masks_the_password() {
        let e = Endpoint {
            conninfo: "postgresql://bob:secret@h:5432/db?password=x&sslmode=require".into(),
        };
        assert_eq!(
            e.redacted(),
            "postgresql://bob:****@h:5432/db?password=****&sslmode=require"
        );
    }
}
