//! Connection establishment: hosts and addresses in order, `sslmode` negotiation and fallbacks,
//! password lookup, the startup exchange, per-attempt timeout, and libpq's error texts
//! (`connection to server at "h" (addr), port N failed: ...`).

use std::net::SocketAddr;

use tokio_rustls::TlsConnector;

use super::stream::{Addr, Stream};
use super::{tls, Connection};
use crate::config::{pgpass_lookup, read_pgpass_file, Config, Host, SslMode, Target};
use crate::error::{strerror, Error};
use crate::proto::backend::parse;
use crate::proto::frontend;
use crate::proto::{Startup, Step};

/// Where a password came from, for libpq's "password retrieved from file" hint.
struct Secret {
    password: Option<String>,
    from_file: Option<String>,
}

fn password_for(cfg: &Config, target: &Target) -> Secret {
    if let Some(p) = &cfg.password {
        return Secret {
            password: Some(p.expose().to_string()),
            from_file: None,
        };
    }
    let found = cfg.passfile.as_deref().and_then(|path| {
        let contents = read_pgpass_file(path)?;
        let port = target.port.to_string();
        pgpass_lookup(&contents, &target.host_str(), &port, &cfg.dbname, &cfg.user)
            .map(|pw| (pw, path.display().to_string()))
    });
    match found {
        Some((pw, file)) => Secret {
            password: Some(pw),
            from_file: Some(file),
        },
        None => Secret {
            password: None,
            from_file: None,
        },
    }
}

/// libpq's description of the server in error messages.
fn describe(target: &Target, addr: &Addr) -> String {
    match addr {
        Addr::Unix(path) => format!("on socket \"{}\"", path.display()),
        Addr::Tcp(sa) => {
            let ip = sa.ip().to_string();
            match &target.host {
                Host::Tcp(h) if !h.is_empty() && *h != ip => {
                    format!("at \"{h}\" ({ip}), port {}", sa.port())
                }
                _ => format!("at \"{ip}\", port {}", sa.port()),
            }
        }
    }
}

async fn addresses(target: &Target) -> Result<Vec<Addr>, Error> {
    if let Some(path) = target.socket_path() {
        return Ok(vec![Addr::Unix(path)]);
    }
    if let Some(ip) = target.hostaddr {
        return Ok(vec![Addr::Tcp(SocketAddr::new(ip, target.port))]);
    }
    let Host::Tcp(host) = &target.host else {
        unreachable!("socket targets handled above")
    };
    match tokio::net::lookup_host((host.as_str(), target.port)).await {
        Ok(addrs) => Ok(addrs.map(Addr::Tcp).collect()),
        Err(e) => Err(Error::Connect {
            message: format!(
                "could not translate host name \"{host}\" to address: {}",
                lookup_error_text(&e)
            ),
            db: None,
        }),
    }
}

fn lookup_error_text(e: &std::io::Error) -> String {
    let s = strerror(e);
    // std reports "failed to lookup address information: Name or service not known".
    match s.split_once(": ") {
        Some((prefix, rest)) if prefix.starts_with("failed to lookup") => rest.to_string(),
        _ => s,
    }
}

/// Tries every host and address in order; returns the first session that is ready.
pub(super) async fn connect(cfg: &Config) -> Result<Connection, Error> {
    let mut message = String::new();
    let mut last_db = None;
    for target in &cfg.targets {
        let secret = password_for(cfg, target);
        let addrs = match addresses(target).await {
            Ok(a) => a,
            Err(e) => {
                push_line(&mut message, &e.to_string());
                continue;
            }
        };
        for addr in addrs {
            let attempt = with_sslmode(cfg, target, &addr, &secret);
            let result = match cfg.connect_timeout {
                Some(t) => match tokio::time::timeout(t, attempt).await {
                    Ok(r) => r,
                    Err(_) => Err(Error::Connect {
                        message: "timeout expired".into(),
                        db: None,
                    }),
                },
                None => attempt.await,
            };
            match result {
                Ok(mut conn) => {
                    conn.set_target(target.host_str(), target.port);
                    return Ok(conn);
                }
                Err(e) => {
                    let mut text = e.to_string();
                    if let (Some(file), Some("28P01")) = (&secret.from_file, e.code()) {
                        text.push_str(&format!("\npassword retrieved from file \"{file}\""));
                    }
                    push_line(
                        &mut message,
                        &format!(
                            "connection to server {} failed: {text}",
                            describe(target, &addr)
                        ),
                    );
                    last_db = match e {
                        Error::Db(db) => Some(db),
                        Error::Connect { db, .. } => db,
                        _ => None,
                    };
                }
            }
        }
    }
    Err(Error::Connect {
        message,
        db: last_db,
    })
}

fn push_line(buf: &mut String, line: &str) {
    if !buf.is_empty() {
        buf.push('\n');
    }
    buf.push_str(line);
}

/// Applies libpq's `sslmode` retry rules around single attempts.
async fn with_sslmode(
    cfg: &Config,
    target: &Target,
    addr: &Addr,
    secret: &Secret,
) -> Result<Connection, Error> {
    if matches!(addr, Addr::Unix(_)) {
        // libpq never uses SSL over Unix-domain sockets.
        return attempt(cfg, target, addr, secret, Tls::Off)
            .await
            .map_err(|f| f.error);
    }
    match cfg.sslmode {
        SslMode::Disable => attempt(cfg, target, addr, secret, Tls::Off)
            .await
            .map_err(|f| f.error),
        SslMode::Allow => match attempt(cfg, target, addr, secret, Tls::Off).await {
            Err(f) if f.error.db_error().is_some() => {
                attempt(cfg, target, addr, secret, Tls::Required)
                    .await
                    .map_err(|f| f.error)
            }
            r => r.map_err(|f| f.error),
        },
        SslMode::Prefer => match attempt(cfg, target, addr, secret, Tls::Preferred).await {
            Err(f) if f.tls_in_use && (f.tls_failed || f.error.db_error().is_some()) => {
                attempt(cfg, target, addr, secret, Tls::Off)
                    .await
                    .map_err(|f| f.error)
            }
            r => r.map_err(|f| f.error),
        },
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            attempt(cfg, target, addr, secret, Tls::Required)
                .await
                .map_err(|f| f.error)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tls {
    Off,
    /// Ask; go on in plain text if the server refuses.
    Preferred,
    /// Ask; fail if the server refuses.
    Required,
}

struct Failure {
    error: Error,
    tls_in_use: bool,
    tls_failed: bool,
}

impl Failure {
    fn plain(error: Error) -> Failure {
        Failure {
            error,
            tls_in_use: false,
            tls_failed: false,
        }
    }
}

fn socket_error(e: &std::io::Error, addr: &Addr) -> Error {
    let hint = match addr {
        Addr::Unix(_) => "Is the server running locally and accepting connections on that socket?",
        Addr::Tcp(_) => "Is the server running on that host and accepting TCP/IP connections?",
    };
    Error::Connect {
        message: format!("{}\n\t{hint}", strerror(e)),
        db: None,
    }
}

/// One connection attempt to one address.
async fn attempt(
    cfg: &Config,
    target: &Target,
    addr: &Addr,
    secret: &Secret,
    tls: Tls,
) -> Result<Connection, Failure> {
    let stream = Stream::open(addr)
        .await
        .map_err(|e| Failure::plain(socket_error(&e, addr)))?;
    let stream = match (tls, stream) {
        (Tls::Off, s) => s,
        (_, Stream::Tcp(tcp)) => negotiate_tls(cfg, target, tcp, tls == Tls::Required).await?,
        (_, s) => s,
    };
    let tls_in_use = stream.is_tls();
    startup(cfg, stream, addr.clone(), secret)
        .await
        .map_err(|error| Failure {
            error,
            tls_in_use,
            tls_failed: false,
        })
}

async fn negotiate_tls(
    cfg: &Config,
    target: &Target,
    mut tcp: tokio::net::TcpStream,
    required: bool,
) -> Result<Stream, Failure> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let config = tls::client_config(cfg).map_err(Failure::plain)?;
    let mut req = bytes::BytesMut::with_capacity(8);
    frontend::ssl_request(&mut req);
    let io = |e: std::io::Error| Failure::plain(Error::from(e));
    tcp.write_all(&req).await.map_err(io)?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).await.map_err(io)?;
    match answer[0] {
        b'S' => {}
        b'N' if !required => return Ok(Stream::Tcp(tcp)),
        b'N' => {
            return Err(Failure::plain(Error::Connect {
                message: "server does not support SSL, but SSL was required".into(),
                db: None,
            }))
        }
        other => {
            return Err(Failure::plain(Error::Connect {
                message: format!(
                    "received invalid response to SSL negotiation: {}",
                    other as char
                ),
                db: None,
            }))
        }
    }
    let host = target.host_str();
    let name = tls::server_name(&host).map_err(Failure::plain)?;
    match TlsConnector::from(config).connect(name, tcp).await {
        Ok(s) => Ok(Stream::Tls(Box::new(s))),
        Err(e) => Err(Failure {
            error: Error::Connect {
                message: tls::describe_tls_error(&e, &host),
                db: None,
            },
            tls_in_use: true,
            tls_failed: true,
        }),
    }
}

/// Sends the startup packet and runs authentication until ReadyForQuery.
async fn startup(
    cfg: &Config,
    stream: Stream,
    addr: Addr,
    secret: &Secret,
) -> Result<Connection, Error> {
    let mut conn = Connection::new(stream, addr);
    let app = cfg
        .application_name
        .as_deref()
        .or(cfg.fallback_application_name.as_deref());
    let mut params = vec![
        ("user", cfg.user.as_str()),
        ("database", cfg.dbname.as_str()),
    ];
    if let Some(app) = app {
        params.push(("application_name", app));
    }
    if let Some(o) = cfg.options.as_deref() {
        params.push(("options", o));
    }
    if let Some(enc) = cfg.client_encoding.as_deref() {
        params.push(("client_encoding", enc));
    }
    Startup::write_startup(&mut conn.wbuf, params)?;
    conn.send().await?;
    let mut st = Startup::new(&cfg.user, secret.password.as_deref().map(str::as_bytes));
    loop {
        let n = conn.next_frame().await?;
        let msg = parse(conn.rbuf.consume(n))?;
        let step = st.handle(msg, &mut conn.wbuf)?;
        conn.send().await?;
        if step == Step::Ready {
            break;
        }
    }
    conn.session = st.into_session();
    Ok(conn)
}
