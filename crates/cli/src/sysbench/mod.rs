//! `pgrig sysbench` and the `sysbench` link: sysbench 1.0.20's command line for its database
//! tests (`[options] TESTNAME prepare|run|cleanup|help`, `--db-driver=pgsql --pgsql-*`), its
//! messages and exit statuses, and its report, over pgrig's native sysbench workloads.
//! Like sysbench, everything but option errors goes to standard output.
//!
//! * [`cmdline`]: the arguments as sysbench splits them; [`general`]: the general options and
//!   their checks (and the deprecated aliases' warnings); [`test_options`]: a test's own options.
//! * [`script`]: a test named by a bundled name (native) or a Lua file, which [`lua`] hands to
//!   the Lua runtime (`pgrig_lua`); [`legacy`]: the hint after sysbench 0.5 command lines.
//! * [`seam`]/[`join`]: the workloads behind the tests.
//! * [`prepare`]: `prepare` and `cleanup`; [`run`]: `run` (its output rendered by
//!   `pgrig_workloads::sysbench::report`); [`help`]: `--help` and `TEST help`.
//! * [`outputs`]: pgrig's `--json`/`--store` for a run (native or Lua); [`live`]:
//!   `--metrics-addr` for a Lua script's run.
//! * [`segments`]: `--segments N --coordinator URL`, a Lua script's run over several client
//!   hosts ([`fleet_options`]: what of the command line travels to the workers;
//!   `pgrig_fleet::segment_lines`: the coordinator's merged `--report-interval` lines).

pub mod cmdline;
pub mod db;
pub mod fleet_options;
pub mod general;
pub mod help;
pub mod join;
pub mod legacy;
pub mod live;
pub mod lua;
pub mod options;
pub mod outputs;
pub mod prepare;
pub mod run;
pub mod script;
pub mod seam;
pub mod segments;
pub mod test_options;

/// sysbench's run output, in the workloads crate (re-exported for the command line's tests).
pub use pgrig_workloads::sysbench::{histogram, report};

use std::io::IsTerminal;

use cmdline::CmdLine;
use general::{Exit, General, Pg, Phase};
use script::Script;

/// The version sysbench's command line and report mirror.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// The first line of every command's output.
pub fn banner() -> String {
    format!(
        "sysbench {SYSBENCH_VERSION} (using pgrig {})\n\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs sysbench's command line `args` (the program name first). Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    match dispatch(args.get(1..).unwrap_or_default()) {
        Ok(code) => code,
        Err(e) => {
            print!("{}", e.stdout);
            eprint!("{}", e.stderr);
            e.code
        }
    }
}

fn dispatch(args: &[String]) -> Result<i32, Exit> {
    let c = CmdLine::parse(args).map_err(|u| Exit::stderr(u.0))?;
    if c.deprecated_test {
        eprintln!("WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.");
    }
    if c.flag("help") {
        print!("{}", help::general());
        return Ok(0);
    }
    if c.flag("version") {
        // sysbench's exact line (scripts compare it); the banner names pgrig
        println!("sysbench {SYSBENCH_VERSION}");
        return Ok(0);
    }
    print!("{}", general::deprecations(&c));
    let general = General::read(&c)?;
    if general.notices {
        print!("{}", banner());
    }
    let tests = join::tests();
    if c.given("segments").is_some() {
        return segmented(&c, args, &general);
    }
    // no test named (or `-`): sysbench runs the script on standard input
    if c.test.as_deref() == Some("-") || (c.test.is_none() && !std::io::stdin().is_terminal()) {
        let pg = Pg::read(&c)?;
        set_password(&pg);
        return lua::run_stdin((&c, args), &general, &pg);
    }
    let Some(arg) = c.test.clone() else {
        return Err(Exit::fatal(format!(
            "no test name given (pgrig runs sysbench's database tests: {})",
            join::TEST_NAMES.join(", ")
        )));
    };
    if script::OTHER_BUILT_IN.contains(&arg.as_str()) {
        return Err(other_built_in(&c, &arg));
    }
    let hinted = |e: Exit| with_hint(e, &c, &arg);
    let lua_path = std::env::var("LUA_PATH").ok();
    let test = match script::resolve(
        &arg,
        &|n| tests.has(n),
        &script::is_file,
        lua_path.as_deref(),
    ) {
        Script::Bundled(name) => name,
        Script::Custom(file) => {
            let pg = Pg::read(&c)?;
            set_password(&pg);
            return Ok(lua::run((&c, args), (&arg, &file, None), &general, &pg));
        }
        Script::Missing => {
            let mut e = Exit::fatal(format!(
                "Cannot find benchmark '{arg}': no such built-in test, file or module"
            ));
            let legacy = legacy::hint(&c, &arg).is_some();
            e.stdout += &script::missing_note(&arg, legacy, lua_path.as_deref());
            return Err(hinted(e));
        }
    };
    bundled((&c, args), &general, &test, &arg)
}

/// A bundled test's command (`help`, `prepare`, `cleanup`, `run`) on the native path; `arg` as
/// the command line named the test (for the hint after an error).
fn bundled(
    (c, args): (&CmdLine, &[String]),
    general: &General,
    test: &str,
    arg: &str,
) -> Result<i32, Exit> {
    let hinted = |e: Exit| with_hint(e, c, arg);
    // bulk_insert is not built on oltp_common: no command needed, no help, no prewarm.
    let oltp_common = test != "bulk_insert";
    let Some(command) = c.command.clone() else {
        if !oltp_common {
            return Ok(0);
        }
        return Err(Exit::fatal(
            "Command is required. Supported commands: prepare, prewarm, run, cleanup, help",
        ));
    };
    let pg = Pg::read(c)?;
    let known = join::tests().options(test);
    let options = test_options::read(c, &known).map_err(hinted)?;
    match command.as_str() {
        "help" if !known.iter().any(|o| o.own) => Err(Exit::stderr(format!(
            "'{test}' test does not implement the 'help' command."
        ))),
        "help" => {
            print!("{}", help::test(test, &known));
            Ok(0)
        }
        "prewarm" if oltp_common => Err(Exit::fatal(
            "`sysbench.cmdline.call_command' function failed: prewarm is currently MySQL only",
        )),
        "prepare" | "cleanup" => {
            let phase = if command == "prepare" {
                Phase::Prepare {
                    threads: if oltp_common { general.threads } else { 1 },
                }
            } else {
                Phase::Cleanup
            };
            general::check_driver(c, phase)?;
            set_password(&pg);
            if phase == Phase::Cleanup {
                if let Some(why) = join::tests().cleanup_refusal(test, &options) {
                    return Err(Exit::fatal(format!("`cleanup' function failed: {why}")));
                }
            }
            let native = join::build(test, &options)?;
            match phase {
                Phase::Prepare { .. } => prepare::prepare(&pg, general, native, oltp_common),
                _ => prepare::cleanup(&pg, &native),
            }
        }
        "run" => {
            set_password(&pg);
            run::run((c, args), test, &options, general, &pg)
        }
        other => Err(Exit::stderr(format!("Unknown command: {other}"))),
    }
}

/// `--segments`: a Lua script file's `run` split over client hosts (`segments`); a bundled
/// test's name, a script on standard input or another command is refused, naming the option.
fn segmented(c: &CmdLine, args: &[String], general: &General) -> Result<i32, Exit> {
    let arg = c.test.clone().unwrap_or_default();
    let lua_path = std::env::var("LUA_PATH").ok();
    let file = match script::resolve(&arg, &|n| join::tests().has(n), &script::is_file, lua_path.as_deref()) {
        Script::Custom(file) if arg != "-" => file,
        Script::Bundled(name) => {
            return Err(Exit::fatal(format!(
                "--segments: '{name}' is a bundled test (run natively); a multi-host run takes a Lua script file, e.g. {}/{name}.lua",
                script::SCRIPT_DIR
            )))
        }
        _ => {
            return Err(Exit::fatal(format!(
                "--segments: a multi-host run takes a Lua script file ('{arg}' is none)"
            )))
        }
    };
    if c.command.as_deref() != Some("run") {
        return Err(Exit::fatal(format!(
            "--segments: only `run` is split over client hosts; run `{}` once, without --segments",
            c.command.as_deref().unwrap_or("COMMAND")
        )));
    }
    general::check_driver(
        c,
        Phase::Run {
            threads: general.threads,
        },
    )?;
    segments::coordinate((c, args), (&arg, &file), general)
}

/// sysbench's non-database tests (`fileio`, `cpu`, ...): sysbench's checks of the command line,
/// then a refusal (pgrig runs its database tests and Lua scripts).
fn other_built_in(c: &CmdLine, test: &str) -> Exit {
    if let Some((_, _, raw)) = c.rest.first() {
        return Exit::stderr(format!("invalid option: {raw}"));
    }
    if c.command.is_none() {
        return Exit::stderr(format!(
            "The '{test}' test requires a command argument. See 'sysbench {test} help'"
        ));
    }
    Exit::fatal(format!(
        "pgrig does not implement sysbench's '{test}' test (it runs sysbench's database tests and Lua scripts)"
    ))
}

/// `e`, followed on standard output by the hint for a sysbench 0.5 command line naming `arg`.
fn with_hint(mut e: Exit, c: &CmdLine, arg: &str) -> Exit {
    if let Some(h) = legacy::hint(c, arg) {
        e.stdout += &h;
    }
    e
}

/// `--pgsql-password`, handed to the connection layer as libpq's `PGPASSWORD` (never an
/// argument, never printed); none given leaves the environment and `~/.pgpass` to answer.
fn set_password(pg: &Pg) {
    if !pg.password.is_empty() {
        // Set before any thread of pgrig's starts.
        std::env::set_var("PGPASSWORD", &pg.password);
    }
}
