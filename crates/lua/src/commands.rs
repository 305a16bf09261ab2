//! A script's command, as sysbench 1.0 dispatches it: none (the script's body only), `help`
//! (the script's `help()`, else its options), `run`, a command of `sysbench.cmdline.commands`
//! (`{function, PARALLEL_COMMAND}`: on `--threads` threads, each with its own state), or the
//! script's global `prepare`/`cleanup`/... function.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::thread;

use mlua::{Function, Lua, Table, Value};

use crate::state::{self, Shared};
use pgrig_workloads::sysbench::seeding::Stream;

/// The commands sysbench knows whether or not a script implements them.
const BUILT_IN: [&str; 5] = ["prepare", "prewarm", "run", "cleanup", "help"];

/// `'NAME' test does not implement the 'CMD' command.`, status 1; NAME is the test argument's
/// last path component, as sysbench names a script (`oltp.lua` for `--test=DIR/oltp.lua`).
fn not_implemented(sh: &Shared, cmd: &str) -> i32 {
    let arg = sh.inv.name.as_str();
    let name = arg.rsplit('/').find(|c| !c.is_empty()).unwrap_or(arg);
    eprintln!("'{name}' test does not implement the '{cmd}' command.");
    1
}

/// The script's entry for `cmd` in `sysbench.cmdline.commands`: (function, parallel).
fn declared(lua: &Lua, cmd: &str) -> Option<(Function, bool)> {
    let sb: Table = lua.globals().get("sysbench").ok()?;
    let commands: Table = sb.get::<Table>("cmdline").ok()?.get("commands").ok()?;
    let entry: Table = commands.get(cmd).ok()?;
    let f: Function = entry.get(1).ok()?;
    let parallel = !matches!(
        entry.get::<Value>(2),
        Ok(Value::Nil) | Ok(Value::Boolean(false))
    );
    Some((f, parallel))
}

/// `help`.
fn help(lua: &Lua, sh: &Shared) -> i32 {
    if let Some(f) = state::global_fn(lua, "help") {
        return match state::call(lua, &f, ()) {
            None => 0,
            Some(msg) => {
                println!("FATAL: `help' function failed: {msg}");
                1
            }
        };
    }
    let has_options = lua
        .load("return next(sysbench.cmdline.options or {}) ~= nil")
        .eval::<bool>()
        .unwrap_or(false);
    if !has_options {
        return not_implemented(sh, "help");
    }
    let name = sh
        .inv
        .script
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    println!("{} options:", name.unwrap_or_else(|| sh.inv.name.clone()));
    let r = lua.load("sysbench.cmdline.print_test_options()").exec();
    i32::from(r.is_err())
}

/// A command function on `--threads` threads, each in its own state (`sysbench.tid` = its
/// number).
fn parallel(sh: &Arc<Shared>, cmd: &str) -> i32 {
    if sh.inv.notices {
        print!("Initializing worker threads...\n\n");
    }
    let handles: Vec<_> = (0..sh.inv.threads.max(1))
        .map(|tid| {
            let (sh, cmd) = (sh.clone(), cmd.to_string());
            thread::spawn(move || {
                let lua = state::new_state(&sh, tid, Stream::Command(tid))?;
                state::read_options(&lua)?;
                let (f, _) = declared(&lua, &cmd)
                    .ok_or_else(|| format!("command '{cmd}' is not declared"))?;
                state::call(&lua, &f, ()).map_or(Ok(()), Err)
            })
        })
        .collect();
    let mut status = 0;
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => {
                println!("FATAL: `sysbench.cmdline.call_command' function failed: {msg}");
                status = 1;
            }
            Err(_) => {
                println!("FATAL: a command thread stopped on an internal error");
                status = 1;
            }
        }
    }
    status
}

/// Runs the invocation's command with the main state `lua`. Returns the status.
pub fn dispatch(lua: &Lua, sh: &Arc<Shared>) -> i32 {
    let Some(cmd) = sh.inv.command.clone() else {
        return 0;
    };
    if let Some((f, par)) = declared(lua, &cmd) {
        if par && sh.inv.threads > 1 {
            return parallel(sh, &cmd);
        }
        return match state::call(lua, &f, ()) {
            None => 0,
            Some(msg) => {
                println!("FATAL: `sysbench.cmdline.call_command' function failed: {msg}");
                1
            }
        };
    }
    match cmd.as_str() {
        "help" => help(lua, sh),
        "run" => crate::run::run(lua, sh),
        _ => match state::global_fn(lua, &cmd) {
            Some(f) => match state::call(lua, &f, ()) {
                None => i32::from(sh.fatal.load(Relaxed)),
                Some(msg) => {
                    println!("FATAL: `{cmd}' function failed: {msg}");
                    1
                }
            },
            None if BUILT_IN.contains(&cmd.as_str()) => not_implemented(sh, &cmd),
            None => {
                eprintln!("Unknown command: {cmd}");
                1
            }
        },
    }
}
