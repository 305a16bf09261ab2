//! `pgrig capture`'s setup before the proxy runs: the upstream checked (no password in it, plain
//! connections) and the listener made private — a unix socket in a 0700 directory of the user's
//! own, never through a symbolic link, a stale socket of a capture that is gone removed; or TCP on
//! a loopback address only. Failures are messages naming the option (`Error`).

use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pgrig_wire::{Config, SslMode};

use crate::capture::Listen;
use crate::error::Error;

/// The listener, how to tell clients to reach it, and the socket file to remove at the end.
pub struct Endpoint {
    pub listen: Listen,
    pub shown: String,
    pub cleanup: Option<PathBuf>,
}

/// The upstream server (`--upstream`): its addresses; a password in it or a TLS requirement is
/// refused.
pub fn upstream(url: &str) -> Result<Config, Error> {
    if pgrig_wire::mask_passwords(url) != url {
        return Err(Error::new(
            "--upstream: holds a password; the proxy relays each client's own \
                    authentication, so leave the password out",
        ));
    }
    let c = Config::parse(url).map_err(|e| Error(format!("--upstream: {e}")))?;
    if matches!(
        c.sslmode,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
    ) {
        return Err(Error::new(
            "--upstream: TLS to the upstream server is not supported yet; \
                    the proxy connects in plain (use sslmode=disable or prefer)",
        ));
    }
    Ok(c)
}

/// The listener of `--listen` (a loopback `IP:PORT`, or a directory; none: a new private
/// directory) with `--port` in the unix socket's name.
pub fn listener(listen: Option<&str>, port: u16) -> Result<Endpoint, Error> {
    if let Some(addr) = listen.and_then(|l| l.parse::<SocketAddr>().ok()) {
        if !addr.ip().is_loopback() {
            return Err(Error(format!(
                "--listen {addr}: only a loopback address (127.0.0.1, ::1) or a directory \
                 for a unix socket is allowed: the capture file would record whoever connects"
            )));
        }
        let shown = format!("{addr} (connections from other users' processes are closed)");
        return Ok(Endpoint {
            listen: Listen::Tcp(addr),
            shown,
            cleanup: None,
        });
    }
    let dir = listen.map_or_else(default_dir, PathBuf::from);
    private_dir(&dir)?;
    let socket = dir.join(format!(".s.PGSQL.{port}"));
    clear_stale_socket(&socket)?;
    let shown = format!(
        "{} (connect with -h {} -p {port})",
        socket.display(),
        dir.display(),
    );
    Ok(Endpoint {
        listen: Listen::Unix(socket.clone()),
        shown,
        cleanup: Some(socket),
    })
}

fn default_dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("pgrig-capture-{}", std::process::id()))
}

/// Creates `dir` 0700, or checks an existing one: a real directory (not a link), the user's
/// own, with no access for group or others.
fn private_dir(dir: &Path) -> Result<(), Error> {
    let name = format!("--listen {}", dir.display());
    pgrig_outfile::create_dir(dir).map_err(|e| Error(format!("{name}: {e}")))?;
    let m = std::fs::symlink_metadata(dir).map_err(|e| Error(format!("{name}: {e}")))?;
    let mode = m.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error(format!(
            "{name}: other users can enter it (mode {mode:04o}); the socket's directory must \
             be private (chmod 700)"
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if m.uid() != unsafe { libc::geteuid() } {
        return Err(Error(format!("{name}: belongs to another user")));
    }
    Ok(())
}

/// A socket file left by a capture that is gone is removed; a live one or any other file is
/// an error.
fn clear_stale_socket(socket: &Path) -> Result<(), Error> {
    let Ok(m) = std::fs::symlink_metadata(socket) else {
        return Ok(());
    };
    let name = socket.display();
    if !m.file_type().is_socket() {
        return Err(Error(format!("{name} exists and is not a socket")));
    }
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Err(Error(format!(
            "{name} is in use by another server or capture"
        )));
    }
    std::fs::remove_file(socket).map_err(|e| Error(format!("{name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_with_a_password_or_tls_is_refused() {
        let e = upstream("postgresql://u:secret@h/db").expect_err("refused");
        assert!(e.0.starts_with("--upstream: holds a password"), "{e}");
        assert!(!e.0.contains("secret"));
        let e = upstream("host=h sslmode=require").expect_err("refused");
        assert!(
            e.0.contains("TLS to the upstream server is not supported"),
            "{e}"
        );
        assert!(upstream("host=h port=5433 sslmode=disable").is_ok());
    }

    #[test]
    fn only_a_loopback_address_is_listened_on() {
        let e = listener(Some("0.0.0.0:6543"), 5432).err().expect("refused");
        assert!(
            e.0.starts_with("--listen 0.0.0.0:6543: only a loopback address"),
            "{e}"
        );
        let ok = listener(Some("127.0.0.1:6543"), 5432).expect("loopback");
        assert!(matches!(ok.listen, Listen::Tcp(_)) && ok.cleanup.is_none());
    }

    #[test]
    fn a_socket_directory_is_made_private_and_checked() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("sock");
        let d = dir.to_str().expect("utf-8");
        let e = listener(Some(d), 6000).expect("created");
        let mode = std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(e.cleanup, Some(dir.join(".s.PGSQL.6000")));
        assert!(
            e.shown.ends_with(&format!("(connect with -h {d} -p 6000)")),
            "{}",
            e.shown
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).expect("chmod");
        let e = listener(Some(d), 6000).err().expect("refused");
        assert!(e.0.contains("other users can enter it (mode 0750)"), "{e}");
    }

    #[test]
    fn a_stale_socket_is_removed_and_any_other_file_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("sock");
        let d = dir.to_str().expect("utf-8");
        listener(Some(d), 6001).expect("created");
        let socket = dir.join(".s.PGSQL.6001");
        drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind"));
        listener(Some(d), 6001).expect("stale socket cleared");
        assert!(!socket.exists());
        std::fs::write(&socket, b"x").expect("write");
        let e = listener(Some(d), 6001).err().expect("refused");
        assert!(e.0.ends_with("exists and is not a socket"), "{e}");
    }
}
