//! `pgrig capture --listen ADDR --upstream URL -o FILE`: the recording proxy's command line —
//! the listener made private (a unix socket in a 0700 directory of the user's own, never
//! through a symbolic link; or TCP on a loopback address only), the upstream checked (no
//! password in it, plain connections), the capture file created private through
//! `pgrig_outfile`; the proxy itself is `pgrig_replay::capture`.

use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pgrig_replay::capture::{run, CaptureOptions, Listen};
use pgrig_wire::{Config, SslMode};

#[derive(clap::Parser, Debug)]
#[command(
    name = "pgrig capture",
    about = "A recording proxy: relays client sessions to a server and writes every session's \
             protocol messages (Parse with parameter types, Bind with formats) to a capture \
             file that `pgrig replay FILE` replays exactly"
)]
struct CaptureArgs {
    /// Where clients connect: a directory for a unix socket (created private, 0700), or a
    /// loopback address IP:PORT (only your own processes are served). Default: a new private
    /// directory under $XDG_RUNTIME_DIR or /tmp
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// The port number in the unix socket's name (.s.PGSQL.PORT)
    #[arg(long, value_name = "PORT", default_value_t = 5432)]
    port: u16,
    /// The server sessions are relayed to (conninfo or URI; user and database come from each
    /// client, passwords from the clients' own authentication)
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// The capture file (created private, 0600)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

/// `pgrig capture`: `argv` starts with `capture`; returns the exit status.
pub fn main(argv: &[String]) -> i32 {
    let a: CaptureArgs = match crate::own_args::parse(argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match capture(&a) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("pgrig capture: error: {msg}");
            1
        }
    }
}

fn capture(a: &CaptureArgs) -> Result<(), String> {
    let upstream = upstream(&a.upstream)?;
    let (listen, shown, cleanup) = listener(a)?;
    let file = pgrig_outfile::create_streaming(&a.output)
        .map_err(|e| format!("-o {}: {e}", a.output.display()))?;
    let out = Box::new(std::io::BufWriter::with_capacity(64 * 1024, file));
    let output = a.output.display().to_string();
    let opts = CaptureOptions {
        listen,
        upstream: upstream.targets,
    };
    let result = run(opts, out, || {
        eprintln!(
            "pgrig capture: listening on {shown}, recording to {output} (Ctrl-C or SIGTERM stops)"
        );
    });
    if let Some(p) = cleanup {
        let _ = std::fs::remove_file(p);
    }
    let s = result.map_err(|e| e.0.trim_start_matches("pgrig capture: ").to_string())?;
    let c = s.counts;
    eprintln!(
        "pgrig capture: {} sessions, {} message batches, {} cancel requests recorded; \
         {} COPY data messages relayed, not recorded; written to {output}",
        c.sessions, c.batches, c.cancels, c.copy_skipped
    );
    if s.refused > 0 {
        eprintln!(
            "pgrig capture: {} TCP connections from other users' processes closed unanswered",
            s.refused
        );
    }
    Ok(())
}

/// The upstream server: its addresses; a password in it or a TLS requirement is refused.
fn upstream(url: &str) -> Result<Config, String> {
    if pgrig_wire::mask_passwords(url) != url {
        return Err(
            "--upstream: holds a password; the proxy relays each client's own \
                    authentication, so leave the password out"
                .into(),
        );
    }
    let c = Config::parse(url).map_err(|e| format!("--upstream: {e}"))?;
    if matches!(
        c.sslmode,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
    ) {
        return Err(
            "--upstream: TLS to the upstream server is not supported yet; \
                    the proxy connects in plain (use sslmode=disable or prefer)"
                .into(),
        );
    }
    Ok(c)
}

/// The listener, how to tell clients to reach it, and the socket file to remove at the end.
fn listener(a: &CaptureArgs) -> Result<(Listen, String, Option<PathBuf>), String> {
    if let Some(addr) = a
        .listen
        .as_deref()
        .and_then(|l| l.parse::<SocketAddr>().ok())
    {
        if !addr.ip().is_loopback() {
            return Err(format!(
                "--listen {addr}: only a loopback address (127.0.0.1, ::1) or a directory \
                 for a unix socket is allowed: the capture file would record whoever connects"
            ));
        }
        let shown = format!("{addr} (connections from other users' processes are closed)");
        return Ok((Listen::Tcp(addr), shown, None));
    }
    let dir = match &a.listen {
        Some(d) => PathBuf::from(d),
        None => default_dir(),
    };
    private_dir(&dir)?;
    let socket = dir.join(format!(".s.PGSQL.{}", a.port));
    clear_stale_socket(&socket)?;
    let shown = format!(
        "{} (connect with -h {} -p {})",
        socket.display(),
        dir.display(),
        a.port
    );
    Ok((Listen::Unix(socket.clone()), shown, Some(socket)))
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
fn private_dir(dir: &Path) -> Result<(), String> {
    let name = format!("--listen {}", dir.display());
    pgrig_outfile::create_dir(dir).map_err(|e| format!("{name}: {e}"))?;
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{name}: {e}"))?;
    let mode = m.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{name}: other users can enter it (mode {mode:04o}); the socket's directory must \
             be private (chmod 700)"
        ));
    }
    if m.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!("{name}: belongs to another user"));
    }
    Ok(())
}

/// A socket file left by a capture that is gone is removed; a live one or any other file is
/// an error.
fn clear_stale_socket(socket: &Path) -> Result<(), String> {
    let Ok(m) = std::fs::symlink_metadata(socket) else {
        return Ok(());
    };
    let name = socket.display();
    if !m.file_type().is_socket() {
        return Err(format!("{name} exists and is not a socket"));
    }
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Err(format!("{name} is in use by another server or capture"));
    }
    std::fs::remove_file(socket).map_err(|e| format!("{name}: {e}"))
}
