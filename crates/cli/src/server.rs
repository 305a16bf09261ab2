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
                        info.version,
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
                println!("{st:?}");
                0
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
