//! `pgrig server start|stop|status`: a private scratch PostgreSQL cluster that outlives the
//! command, found again through a state file.

pub fn main(args: &[String]) -> i32 {
    let dir = pgrig_lab::default_state_dir();
    match args.get(2).map(String::as_str) {
        Some("start") => {
            match pgrig_lab::start_detached(&dir, pgrig_lab::ServerOptions::default().fast(false)) {
                Ok(info) => {
                    println!(
                        "PostgreSQL {} running on port {} (socket directory {})",
                        pgrig_lab::release_of(&info.version),
                        info.port,
                        info.socket_dir.display()
                    );
                    println!("connect with: {}", info.conninfo("postgres"));
                    for (k, v) in info.env("postgres") {
                        println!("export {k}={v}");
                    }
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
            eprintln!("usage: pgrig server start|stop|status");
            1
        }
    }
}
