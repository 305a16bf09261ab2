//! Connection strings for a server: libpq keyword/value strings, URIs and `PG*` environments.
//! A password pgrig generated never goes into them: they name its password file instead.

use std::path::Path;

/// Where and as whom to connect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub host: &'a str,
    pub port: u16,
    pub user: &'a str,
    /// A password the caller chose (put into strings as given).
    pub password: Option<&'a str>,
    /// The password file holding a generated password.
    pub passfile: Option<&'a Path>,
}

/// `host=... port=... user=... dbname=...` (+ `password=...`, `passfile=...`), values quoted
/// when needed.
pub(crate) fn conninfo(t: Target, db: &str) -> String {
    let mut s = format!(
        "host={} port={} user={} dbname={}",
        kv_quote(t.host),
        t.port,
        kv_quote(t.user),
        kv_quote(db)
    );
    if let Some(pw) = t.password {
        s.push_str(&format!(" password={}", kv_quote(pw)));
    }
    if let Some(file) = t.passfile {
        s.push_str(&format!(
            " passfile={}",
            kv_quote(&file.display().to_string())
        ));
    }
    s
}

/// `postgresql://user[:password]@host:port/db[?passfile=...]`; a socket-directory host is
/// percent-encoded.
pub(crate) fn url(t: Target, db: &str) -> String {
    let auth = match t.password {
        Some(pw) => format!("{}:{}", pct(t.user), pct(pw)),
        None => pct(t.user),
    };
    let mut s = format!("postgresql://{auth}@{}:{}/{}", pct(t.host), t.port, pct(db));
    if let Some(file) = t.passfile {
        s.push_str(&format!("?passfile={}", pct(&file.display().to_string())));
    }
    s
}

/// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE` and, if set, `PGPASSWORD` and `PGPASSFILE`.
pub(crate) fn env(t: Target, db: &str) -> Vec<(String, String)> {
    let mut v = vec![
        ("PGHOST".to_string(), t.host.to_string()),
        ("PGPORT".to_string(), t.port.to_string()),
        ("PGUSER".to_string(), t.user.to_string()),
        ("PGDATABASE".to_string(), db.to_string()),
    ];
    if let Some(pw) = t.password {
        v.push(("PGPASSWORD".to_string(), pw.to_string()));
    }
    if let Some(file) = t.passfile {
        v.push(("PGPASSFILE".to_string(), file.display().to_string()));
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

    fn t<'a>(host: &'a str, port: u16, user: &'a str, password: Option<&'a str>) -> Target<'a> {
        Target {
            host,
            port,
            user,
            password,
            passfile: None,
        }
    }

    #[test]
    fn conninfo_quotes_values_with_spaces_and_quotes() {
        assert_eq!(
            conninfo(t("/tmp/s", 5432, "postgres", Some("it's")), "my db"),
            r"host=/tmp/s port=5432 user=postgres dbname='my db' password='it\'s'"
        );
    }

    #[test]
    fn url_percent_encodes_socket_directory_host() {
        assert_eq!(
            url(t("/tmp/pgrig-x/sock", 5433, "postgres", None), "db1"),
            "postgresql://postgres@%2Ftmp%2Fpgrig-x%2Fsock:5433/db1"
        );
        assert_eq!(
            url(t("127.0.0.1", 1, "u", Some("p@ss")), "d"),
            "postgresql://u:p%40ss@127.0.0.1:1/d"
        );
    }

    #[test]
    fn env_includes_password_only_when_set() {
        assert_eq!(env(t("h", 1, "u", None), "d").len(), 4);
        assert!(env(t("h", 1, "u", Some("x")), "d").contains(&("PGPASSWORD".into(), "x".into())));
    }

    #[test]
    fn a_password_file_is_named_not_its_password() {
        let with_file = Target {
            passfile: Some(Path::new("/r/pgpass")),
            ..t("127.0.0.1", 7, "postgres", None)
        };
        assert_eq!(
            conninfo(with_file, "d"),
            "host=127.0.0.1 port=7 user=postgres dbname=d passfile=/r/pgpass"
        );
        assert_eq!(
            url(with_file, "d"),
            "postgresql://postgres@127.0.0.1:7/d?passfile=%2Fr%2Fpgpass"
        );
        assert!(env(with_file, "d").contains(&("PGPASSFILE".into(), "/r/pgpass".into())));
    }
}
