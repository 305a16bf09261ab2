//! Turns raw textual options (already merged with the environment) into a [`Config`]:
//! host/hostaddr/port lists, defaults, value validation with libpq's error texts.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{Config, Environment, Host, Password, RawOptions, SslMode, Target};
use super::{DEFAULT_PORT, DEFAULT_SOCKET_DIR};
use crate::error::Error;

fn split(v: Option<&str>) -> Vec<&str> {
    match v {
        Some(s) if !s.is_empty() => s.split(',').map(str::trim).collect(),
        _ => Vec::new(),
    }
}

fn int_option(o: &RawOptions, key: &str) -> Result<Option<i64>, Error> {
    match o.non_empty(key) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
            Error::config(format!(
                "invalid integer value \"{v}\" for connection option \"{key}\""
            ))
        }),
    }
}

fn targets(o: &RawOptions) -> Result<Vec<Target>, Error> {
    let hosts = split(o.get("host"));
    let addrs = split(o.get("hostaddr"));
    let ports = split(o.get("port"));
    if !hosts.is_empty() && !addrs.is_empty() && hosts.len() != addrs.len() {
        return Err(Error::config(format!(
            "could not match {} host names to {} hostaddr values",
            hosts.len(),
            addrs.len()
        )));
    }
    let n = hosts.len().max(addrs.len()).max(1);
    if ports.len() > 1 && ports.len() != n {
        return Err(Error::config(format!(
            "could not match {} port numbers to {} hosts",
            ports.len(),
            n
        )));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let host = hosts.get(i).copied().unwrap_or("");
        let addr = addrs.get(i).copied().unwrap_or("");
        let hostaddr = if addr.is_empty() {
            None
        } else {
            Some(addr.parse::<IpAddr>().map_err(|_| {
                Error::config(format!("could not parse network address \"{addr}\""))
            })?)
        };
        let port_s = if ports.len() == 1 {
            ports[0]
        } else {
            ports.get(i).copied().unwrap_or("")
        };
        let port = if port_s.is_empty() {
            DEFAULT_PORT
        } else {
            match port_s.parse::<u32>() {
                Ok(p) if (1..=65535).contains(&p) => p as u16,
                _ => return Err(Error::config(format!("invalid port number: \"{port_s}\""))),
            }
        };
        let host = if host.starts_with('/') {
            Host::Unix(PathBuf::from(host))
        } else if host.is_empty() && hostaddr.is_none() {
            Host::Unix(PathBuf::from(DEFAULT_SOCKET_DIR))
        } else {
            Host::Tcp(host.to_string())
        };
        out.push(Target {
            host,
            hostaddr,
            port,
        });
    }
    Ok(out)
}

/// Rejects options whose silent omission would change security or semantics.
fn check_unsupported(o: &RawOptions) -> Result<(), Error> {
    if let Some(s) = o.non_empty("service") {
        return Err(Error::config(format!(
            "definition of service \"{s}\" not found (service files are not supported)"
        )));
    }
    if o.non_empty("channel_binding") == Some("require") {
        return Err(Error::config(
            "channel binding is required, but client does not support it",
        ));
    }
    if let Some(v) = o.non_empty("require_auth") {
        return Err(Error::config(format!(
            "require_auth=\"{v}\" is not supported by pgrig"
        )));
    }
    match o.non_empty("target_session_attrs") {
        None | Some("any") => {}
        Some(v) => {
            return Err(Error::config(format!(
                "target_session_attrs=\"{v}\" is not supported by pgrig (only \"any\")"
            )))
        }
    }
    match o.non_empty("gssencmode") {
        None | Some("disable") | Some("prefer") => {}
        Some(v) => {
            return Err(Error::config(format!(
                "gssencmode=\"{v}\" is not supported by pgrig"
            )))
        }
    }
    Ok(())
}

pub(super) fn resolve(o: &RawOptions, env: &dyn Environment) -> Result<Config, Error> {
    check_unsupported(o)?;
    let targets = targets(o)?;
    let user = match o.non_empty("user") {
        Some(u) => u.to_string(),
        None => env.user_name().ok_or_else(|| {
            Error::config(format!(
                "could not look up local user ID {}: no password database entry",
                nix::unistd::geteuid()
            ))
        })?,
    };
    let dbname = o.non_empty("dbname").unwrap_or(&user).to_string();
    let sslmode = SslMode::parse(o.non_empty("sslmode").unwrap_or("prefer"))?;
    let connect_timeout = match int_option(o, "connect_timeout")? {
        Some(t) if t > 0 => Some(Duration::from_secs(t.max(2) as u64)),
        _ => None,
    };
    let home = env.home_dir();
    let home_file = |key: &str, default: &str| -> Option<PathBuf> {
        match o.non_empty(key) {
            Some(p) => Some(PathBuf::from(p)),
            None => home.as_ref().map(|h| h.join(default)),
        }
    };
    Ok(Config {
        targets,
        user,
        dbname,
        password: o.non_empty("password").map(Password::new),
        passfile: home_file("passfile", ".pgpass"),
        options: o.non_empty("options").map(str::to_string),
        application_name: o.non_empty("application_name").map(str::to_string),
        fallback_application_name: o.non_empty("fallback_application_name").map(str::to_string),
        client_encoding: o.non_empty("client_encoding").map(str::to_string),
        sslmode,
        sslrootcert: home_file("sslrootcert", ".postgresql/root.crt"),
        sslcert: home_file("sslcert", ".postgresql/postgresql.crt"),
        sslkey: home_file("sslkey", ".postgresql/postgresql.key"),
        sslsni: o.non_empty("sslsni") != Some("0"),
        connect_timeout,
    })
}
