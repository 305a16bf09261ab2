//! The startup/authentication state machine, free of I/O: feed it backend messages, it writes
//! responses into an output buffer and says when the session is ready.
//!
//! Supports trust, cleartext password, md5 and SCRAM-SHA-256 (via `postgres-protocol`'s SCRAM
//! implementation, which also applies SASLprep). Channel binding is not negotiated (the client
//! announces it does not support it), so servers offering SCRAM-SHA-256-PLUS still work.

use bytes::BytesMut;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::frontend as pp;

use super::backend::{Authentication, Backend};
use super::session::Session;
use crate::error::Error;

/// What the driver should do after feeding a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Send whatever is in the output buffer (may be empty), then read the next message.
    Continue,
    /// ReadyForQuery arrived: the session is usable.
    Ready,
}

/// Authentication method the server asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    Trust,
    Password,
    Md5,
    ScramSha256,
}

pub struct Startup {
    user: String,
    password: Option<Vec<u8>>,
    scram: Option<sasl::ScramSha256>,
    scram_done: bool,
    method: AuthMethod,
    password_sent: bool,
    authenticated: bool,
    session: Session,
}

impl Startup {
    /// `user` is the role name sent in the startup packet (md5 salts with it).
    pub fn new(user: &str, password: Option<&[u8]>) -> Startup {
        Startup {
            user: user.to_string(),
            password: password.map(<[u8]>::to_vec),
            scram: None,
            scram_done: false,
            method: AuthMethod::Trust,
            password_sent: false,
            authenticated: false,
            session: Session::default(),
        }
    }

    /// Writes the StartupMessage with the given parameters (`user` must be among them).
    pub fn write_startup<'a>(
        out: &mut BytesMut,
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), Error> {
        super::frontend::startup(out, params)
    }

    /// The method the server asked for so far.
    pub fn method(&self) -> AuthMethod {
        self.method
    }

    /// True once a password was sent (so an auth failure is about that password).
    pub fn password_sent(&self) -> bool {
        self.password_sent
    }

    /// The session state gathered so far; take it after [`Step::Ready`].
    pub fn into_session(self) -> Session {
        self.session
    }

    /// Handles one backend message, writing any response into `out`.
    pub fn handle(&mut self, msg: Backend<'_>, out: &mut BytesMut) -> Result<Step, Error> {
        match msg {
            Backend::Authentication(auth) => self.authenticate(auth, out)?,
            Backend::ParameterStatus { name, value } => self.session.set_parameter(name, value),
            Backend::BackendKeyData {
                process_id,
                secret_key,
            } => {
                self.session.key = Some((process_id, secret_key));
            }
            Backend::ReadyForQuery(status) => {
                if !self.authenticated {
                    return Err(Error::protocol(
                        "ReadyForQuery before authentication completed",
                    ));
                }
                self.session.tx_status = status;
                return Ok(Step::Ready);
            }
            Backend::Error(fields) => return Err(fields.to_db_error().into()),
            Backend::Notice(_) | Backend::NegotiateProtocolVersion { .. } => {}
            other => {
                return Err(Error::protocol(format!(
                    "unexpected message during startup: {other:?}"
                )))
            }
        }
        Ok(Step::Continue)
    }

    /// The password to answer with; like libpq, an empty one counts as none.
    fn password(&self) -> Result<&[u8], Error> {
        match self.password.as_deref() {
            Some(pw) if !pw.is_empty() => Ok(pw),
            _ => Err(Error::Connect {
                message: crate::error::NO_PASSWORD.into(),
                db: None,
            }),
        }
    }

    fn authenticate(&mut self, auth: Authentication<'_>, out: &mut BytesMut) -> Result<(), Error> {
        let io = |e: std::io::Error| Error::protocol(e.to_string());
        match auth {
            Authentication::Ok => {
                if self.scram.is_some() && !self.scram_done {
                    return Err(auth_error(
                        "server completed SCRAM authentication without proof",
                    ));
                }
                self.authenticated = true;
            }
            Authentication::CleartextPassword => {
                self.method = AuthMethod::Password;
                let pw = self.password()?;
                pp::password_message(pw, out).map_err(io)?;
                self.password_sent = true;
            }
            Authentication::Md5Password { salt } => {
                self.method = AuthMethod::Md5;
                let hash = md5_hash(self.user.as_bytes(), self.password()?, salt);
                pp::password_message(hash.as_bytes(), out).map_err(io)?;
                self.password_sent = true;
            }
            Authentication::Sasl(mechs) => {
                self.method = AuthMethod::ScramSha256;
                if !mechs.iter().any(|m| m == sasl::SCRAM_SHA_256.as_bytes()) {
                    return Err(auth_error(
                        "none of the server's SASL authentication mechanisms are supported",
                    ));
                }
                let scram =
                    sasl::ScramSha256::new(self.password()?, sasl::ChannelBinding::unsupported());
                pp::sasl_initial_response(sasl::SCRAM_SHA_256, scram.message(), out).map_err(io)?;
                self.scram = Some(scram);
                self.password_sent = true;
            }
            Authentication::SaslContinue(data) => {
                let scram = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| Error::protocol("SASL continue without SASL start"))?;
                scram
                    .update(data)
                    .map_err(|e| auth_error(format!("malformed SCRAM message: {e}")))?;
                pp::sasl_response(scram.message(), out).map_err(io)?;
            }
            Authentication::SaslFinal(data) => {
                let scram = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| Error::protocol("SASL final without SASL start"))?;
                scram.finish(data).map_err(|e| {
                    auth_error(format!("SCRAM server signature verification failed: {e}"))
                })?;
                self.scram_done = true;
            }
            Authentication::Unsupported(code) => {
                return Err(auth_error(format!(
                    "authentication method {code} not supported"
                )));
            }
        }
        Ok(())
    }
}

fn auth_error(message: impl Into<String>) -> Error {
    Error::Connect {
        message: message.into(),
        db: None,
    }
}

#[cfg(test)]
#[path = "startup_tests.rs"]
mod tests;
