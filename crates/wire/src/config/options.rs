//! libpq's connection keywords, the environment variable behind each, and the raw
//! (still textual) option set that conninfo strings, URIs, arguments and the environment fill in.

use crate::error::Error;

/// `(keyword, environment variable)` for every keyword libpq 15–17 accepts.
/// Keywords pgrig cannot honour are still recognised so that valid libpq strings parse; the
/// resolver rejects the ones whose silent omission would change behaviour.
pub const KEYWORDS: &[(&str, Option<&str>)] = &[
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("dbname", Some("PGDATABASE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("client_encoding", Some("PGCLIENTENCODING")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("sslmode", Some("PGSSLMODE")),
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslpassword", None),
    ("sslcertmode", Some("PGSSLCERTMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcrl", Some("PGSSLCRL")),
    ("sslcrldir", Some("PGSSLCRLDIR")),
    ("sslsni", Some("PGSSLSNI")),
    ("requirepeer", Some("PGREQUIREPEER")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("gssdelegation", Some("PGGSSDELEGATION")),
    ("replication", None),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("service", Some("PGSERVICE")),
];

/// Option values by keyword, in [`KEYWORDS`] order; `None` means "not set".
#[derive(Clone, Default)]
pub struct RawOptions {
    values: Vec<Option<String>>,
}

fn index(key: &str) -> Option<usize> {
    KEYWORDS.iter().position(|(k, _)| *k == key)
}

impl RawOptions {
    pub fn new() -> RawOptions {
        RawOptions {
            values: vec![None; KEYWORDS.len()],
        }
    }

    /// Sets `key`, rejecting keywords libpq would not know.
    pub fn set(&mut self, key: &str, value: impl Into<String>) -> Result<(), Error> {
        let i = index(key)
            .ok_or_else(|| Error::config(format!("invalid connection option \"{key}\"")))?;
        self.values[i] = Some(value.into());
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        index(key).and_then(|i| self.values[i].as_deref())
    }

    /// A value that is set and not empty.
    pub fn non_empty(&self, key: &str) -> Option<&str> {
        self.get(key).filter(|v| !v.is_empty())
    }

    /// Fills every unset keyword from its environment variable, if that is set.
    pub fn fill_from_env(&mut self, var: impl Fn(&str) -> Option<String>) {
        for (i, (_, env)) in KEYWORDS.iter().enumerate() {
            if self.values[i].is_none() {
                if let Some(v) = env.and_then(&var) {
                    self.values[i] = Some(v);
                }
            }
        }
    }
}

impl std::fmt::Debug for RawOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for (i, (k, _)) in KEYWORDS.iter().enumerate() {
            if let Some(v) = &self.values[i] {
                let shown = if *k == "password" || *k == "sslpassword" {
                    super::MASK
                } else {
                    v
                };
                m.entry(k, &shown);
            }
        }
        m.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keyword_is_rejected_with_libpq_text() {
        let mut o = RawOptions::new();
        let e = o.set("hots", "x").unwrap_err();
        assert_eq!(e.to_string(), "invalid connection option \"hots\"");
    }

    #[test]
    fn env_fills_only_unset_keywords() {
        let mut o = RawOptions::new();
        o.set("host", "a").unwrap();
        o.fill_from_env(|v| match v {
            "PGHOST" => Some("b".into()),
            "PGPORT" => Some("6000".into()),
            _ => None,
        });
        assert_eq!(o.get("host"), Some("a"));
        assert_eq!(o.get("port"), Some("6000"));
        assert_eq!(o.get("user"), None);
    }

    #[test]
    fn debug_hides_password() {
        let mut o = RawOptions::new();
        o.set("password", "hunter2").unwrap();
        assert!(!format!("{o:?}").contains("hunter2"));
    }
}
