//! One Lua state (LuaJIT, all of its libraries and `ffi`, as sysbench's): the Rust half of the
//! API handed to `prelude.lua` as `__pgrig`, the prelude, then the user's script, loaded
//! under its path so that errors name `file:line`. Every thread has its own state.

use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mlua::{Function, IntoLuaMulti, Lua, MultiValue, Table, Value};
use pgrig_workloads::sysbench::rand::Unique;
use pgrig_workloads::sysbench::seeding::{self, Stream};

use crate::ffi::ConOwner;
use crate::invocation::{Invocation, OptValue};
use crate::rand::{self, RandParams};
use crate::sql::{self, SqlContext};
use crate::stats::Stats;

const PRELUDE: &str = include_str!("prelude.lua");

/// What every thread's state shares.
pub struct Shared {
    pub inv: Invocation,
    /// the script's text (read once; `#!` line blanked)
    pub source: Vec<u8>,
    pub stats: Arc<Stats>,
    pub unique: Arc<Unique>,
    pub seed: u64,
    pub rand: RandParams,
    pub config: pgrig_wire::Config,
    /// set when the run is to end (time limit, a thread's fatal error)
    pub stop: AtomicBool,
    /// set by a thread's fatal error
    pub fatal: AtomicBool,
    /// the thread whose fatal error is reported (`u32::MAX`: none yet): sysbench reports one
    /// thread's, so the others' FATAL lines are not printed
    pub fatal_owner: std::sync::atomic::AtomicU32,
    /// the threads' initialisation failures (their FATAL lines)
    pub init_errors: std::sync::Mutex<Vec<String>>,
    /// a stop asked from outside (Ctrl-C): the run ends as at its `--time` limit
    pub interrupt: Option<pgrig_engine::StopHandle>,
    /// set when `interrupt` ended the run
    pub interrupted: AtomicBool,
    /// this run is one segment of a run spread over several hosts
    pub segment: Option<crate::segment::SegmentPart>,
    /// each worker thread's progress, by its index in this run (its id less the first's)
    pub progress: crate::progress::Progress,
}

impl Shared {
    /// `run`'s worker `tid`'s random stream, as sysbench seeds it: `srandom(--rand-seed)`
    /// (the clock's seconds when 0), the background threads' seeds, then the workers'.
    pub fn run_stream(&self, tid: u32) -> Stream {
        let inv = &self.inv;
        let checkpoints = inv.general.iter().any(|(n, v)| {
            n == "report_checkpoints" && matches!(v, OptValue::Str(s) if !s.trim().is_empty())
        });
        Stream::Run {
            seed: self.seed as u32,
            background: seeding::background_threads(
                inv.report_interval > 0,
                inv.rate > 0,
                checkpoints,
            ),
            thread: tid,
        }
    }

    /// Whether thread `tid` reports the run's fatal error: the first thread to fail does,
    /// and only it.
    pub fn claim_fatal(&self, tid: u32) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        match self
            .fatal_owner
            .compare_exchange(u32::MAX, tid, SeqCst, SeqCst)
        {
            Ok(_) => true,
            Err(owner) => owner == tid,
        }
    }
}

/// The message of a Lua error, as sysbench prints it after `FATAL: `.
pub fn message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        // LuaJIT's own words when an allocation fails (sysbench's LuaJIT runs out of its
        // address space; here the state's limit, [`memory_limit`])
        mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => return message(cause),
        other => other.to_string(),
    };
    // sysbench prints the message alone, without Lua's traceback
    match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The script's text, its `#!` line blanked (the line count stays, for `file:line`).
pub fn script_text(src: Vec<u8>) -> Vec<u8> {
    if src.starts_with(b"#") {
        let end = src.iter().position(|&b| b == b'\n').unwrap_or(src.len());
        return src[end..].to_vec();
    }
    src
}

fn opt_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Int(i) => Value::Number(*i as f64),
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Str(s) => Value::String(lua.create_string(s)?),
    })
}

/// `print` on pgrig's standard output (so that the script's lines and pgrig's keep their
/// order), each value through `tostring`.
fn print_fn(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, args: MultiValue| {
        let tostring: Function = lua.globals().get("tostring")?;
        let mut line = String::new();
        for (i, v) in args.into_iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            line += &tostring.call::<mlua::LuaString>(v)?.to_string_lossy();
        }
        println!("{line}");
        Ok(())
    })
}

/// The `__pgrig` table: the state's facts and the Rust functions the prelude wraps.
fn natives(lua: &Lua, sh: &Arc<Shared>, tid: u32, stream: Stream) -> mlua::Result<Table> {
    let inv = &sh.inv;
    let r = lua.create_table()?;
    r.set("version", crate::SYSBENCH_VERSION)?;
    r.set("tid", tid)?;
    // sysbench.cmdline.argv: the program at [0], its arguments from 1
    let argv = lua.create_table()?;
    for (i, a) in inv.argv.iter().enumerate() {
        argv.raw_set(i, a.as_str())?;
    }
    r.set("argv", argv)?;
    r.set("script_path", inv.script.to_string_lossy().into_owned())?;
    r.set("command", inv.command.clone())?;
    // sysbench draws from the thread's stream where these happen (`prelude.lua`)
    r.set("ps_disable", inv.ps_mode_disable)?;
    r.set("percentile", inv.percentile)?;
    let args = lua.create_table()?;
    for (name, value, raw) in &inv.script_args {
        let t = lua.create_table()?;
        t.raw_set(1, name.as_str())?;
        t.raw_set(2, value.clone())?;
        t.raw_set(3, raw.as_str())?;
        args.raw_push(t)?;
    }
    r.set("script_args", args)?;
    let general = lua.create_table()?;
    for (name, v) in &inv.general {
        let t = lua.create_table()?;
        t.raw_set(1, name.as_str())?;
        t.raw_set(2, opt_value(lua, v)?)?;
        general.raw_push(t)?;
    }
    r.set("general_opts", general)?;
    let owner = sh.clone();
    r.set(
        "print_raw",
        lua.create_function(move |_, s: mlua::LuaString| {
            if owner.claim_fatal(tid) {
                print!("{}", s.to_string_lossy());
            }
            Ok(())
        })?,
    )?;
    let driver = inv.driver.clone();
    r.set(
        "check_driver",
        lua.create_function(move |_, name: Option<String>| {
            let name = name.unwrap_or_else(|| driver.clone());
            Ok((name != "pgsql").then(|| {
                println!("FATAL: invalid database driver name: '{name}'");
                "failed to initialize the DB driver".to_string()
            }))
        })?,
    )?;
    let ctx = Rc::new(SqlContext {
        config: sh.config.clone(),
        stats: sh.stats.clone(),
        ps_disable: inv.ps_mode_disable,
    });
    r.set(
        "connect",
        lua.create_function(move |lua, ()| match sql::connect(&ctx) {
            Ok(c) => (lua.create_userdata(ConOwner::new(c))?, Value::Nil).into_lua_multi(lua),
            Err(msg) => (Value::Nil, msg).into_lua_multi(lua),
        })?,
    )?;
    let ffi = lua.create_table()?;
    crate::ffi::connection_table(lua, &ffi)?;
    let rng = stream.rng();
    r.set(
        "rand",
        rand::table(lua, &sh.rand, rng, sh.unique.clone(), &ffi)?,
    )?;
    r.set("ffi", ffi)?;
    r.set("histogram_new", crate::histogram::constructor(lua)?)?;
    r.set(
        "set_test_options",
        lua.create_function(|_, text: String| {
            crate::exports::set_test_options(text);
            Ok(())
        })?,
    )?;
    Ok(r)
}

/// A state for thread `tid` with the prelude and the script loaded; the error is the message
/// for `FATAL: `.
pub fn new_state(sh: &Arc<Shared>, tid: u32, stream: Stream) -> Result<Lua, String> {
    // SAFETY: the script is the user's own, run with the user's rights as sysbench runs it;
    // it gets LuaJIT's `ffi` and `debug` like sysbench's scripts.
    let lua = unsafe { Lua::unsafe_new() };
    // the thread's `ffi.C.sb_*` symbols act on this run's counters; taking their addresses
    // keeps them in the binary
    crate::exports::enter(sh.stats.clone(), sh.unique.clone());
    std::hint::black_box(crate::exports::addresses());
    lua.set_memory_limit(memory_limit(sh.inv.threads))
        .map_err(|e| format!("cannot limit the script's memory: {e}"))?;
    let setup = || -> mlua::Result<()> {
        lua.globals()
            .set("__pgrig", natives(&lua, sh, tid, stream)?)?;
        lua.globals().set("print", print_fn(&lua)?)?;
        lua.load(PRELUDE).set_name("=sysbench.lua").exec()
    };
    setup().map_err(|e| message(&e))?;
    lua.load(sh.source.as_slice())
        .set_name(format!("@{}", sh.inv.script.display()))
        .exec()
        .map_err(|e| message(&e))?;
    Ok(lua)
}

/// The memory all of a run's Lua states may take together: sysbench 1.0.20's LuaJIT (without
/// 64-bit GC references) keeps every state's objects in the lowest 2 GiB of the address space,
/// and an allocation beyond fails with `not enough memory`.
pub const MEMORY_BUDGET: usize = 2 << 30;

/// The smallest limit of one state, however many threads share [`MEMORY_BUDGET`].
pub const MEMORY_FLOOR: usize = 32 << 20;

/// One state's memory limit in a run of `threads` threads (and the main state): an even share
/// of [`MEMORY_BUDGET`], at least [`MEMORY_FLOOR`]. A script that allocates beyond it gets
/// LuaJIT's `not enough memory` error, as under sysbench (its `FATAL:` line, status 1).
pub fn memory_limit(threads: u32) -> usize {
    (MEMORY_BUDGET / (threads as usize + 1)).max(MEMORY_FLOOR)
}

/// Runs `sysbench.cmdline.read_cmdline_options`: `Ok(Some(arg))` names an argument that no
/// declaration accepts; the error is the function's failure.
pub fn read_options(lua: &Lua) -> Result<Option<String>, String> {
    let f = || -> mlua::Result<Option<String>> {
        let cmdline: Table = lua.globals().get::<Table>("sysbench")?.get("cmdline")?;
        cmdline.get::<Function>("read_cmdline_options")?.call(())
    };
    f().map_err(|e| {
        format!(
            "`sysbench.cmdline.read_cmdline_options' function failed: [string \"sysbench.cmdline.lua\"]:0: {}",
            message(&e)
        )
    })
}

/// Global function `name`, if the script defines one.
pub fn global_fn(lua: &Lua, name: &str) -> Option<Function> {
    lua.globals().get::<Option<Function>>(name).ok().flatten()
}

/// Calls `f(args)` through the prelude's protected call: the error's message, if any.
pub fn call(lua: &Lua, f: &Function, args: impl mlua::IntoLuaMulti) -> Option<String> {
    let rt: Table = match lua.globals().get("__pgrig_rt") {
        Ok(t) => t,
        Err(e) => return Some(message(&e)),
    };
    let go = || -> mlua::Result<Option<String>> {
        let mut a = args.into_lua_multi(lua)?;
        a.push_front(Value::Function(f.clone()));
        rt.get::<Function>("call")?.call(a)
    };
    go().unwrap_or_else(|e| Some(message(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shebang_line_is_blanked_keeping_line_numbers() {
        let t = script_text(b"#!/usr/bin/env sysbench\nfoo\n".to_vec());
        assert_eq!(t, b"\nfoo\n");
        assert_eq!(script_text(b"print(1)\n".to_vec()), b"print(1)\n");
    }

    #[test]
    fn messages_drop_luas_traceback() {
        let e = mlua::Error::RuntimeError("x.lua:5: boom\nstack traceback:\n\t[C]: in ?".into());
        assert_eq!(message(&e), "x.lua:5: boom");
    }
}
