//! `pgrig server start|stop|status`: a private scratch PostgreSQL cluster that outlives the
//! command, found again through a state file.

use std::path::Path;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "pgrig server",
    about = "A private scratch PostgreSQL cluster that outlives the command",
    subcommand_required = true
)]
struct ServerArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the server (benchmark-grade settings: fsync on) on its private unix socket.
    Start(StartArgs),
    /// Stop the server and remove its files.
    Stop,
    /// Where the server is and whether it runs (exit status 3 when none runs).
    Status,
}

/// Options of `pgrig server start`.
#[derive(clap::Args, Debug)]
struct StartArgs {
    /// Also listen on 127.0.0.1, with scram-sha-256 and a generated password in a 0600 file.
    #[arg(long)]
    tcp: bool,
    /// The server's max_connections.
    #[arg(long, value_name = "N", value_parser = positive)]
    max_connections: Option<u32>,
    /// A server setting written into its configuration. Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = setting)]
    sets: Vec<(String, String)>,
    /// Allow `--set` settings that change who can connect or what the server runs (include*,
    /// listen_addresses, unix_socket_*, hba_file, ident_file, ssl*, library paths, commands such
    /// as archive_command); without it they are refused.
    #[arg(long)]
    allow_access_settings: bool,
}

/// Runs `pgrig server`; `args[0]` is the program, `args[1]` `server`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let argv = std::iter::once("pgrig server".to_string()).chain(args.iter().skip(2).cloned());
    let a: ServerArgs = match crate::own_args::parse(argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let dir = pgrig_lab::default_state_dir();
    match a.command {
        Command::Start(s) => start(&dir, s),
        Command::Stop => stop(&dir),
        Command::Status => status(&dir),
    }
}

fn start(dir: &Path, s: StartArgs) -> i32 {
    let opts = start_options(s);
    let extra = opts.extra_socket_dirs().map(str::to_string);
    match pgrig_lab::start_detached(dir, opts) {
        Ok(info) => {
            if let Some(extra) = extra {
                eprintln!(
                    "pgrig: warning: the server also listens in {extra} (--set \
                     unix_socket_directories), where its socket permissions decide who can connect"
                );
            }
            print_started(&info);
            0
        }
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

fn stop(dir: &Path) -> i32 {
    match pgrig_lab::stop(dir) {
        Ok(Some(info)) => {
            println!("stopped and removed the server on port {}", info.port);
            0
        }
        Ok(None) => {
            println!("no pgrig server is running");
            0
        }
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

/// Prints where the server is; 0 when it runs, 3 when none does (or its state is stale).
fn status(dir: &Path) -> i32 {
    let st = match pgrig_lab::status(dir) {
        Ok(Some(st)) => st,
        Ok(None) => {
            println!("no pgrig server is running");
            return 3;
        }
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            return 1;
        }
    };
    let i = &st.info;
    let state = if st.running {
        "running"
    } else {
        "not running (stale state; `pgrig server stop` cleans up)"
    };
    println!("PostgreSQL {}: {state}", pgrig_lab::release_of(&i.version));
    println!("port:        {}", i.port);
    println!("socket dir:  {}", i.socket_dir.display());
    println!("data dir:    {}", i.data_dir.display());
    println!("log:         {}", i.log.display());
    println!(
        "superuser:   {} (server runs as OS user {})",
        i.user, i.os_user
    );
    println!("connect:     {}", i.conninfo("postgres"));
    if let Some(file) = i.passfile() {
        println!("tcp:         {}", i.tcp_conninfo("postgres"));
        println!("password in: {} (scram-sha-256)", file.display());
    }
    if st.running {
        0
    } else {
        3
    }
}

/// What `start` prints: where the server is and how to reach it (the password file's name with
/// TCP, never the password).
fn print_started(info: &pgrig_lab::ServerInfo) {
    println!(
        "PostgreSQL {} running on port {} (socket directory {})",
        pgrig_lab::release_of(&info.version),
        info.port,
        info.socket_dir.display()
    );
    println!("connect with: {}", info.conninfo("postgres"));
    if let Some(file) = info.passfile() {
        println!(
            "over TCP:     {} (scram-sha-256; the password is in {}, mode 0600)",
            info.tcp_conninfo("postgres"),
            file.display()
        );
    }
    for (k, v) in info.env("postgres") {
        println!("export {k}={v}");
    }
}

/// The server `start` asks for: a benchmark-grade server (fsync on, realistic settings) plus
/// the `--set` settings, on its unix socket only unless `--tcp` (127.0.0.1, password required).
fn start_options(s: StartArgs) -> pgrig_lab::ServerOptions {
    let mut opts = pgrig_lab::ServerOptions::default()
        .fast(false)
        .tcp(s.tcp)
        .allow_access_settings(s.allow_access_settings);
    if let Some(n) = s.max_connections {
        opts = opts.max_connections(n);
    }
    for (name, value) in s.sets {
        opts = opts.setting(name, value);
    }
    opts
}

/// `--max-connections`: a positive integer.
fn positive(v: &str) -> Result<u32, String> {
    v.parse::<u32>().ok().filter(|n| *n > 0).ok_or(format!(
        "invalid --max-connections \"{v}\" (expected a positive integer)"
    ))
}

/// `--set NAME=VALUE`, checked as the server's configuration file needs it.
fn setting(v: &str) -> Result<(String, String), String> {
    let (name, val) = v
        .split_once('=')
        .filter(|(n, _)| !n.is_empty())
        .ok_or(format!("invalid --set {v:?} (expected NAME=VALUE)"))?;
    pgrig_lab::check_setting(name, val).map_err(|why| format!("invalid --set {v:?}: {why}"))?;
    Ok((name.to_string(), val.to_string()))
}
