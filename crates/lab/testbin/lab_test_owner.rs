//! `lab-test-owner`: the separate process some lab tests need (built with the tests, never
//! installed or run as a test itself).
//!
//! - `lab-test-owner own exit|sleep`: starts a throwaway cluster, prints
//!   `OWNER <postmaster pid> <root dir>`, then exits without destructors or sleeps until killed
//!   (`owner_death.rs`: the watchdog must clean up after it).
//! - `lab-test-owner detach STATE_DIR`: starts a detached server recorded in `STATE_DIR` and exits
//!   (`detached.rs`: the server must outlive its starter).

use std::time::Duration;

use pgrig_lab::{start_detached, Server, ServerOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["own", mode @ ("exit" | "sleep")] => own(mode),
        ["detach", state_dir] => {
            start_detached(state_dir.as_ref(), ServerOptions::default())
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        _ => fail("usage: lab-test-owner own exit|sleep | detach STATE_DIR"),
    }
}

fn own(mode: &str) {
    let server = Server::start(ServerOptions::default()).unwrap_or_else(|e| fail(&e.to_string()));
    let pid = server
        .postmaster_pid()
        .unwrap_or_else(|| fail("no postmaster pid"));
    println!("OWNER {pid} {}", server.root_dir().display());
    if mode == "exit" {
        std::process::exit(0);
    }
    std::thread::sleep(Duration::from_secs(120));
}

fn fail(msg: &str) -> ! {
    eprintln!("lab-test-owner: {msg}");
    std::process::exit(1);
}
