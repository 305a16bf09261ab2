//! `pgrig server start|stop|status`: a private scratch PostgreSQL cluster that outlives the
//! command, found again through a state file.

pub fn main(args: &[String]) -> i32 {
    let dir = pgrig_lab::default_state_dir();
    match args.get(2).map(String::as_str) {
        Some("start") => {
            let opts = match start_options(&args[3..]) {
                Ok(o) => o,
                Err(msg) => {
                    eprintln!("pgrig: error: {msg}");
                    eprintln!("usage: {USAGE}");
                    return 1;
                }
            };
            match pgrig_lab::start_detached(&dir, opts) {
                Ok(info) => {
                    print_started(&info);
                    0
                }
                Err(e) => {
                    eprintln!("pgrig: error: {e}");
                    1
                }
            }
        }
        Some("stop") => match pgrig_lab::stop(&dir) {
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
        },
        Some("status") => match pgrig_lab::status(&dir) {
            Ok(Some(st)) => {
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
            Ok(None) => {
                println!("no pgrig server is running");
                3
            }
            Err(e) => {
                eprintln!("pgrig: error: {e}");
                1
            }
        },
        _ => {
            eprintln!("usage: {USAGE}");
            1
        }
    }
}

const USAGE: &str =
    "pgrig server start [--tcp] [--max-connections N] [--set NAME=VALUE]... | stop | status";

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

/// Options of `pgrig server start`: a benchmark-grade server (fsync on, realistic settings)
/// plus any `--set NAME=VALUE` written into its configuration, on its unix socket only unless
/// `--tcp` (127.0.0.1, password required) is given.
fn start_options(args: &[String]) -> Result<pgrig_lab::ServerOptions, String> {
    let mut opts = pgrig_lab::ServerOptions::default().fast(false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("option {key} needs a value"))
        };
        match key {
            "--max-connections" => {
                let v = value()?;
                let n = v.parse::<u32>().ok().filter(|n| *n > 0).ok_or(format!(
                    "invalid --max-connections \"{v}\" (expected a positive integer)"
                ))?;
                opts = opts.max_connections(n);
            }
            "--set" => {
                let v = value()?;
                let (name, val) = v
                    .split_once('=')
                    .filter(|(n, _)| !n.is_empty())
                    .ok_or(format!("invalid --set {v:?} (expected NAME=VALUE)"))?;
                pgrig_lab::check_setting(name, val)
                    .map_err(|why| format!("invalid --set {v:?}: {why}"))?;
                opts = opts.setting(name, val);
            }
            "--tcp" if inline.is_none() => opts = opts.tcp(true),
            other => return Err(format!("unknown option \"{other}\"")),
        }
    }
    Ok(opts)
}
