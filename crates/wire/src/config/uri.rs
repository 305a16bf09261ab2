//! `postgresql://` / `postgres://` URIs as libpq reads them:
//! `postgresql://[user[:password]@][host[:port][,host[:port]...]][/dbname][?keyword=value&...]`,
//! percent-decoding everywhere, `[v6addr]` hosts, and `ssl=true` meaning `sslmode=require`.
//! Error texts are libpq's, except that a password (`user:password@`, `password=` in the query)
//! is shown as `****`: libpq echoes it, pgrig never does.

use crate::error::Error;

const PREFIXES: [&str; 2] = ["postgresql://", "postgres://"];

pub fn has_uri_prefix(s: &str) -> bool {
    PREFIXES.iter().any(|p| s.starts_with(p))
}

/// Parses a URI into `(keyword, value)` pairs (keywords from the query part are not validated
/// here, except for libpq's `ssl=true` alias).
pub fn parse(uri: &str) -> Result<Vec<(String, String)>, Error> {
    let shown = super::mask_passwords(uri);
    let rest = PREFIXES
        .iter()
        .find_map(|p| uri.strip_prefix(p))
        .ok_or_else(|| Error::config(format!("invalid URI: \"{shown}\"")))?;
    let mut out = Vec::new();

    // Authority ends at the first '/' or '?'.
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, mut rest) = rest.split_at(auth_end);

    let hostspec = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                out.push(("user".into(), decode(user, user)?));
            }
            if let Some(p) = password {
                out.push(("password".into(), decode(p, super::MASK)?));
            }
            &authority[at + 1..]
        }
        None => authority,
    };

    if !hostspec.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for spec in split_hosts(hostspec, &shown)? {
            let (host, port) = split_host_port(spec, &shown)?;
            hosts.push(decode(host, host)?);
            ports.push(decode(port, port)?);
        }
        if hosts.iter().any(|h| !h.is_empty()) || hosts.len() > 1 {
            out.push(("host".into(), hosts.join(",")));
        }
        if ports.iter().any(|p| !p.is_empty()) {
            out.push(("port".into(), ports.join(",")));
        }
    }

    if let Some(r) = rest.strip_prefix('/') {
        let end = r.find('?').unwrap_or(r.len());
        if end > 0 {
            out.push(("dbname".into(), decode(&r[..end], &r[..end])?));
        }
        rest = &r[end..];
    }

    if let Some(query) = rest.strip_prefix('?') {
        query_params(query, &mut out)?;
    }
    Ok(out)
}

/// The query part's `key=value` parameters (libpq's keywords, and `ssl=true` for
/// `sslmode=require`); a secret's value never appears in an error.
fn query_params(query: &str, out: &mut Vec<(String, String)>) -> Result<(), Error> {
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = param.split_once('=').ok_or_else(|| {
            Error::config(format!(
                "missing key/value separator \"=\" in URI query parameter: \"{param}\""
            ))
        })?;
        let secret = is_secret(k);
        if v.contains('=') {
            let param = if secret {
                format!("{k}={}", super::MASK)
            } else {
                param.to_string()
            };
            return Err(Error::config(format!(
                "extra key/value separator \"=\" in URI query parameter: \"{param}\""
            )));
        }
        let (k, v) = (
            decode(k, k)?,
            decode(v, if secret { super::MASK } else { v })?,
        );
        if k == "ssl" && v == "true" {
            out.push(("sslmode".into(), "require".into()));
        } else if super::options::KEYWORDS.iter().any(|(kw, _)| *kw == k) {
            out.push((k, v));
        } else {
            return Err(Error::config(format!(
                "invalid URI query parameter: \"{k}\""
            )));
        }
    }
    Ok(())
}

/// Splits a host list at commas that are not inside `[...]`.
fn split_hosts<'a>(s: &'a str, uri: &str) -> Result<Vec<&'a str>, Error> {
    let mut parts = Vec::new();
    let mut depth = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth = true,
            ']' => depth = false,
            ',' if !depth => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth {
        return Err(Error::config(format!(
            "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{uri}\""
        )));
    }
    parts.push(&s[start..]);
    Ok(parts)
}

fn split_host_port<'a>(spec: &'a str, uri: &str) -> Result<(&'a str, &'a str), Error> {
    if let Some(v6) = spec.strip_prefix('[') {
        let close = v6.find(']').ok_or_else(|| {
            Error::config(format!(
                "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{uri}\""
            ))
        })?;
        let host = &v6[..close];
        if host.is_empty() {
            return Err(Error::config(format!(
                "IPv6 host address may not be empty in URI: \"{uri}\""
            )));
        }
        let after = &v6[close + 1..];
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, port)),
            None if after.is_empty() => Ok((host, "")),
            None => Err(Error::config(format!(
                "unexpected character \"{}\" at position {} in URI (expected \":\" or \"/\"): \"{uri}\"",
                &after[..1],
                uri.find(after).map_or(0, |p| p + 1)
            ))),
        };
    }
    Ok(spec.split_once(':').unwrap_or((spec, "")))
}

fn is_secret(keyword: &str) -> bool {
    keyword == "password" || keyword == "sslpassword"
}

/// Percent-decodes `s`; `%00` and malformed escapes are errors, as in libpq, showing `shown`
/// (the value itself, or `****` for a password).
fn decode(s: &str, shown: &str) -> Result<String, Error> {
    if !s.contains('%') {
        return Ok(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| {
                let h = std::str::from_utf8(h).ok()?;
                u8::from_str_radix(h, 16).ok()
            });
            match hex {
                Some(0) => {
                    return Err(Error::config(format!(
                        "forbidden value %00 in percent-encoded value: \"{shown}\""
                    )))
                }
                Some(b) => out.push(b),
                None => {
                    return Err(Error::config(format!(
                        "invalid percent-encoded token: \"{shown}\""
                    )))
                }
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        Error::config(format!(
            "percent-encoded value is not valid UTF-8: \"{shown}\""
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(uri: &str) -> Vec<(String, String)> {
        parse(uri).unwrap()
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.into(), v.into())
    }

    #[test]
    fn full_uri_with_credentials_port_db_and_params() {
        assert_eq!(
            kv("postgresql://bob:pa%40ss@db.example:6432/my%20db?sslmode=require&connect_timeout=5"),
            vec![
                p("user", "bob"),
                p("password", "pa@ss"),
                p("host", "db.example"),
                p("port", "6432"),
                p("dbname", "my db"),
                p("sslmode", "require"),
                p("connect_timeout", "5"),
            ]
        );
    }

    #[test]
    fn empty_uri_sets_nothing() {
        assert!(kv("postgresql://").is_empty());
        assert_eq!(kv("postgres:///bench"), vec![p("dbname", "bench")]);
    }

    #[test]
    fn socket_directory_can_be_percent_encoded_or_a_param() {
        assert_eq!(
            kv("postgresql://%2Ftmp%2Fpg/db"),
            vec![p("host", "/tmp/pg"), p("dbname", "db")]
        );
        assert_eq!(
            kv("postgresql:///db?host=/tmp/pg"),
            vec![p("dbname", "db"), p("host", "/tmp/pg")]
        );
    }

    #[test]
    fn multiple_hosts_and_ipv6() {
        assert_eq!(
            kv("postgresql://h1:5433,[::1],h3:7/x"),
            vec![
                p("host", "h1,::1,h3"),
                p("port", "5433,,7"),
                p("dbname", "x")
            ]
        );
    }

    #[test]
    fn ssl_true_means_require() {
        assert_eq!(
            kv("postgresql://h?ssl=true"),
            vec![p("host", "h"), p("sslmode", "require")]
        );
    }

    #[test]
    fn errors_never_show_a_password() {
        let e = |u: &str| parse(u).unwrap_err().to_string();
        for uri in [
            "postgresql://u:hunter2@[::1/db",
            "postgresql://u:hunter2@[]/db",
            "postgresql://u:hunter2@[::1]x/db",
            "postgresql://u:hun%zzter2@h/db",
            "postgresql://u:hunter2%00@h/db",
            "postgresql://u@h/db?password=hunter2=x",
            "postgresql://u@h/db?password=%zzhunter2",
            "postgresql://u:hunter2@h/db?sslpassword=hunter2&bogus=1",
        ] {
            let err = e(uri);
            assert!(!err.contains("hunter2"), "{uri}: {err}");
        }
        assert_eq!(
            e("postgresql://u:hunter2@[::1/db"),
            "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://u:****@[::1/db\""
        );
    }

    #[test]
    fn bad_uris_are_rejected_with_libpq_text() {
        let e = |u: &str| parse(u).unwrap_err().to_string();
        assert_eq!(
            e("postgresql://h?bogus=1"),
            "invalid URI query parameter: \"bogus\""
        );
        assert_eq!(
            e("postgresql://h/%zz"),
            "invalid percent-encoded token: \"%zz\""
        );
        assert_eq!(
            e("postgresql://h/a%00"),
            "forbidden value %00 in percent-encoded value: \"a%00\""
        );
        assert!(e("postgresql://[::1/x").contains("matching \"]\""));
        assert!(e("postgresql://h?sslmode").contains("missing key/value separator"));
    }
}
