//! pgrig-lua: sysbench 1.0's Lua scripting, embedded. A script file runs as sysbench runs it:
//! LuaJIT (the `mlua` crate, vendored), one Lua state per thread, and sysbench's Lua API —
//! hooks and commands, `sysbench.cmdline`/`sysbench.opt`, `sysbench.sql` over pgrig's wire
//! client, `sysbench.rand`, reports — plus the sysbench 0.5 API that 1.0 keeps. Scripts run with
//! the user's rights (they get `ffi`, `io` and `os`, as in sysbench).
//!
//! * [`invocation`]: what the command line hands over; [`state`]: one Lua state (the Rust
//!   natives, `prelude.lua` — the Lua half of the API — and the script).
//! * [`commands`]: the script's command; [`run`](mod@run): `run`'s threads and limits ([`pace`]:
//!   `--rate`; [`ending`]: how it ends, `--time` and `--forced-shutdown`; [`progress`]: each
//!   thread's, read when a run is cut short);
//!   [`report`]: its
//!   output, rendered by `pgrig_workloads::sysbench::report`; [`stats`]: the counters
//!   ([`counter`]: a cell per thread, so statements on two threads share no cache line).
//! * [`document`]: a finished `run`'s run document ([`run_measured`] hands it over), built
//!   from its [`tally`]; [`segment`]: one segment of a run spread over several hosts
//!   ([`run_segment`]: global thread ids, a share of `--rate`, a shared start).
//! * [`sql`]: connections and statements ([`rows`]: their result sets, [`placeholders`]: `?`);
//!   [`ffi`]: the hot calls from Lua, through LuaJIT's FFI; [`rand`]: `sysbench.rand`;
//!   [`histogram`]: `sysbench.histogram`; [`exports`]: sysbench's C symbols (`sb_counter_inc`,
//!   `sb_event_*`, `sb_rand_*`, `sb_histogram_*`, …) that scripts reach through `ffi.C`;
//!   [`watchdog`]: deadlines on what cannot be interrupted (the script's body, `init()`,
//!   `thread_init()`); each state's memory is limited ([`state::memory_limit`]).

#[macro_use]
mod print;
pub mod commands;
pub mod counter;
pub mod document;
pub mod ending;
pub mod exports;
pub mod ffi;
pub mod histogram;
pub mod invocation;
pub mod pace;
pub mod placeholders;
pub mod progress;
pub mod rand;
pub mod report;
pub mod rows;
pub mod run;
pub mod segment;
pub mod sql;
pub mod state;
pub mod stats;
pub mod tally;
pub mod watchdog;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use invocation::{Invocation, OptValue};
use pgrig_workloads::sysbench::seeding::{self, Stream};

/// The sysbench version the API reports (`sysbench.version`).
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// How a script's command ended: its exit status and, for a `run` that ran its threads, what
/// its run document is built from.
pub struct Outcome {
    pub code: i32,
    inv: Invocation,
    stats: Arc<stats::Stats>,
    first_thread: u32,
}

impl Outcome {
    /// The run document of the `run` (none for another command, or a run that never started
    /// its threads); `server_version` as the server reported it.
    pub fn document(&self, server_version: &str) -> Option<pgrig_document::document::RunDocument> {
        Some(document::of(&self.inv, &self.tally()?, server_version))
    }

    /// What the `run` measured (none for another command, or a run that never started its
    /// threads).
    pub fn tally(&self) -> Option<tally::Tally> {
        let fin = self.stats.finished.lock().ok()?.clone()?;
        Some(tally::Tally::of(&self.stats, &fin, self.first_thread))
    }

    /// Whether a stop from outside (Ctrl-C) ended the run early.
    pub fn interrupted(&self) -> bool {
        (self.stats.finished.lock().ok())
            .and_then(|f| f.as_ref().map(|f| f.interrupted))
            .unwrap_or(false)
    }
}

/// Runs the script of `inv` with its command; returns the exit status. Everything is printed
/// on standard output as sysbench prints it (`invalid option` on standard error).
pub fn run(inv: Invocation) -> i32 {
    run_measured(inv).code
}

/// [`run`](fn@run), keeping what the run measured for its document.
pub fn run_measured(inv: Invocation) -> Outcome {
    run_watched(inv, None)
}

/// [`run_measured`], telling `each_second` every second of a `run` as it ends (and the last,
/// partial one), e.g. for live metrics.
pub fn run_watched(inv: Invocation, each_second: Option<Box<stats::SecondFn>>) -> Outcome {
    run_stoppable(inv, each_second, None)
}

/// [`run_watched`], ended early when `stop` is requested (Ctrl-C) as its `--time` limit ends
/// it: the threads finish their events, the report covers what ran, and the document says
/// it was interrupted.
pub fn run_stoppable(
    inv: Invocation,
    each_second: Option<Box<stats::SecondFn>>,
    stop: Option<pgrig_engine::StopHandle>,
) -> Outcome {
    run_part(inv, None, each_second, stop)
}

/// [`run_watched`] as one segment of a run spread over several hosts: `inv` holds this
/// segment's threads and `--events` share, `part` the rest ([`segment::SegmentPart`]; its
/// stop ends the run as [`run_stoppable`]'s).
pub fn run_segment(
    inv: Invocation,
    part: segment::SegmentPart,
    each_second: Option<Box<stats::SecondFn>>,
) -> Outcome {
    let stop = part.stop.clone();
    run_part(inv, Some(part), each_second, Some(stop))
}

fn run_part(
    inv: Invocation,
    part: Option<segment::SegmentPart>,
    each_second: Option<Box<stats::SecondFn>>,
    stop: Option<pgrig_engine::StopHandle>,
) -> Outcome {
    let stats: Arc<stats::Stats> = Default::default();
    if let Some(f) = each_second {
        let _ = stats.on_second.set(stats::SecondHook(f));
    }
    let first_thread = part.as_ref().map_or(0, |p| p.first_thread);
    let code = run_with(inv.clone(), (stats.clone(), stop), part);
    Outcome {
        code,
        inv,
        stats,
        first_thread,
    }
}

/// The script's declared options (`sysbench.cmdline.options`) with their defaults, by name:
/// the script is loaded (its body runs, as sysbench runs it for any command) in a state of
/// its own, without connecting.
pub fn declared_options(inv: Invocation) -> Result<Vec<(String, String)>, String> {
    let sh = shared(inv, (Default::default(), None), None)?;
    let lua = state::new_state(&sh, 0, Stream::Main)?;
    Ok(run::script_options(&lua))
}

/// How a script takes its own options on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptOptions {
    /// declared in `sysbench.cmdline.options`: these names (`-` as `_`), and no others
    Declared(Vec<String>),
    /// no declarations (a sysbench 0.5 script): any option becomes a global of that name,
    /// except that it must not replace one of `taken` (the globals the loaded script has)
    Globals { taken: Vec<String> },
}

/// How the script of `inv` takes its options (the script is loaded, as for
/// [`declared_options`]).
pub fn script_options(inv: Invocation) -> Result<ScriptOptions, String> {
    let sh = shared(inv, (Default::default(), None), None)?;
    let lua = state::new_state(&sh, 0, Stream::Main)?;
    let declared: bool = (lua.load("return sysbench.cmdline.options ~= nil").eval())
        .map_err(|e| state::message(&e))?;
    if declared {
        let names = run::script_options(&lua).into_iter();
        return Ok(ScriptOptions::Declared(
            names.map(|(n, _)| n.replace('-', "_")).collect(),
        ));
    }
    let code = "local t = {} for k in pairs(_G) do t[#t + 1] = tostring(k) end return t";
    let taken: Vec<String> = lua.load(code).eval().map_err(|e| state::message(&e))?;
    Ok(ScriptOptions::Globals { taken })
}

/// What every thread's state shares, for `inv`; the FATAL message when the script cannot be
/// read or the connection options are invalid.
fn shared(
    inv: Invocation,
    (stats, interrupt): (Arc<stats::Stats>, Option<pgrig_engine::StopHandle>),
    segment: Option<segment::SegmentPart>,
) -> Result<Arc<state::Shared>, String> {
    let config = pgrig_wire::Config::from_args(&inv.conn, "")
        .map_err(|e| format!("invalid connection options: {e}"))?;
    // `run`'s `srandom` seed (the other streams are sysbench's unseeded ones: `seeding`)
    let seed = u64::from(seeding::run_seed(inv.rand_seed));
    let source = match &inv.source {
        Some(text) => text.clone(),
        None => std::fs::read(&inv.script)
            .map_err(|e| format!("cannot open {}: {e}", inv.script.display()))?,
    };
    let progress = progress::Progress::new(inv.threads);
    Ok(Arc::new(state::Shared {
        progress,
        source: state::script_text(source),
        rand: rand::RandParams::of(&inv),
        inv,
        stats,
        unique: Arc::new(seeding::unique()),
        seed,
        config,
        stop: AtomicBool::new(false),
        fatal: AtomicBool::new(false),
        fatal_owner: std::sync::atomic::AtomicU32::new(u32::MAX),
        init_errors: Default::default(),
        interrupt,
        interrupted: AtomicBool::new(false),
        segment,
    }))
}

fn run_with(
    inv: Invocation,
    stats: (Arc<stats::Stats>, Option<pgrig_engine::StopHandle>),
    part: Option<segment::SegmentPart>,
) -> i32 {
    let sh = match shared(inv, stats, part) {
        Ok(sh) => sh,
        Err(msg) => {
            println!("FATAL: {msg}");
            return 1;
        }
    };
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| main_state(&sh)));
    caught.unwrap_or_else(|_| {
        println!("FATAL: the Lua runtime stopped on an internal error");
        1
    })
}

fn main_state(sh: &Arc<state::Shared>) -> i32 {
    // a `run` whose script body never returns ends at its --time limit
    let body = match sh.inv.command.as_deref() {
        Some("run") => watchdog::time_limit(sh.inv.time, "body"),
        _ => watchdog::Watchdog::none(),
    };
    let lua = match state::new_state(sh, 0, Stream::Main) {
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
    drop(body);
    commands::dispatch(&lua, sh)
}
