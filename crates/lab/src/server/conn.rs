//! Connection strings for a server: libpq keyword/value strings, URIs and `PG*` environments.

/// `host=... port=... user=... dbname=...` (+ `password=...`), values quoted when needed.
pub(crate) fn conninfo(
    host: &str,
    port: u16,
    user: &str,
    db: &str,
    password: Option<&str>,
) -> String {
    let mut s = format!(
        "host={} port={port} user={} dbname={}",
        kv_quote(host),
        kv_quote(user),
        kv_quote(db)
    );
    if let Some(pw) = password {
        s.push_str(&format!(" password={}", kv_quote(pw)));
    }
    s
}

/// `postgresql://user[:password]@host:port/db`; a socket-directory host is percent-encoded.
pub(crate) fn url(host: &str, port: u16, user: &str, db: &str, password: Option<&str>) -> String {
    let auth = match password {
        Some(pw) => format!("{}:{}", pct(user), pct(pw)),
        None => pct(user),
    };
    format!("postgresql://{auth}@{}:{port}/{}", pct(host), pct(db))
}

/// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE` and, if set, `PGPASSWORD`.
pub(crate) fn env(
    host: &str,
    port: u16,
    user: &str,
    db: &str,
    password: Option<&str>,
) -> Vec<(String, String)> {
    let mut v = vec![
        ("PGHOST".to_string(), host.to_string()),
        ("PGPORT".to_string(), port.to_string()),
        ("PGUSER".to_string(), user.to_string()),
        ("PGDATABASE".to_string(), db.to_string()),
    ];
    if let Some(pw) = password {
        v.push(("PGPASSWORD".to_string(), pw.to_string()));
    }
    v
}

fn kv_quote(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\')
    {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_quotes_values_with_spaces_and_quotes() {
        assert_eq!(
            conninfo("/tmp/s", 5432, "postgres", "my db", Some("it's")),
            r"host=/tmp/s port=5432 user=postgres dbname='my db' password='it\'s'"
        );
    }

    #[test]
    fn url_percent_encodes_socket_directory_host() {
        assert_eq!(
            url("/tmp/pgrig-x/sock", 5433, "postgres", "db1", None),
            "postgresql://postgres@%2Ftmp%2Fpgrig-x%2Fsock:5433/db1"
        );
        assert_eq!(
            url("127.0.0.1", 1, "u", "d", Some("p@ss")),
            "postgresql://u:p%40ss@127.0.0.1:1/d"
        );
    }

    #[test]
    fn env_includes_password_only_when_set() {
        assert_eq!(env("h", 1, "u", "d", None).len(), 4);
        assert!(env("h", 1, "u", "d", Some("x")).contains(&("PGPASSWORD".into(), "x".into())));
    }
}
