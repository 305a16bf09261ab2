//! `pgrig capture --listen ADDR --upstream URL -o FILE`: the recording proxy's command line —
//! the upstream and the listener checked and made private by `pgrig_replay::capture_setup`, the
//! capture file created private through `pgrig_outfile`, the counts printed at the end; the proxy
//! itself is `pgrig_replay::capture`.

use std::path::PathBuf;

use pgrig_replay::capture::{run, CaptureOptions};
use pgrig_replay::capture_setup::{listener, upstream, Endpoint};

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
    let upstream = upstream(&a.upstream).map_err(|e| e.0)?;
    let Endpoint {
        listen,
        shown,
        cleanup,
    } = listener(a.listen.as_deref(), a.port).map_err(|e| e.0)?;
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
