//! pgrig-lua: sysbench 1.0's Lua scripting, embedded. A script file runs as sysbench runs it:
//! LuaJIT (the `mlua` crate, vendored), one Lua state per thread, and sysbench's Lua API —
//! hooks and commands, `sysbench.cmdline`/`sysbench.opt`, `sysbench.sql` over pgrig's wire
//! client, `sysbench.rand`, reports — plus the sysbench 0.5 API that 1.0 keeps. Scripts run with
//! the user's rights (they get `ffi`, `io` and `os`, as in sysbench).
//!
//! * [`invocation`]: what the command line hands over; [`state`]: one Lua state (the Rust
//!   natives, `prelude.lua` — the Lua half of the API — and the script).
//! * [`commands`]: the script's command; [`run`]: `run`'s threads and limits; [`report`]: its
//!   output, rendered by `pgrig_workloads::sysbench::report`; [`stats`]: the counters.
//! * [`sql`]: connections and statements ([`rows`]: their result sets, [`placeholders`]: `?`);
//!   [`ffi`]: the hot calls from Lua, through LuaJIT's FFI; [`rand`]: `sysbench.rand`;
//!   [`histogram`]: `sysbench.histogram`.

pub mod commands;
pub mod ffi;
pub mod histogram;
pub mod invocation;
pub mod placeholders;
pub mod rand;
pub mod report;
pub mod rows;
pub mod run;
pub mod sql;
pub mod state;
pub mod stats;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use invocation::{Invocation, OptValue};
use pgrig_workloads::sysbench::rand::Unique;

/// The sysbench version the API reports (`sysbench.version`).
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// Runs the script of `inv` with its command; returns the exit status. Everything is printed
/// on standard output as sysbench prints it (`invalid option` on standard error).
pub fn run(inv: Invocation) -> i32 {
    let config = match pgrig_wire::Config::from_args(&inv.conn, "") {
        Ok(c) => c,
        Err(e) => {
            println!("FATAL: invalid connection options: {e}");
            return 1;
        }
    };
    let seed = if inv.rand_seed != 0 {
        u64::from(inv.rand_seed)
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    };
    let source = match &inv.source {
        Some(text) => text.clone(),
        None => match std::fs::read(&inv.script) {
            Ok(t) => t,
            Err(e) => {
                println!("FATAL: cannot open {}: {e}", inv.script.display());
                return 1;
            }
        },
    };
    let sh = Arc::new(state::Shared {
        source: state::script_text(source),
        rand: rand::RandParams::of(&inv),
        inv,
        stats: Default::default(),
        unique: Arc::new(Unique::new(seed)),
        seed,
        config,
        stop: AtomicBool::new(false),
        fatal: AtomicBool::new(false),
        fatal_owner: std::sync::atomic::AtomicU32::new(u32::MAX),
        init_errors: Default::default(),
    });
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| main_state(&sh)));
    caught.unwrap_or_else(|_| {
        println!("FATAL: the Lua runtime stopped on an internal error");
        1
    })
}

fn main_state(sh: &Arc<state::Shared>) -> i32 {
    let lua = match state::new_state(sh, 0) {
        Ok(l) => l,
        Err(msg) => {
            println!("FATAL: {msg}");
            return 1;
        }
    };
    match state::read_options(&lua) {
        Ok(None) => {}
        Ok(Some(arg)) => {
            eprintln!("invalid option: {arg}");
            return 1;
        }
        Err(msg) => {
            println!("FATAL: {msg}");
            return 1;
        }
    }
    commands::dispatch(&lua, sh)
}
