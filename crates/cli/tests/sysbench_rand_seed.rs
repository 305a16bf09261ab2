//! `--rand-seed` gives sysbench 1.0.20's own random numbers: a script printing the next values
//! of every `sysbench.rand` distribution and the 0.5 `sb_rand*` functions (`seq.lua`) prints the
//! same lines under pgrig as under the real sysbench — in `thread_init`, `event` and
//! `thread_done` of one and two threads, for two seeds, with the background threads of
//! `--report-interval`/`--rate`/`--report-checkpoints`, for each `--rand-type`, and through
//! sysbench's C functions and event loop reached by `ffi.C` (`ffi.lua`); and, with the
//! oracle's LuaJIT kept off the C library's `random()` (`isolate.c`: the installed OpenResty
//! LuaJIT draws from it when it loads, which moves sysbench's unseeded streams from run to run)
//! and its threads taking their seeds in the order sysbench creates them (they race for them,
//! and on a loaded machine lost that race four times in a row),
//! in the script's body, `init`, `done`, a one-thread command, a parallel command and the unique
//! sequence. With a database: oltp's `prepare` makes sysbench's tables byte for byte, on the Lua
//! path and the native one, and a `run` with a seed leaves sysbench's rows.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::sysbench_common;
use pgrig_testkit::{fresh_db, run, TestDb};
use sysbench_common::{link, oracle};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sysbench_rand_seed")
        .join(name)
}

/// `isolate.c` built into a preloadable library (the C compiler missing fails the test).
fn isolate() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pgrig-rand-isolate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("isolate dir");
        let lib = dir.join("isolate.so");
        let out = run({
            let mut c = Command::new("cc");
            c.args(["-shared", "-fPIC", "-O1", "-o"])
                .arg(&lib)
                .arg(data("isolate.c"))
                .arg("-ldl");
            c
        });
        assert!(out.success(), "cc isolate.c: {}", out.stderr);
        lib
    })
}

/// Which sysbench runs the script.
#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Sysbench,
    /// the oracle with its LuaJIT off `random()` and its threads taking their seeds in the
    /// order they are created (`isolate.c`)
    SysbenchIsolated,
    Pgrig,
}

fn command(tool: Tool, db: Option<&TestDb>, args: &[&str]) -> Command {
    let program = match tool {
        Tool::Pgrig => link().to_path_buf(),
        _ => oracle(),
    };
    let mut c = match db {
        Some(db) => db.sysbench_command(&program, args),
        None => {
            let mut c = Command::new(&program);
            c.args(args);
            c
        }
    };
    if tool == Tool::SysbenchIsolated {
        c.env("LD_PRELOAD", isolate());
    }
    c
}

/// The script's lines whose tag starts with one of `tags`, sorted (threads interleave); at
/// least `min` of them.
fn lines_n(
    tool: Tool,
    env: &[(&str, &str)],
    args: &[&str],
    tags: &[&str],
    min: usize,
) -> Vec<String> {
    let mut all = vec!["--time=60".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    let mut c = command(tool, None, &[]);
    c.args(&all).envs(env.iter().copied());
    let out = run(c);
    assert!(out.success(), "{args:?}: {}{}", out.stdout, out.stderr);
    let mut v: Vec<String> = out
        .stdout
        .lines()
        .filter(|l| tags.iter().any(|t| l.starts_with(t)))
        .map(str::to_string)
        .collect();
    v.sort();
    assert!(v.len() >= min, "{args:?}: too few lines:\n{}", out.stdout);
    v
}

/// pgrig's lines equal the oracle's (an oracle run again when its threads took their seeds in
/// another order than their numbers: sysbench's threads race for `random()`).
fn same_lines(oracle_tool: Tool, env: &[(&str, &str)], args: &[&str], tags: &[&str]) {
    same_lines_env(oracle_tool, env, args, tags, 17)
}

/// [`same_lines`] without environment, at least `min` lines.
fn same_lines_n(oracle_tool: Tool, args: &[&str], tags: &[&str], min: usize) {
    same_lines_env(oracle_tool, &[], args, tags, min)
}

fn same_lines_env(
    oracle_tool: Tool,
    env: &[(&str, &str)],
    args: &[&str],
    tags: &[&str],
    min: usize,
) {
    let ours = lines_n(Tool::Pgrig, env, args, tags, min);
    let mut theirs = Vec::new();
    for _ in 0..4 {
        theirs = lines_n(oracle_tool, env, args, tags, min);
        if theirs == ours {
            return;
        }
    }
    let diff: Vec<String> = theirs
        .iter()
        .zip(&ours)
        .filter(|(a, b)| a != b)
        .take(5)
        .map(|(a, b)| format!("sysbench: {a}\npgrig:    {b}"))
        .collect();
    panic!(
        "{args:?}: {} of sysbench's lines, {} of pgrig's; first differences:\n{}",
        theirs.len(),
        ours.len(),
        diff.join("\n")
    );
}

fn script() -> String {
    data("seq.lua").display().to_string()
}

const WORKER: [&str; 3] = ["tinit", "event", "tdone"];

#[test]
fn worker_streams_are_sysbenchs_for_a_seed() {
    let s = script();
    for seed in ["--rand-seed=7", "--rand-seed=424242"] {
        for threads in ["--threads=1", "--threads=2"] {
            same_lines(
                Tool::SysbenchIsolated,
                &[],
                &[seed, threads, &s, "run"],
                &WORKER,
            );
        }
    }
}

#[test]
fn sysbenchs_c_functions_and_event_loop_through_ffi_draw_sysbenchs_values() {
    let s = data("ffi.lua").display().to_string();
    for extra in ["--percentile=95", "--percentile=0"] {
        same_lines_n(
            Tool::Sysbench,
            &["--rand-seed=21", "--events=4", extra, &s, "run"],
            &["tinit", "loop"],
            5,
        );
    }
}

#[test]
fn background_threads_take_their_seeds_before_the_workers() {
    let s = script();
    for extra in [
        &["--report-interval=1"][..],
        &["--rate=2000"][..],
        &["--report-checkpoints=100"][..],
        &["--report-interval=1", "--rate=2000", "--percentile=0"][..],
    ] {
        let mut args = vec!["--rand-seed=11", "--threads=2"];
        args.extend_from_slice(extra);
        args.extend([s.as_str(), "run"]);
        same_lines(Tool::SysbenchIsolated, &[], &args, &WORKER);
    }
}

#[test]
fn rand_type_options_shape_default_as_in_sysbench() {
    let s = script();
    for opts in [
        &["--rand-type=uniform"][..],
        &["--rand-type=gaussian", "--rand-spec-iter=5"][..],
        &["--rand-type=pareto", "--rand-pareto-h=0.35"][..],
        &[
            "--rand-spec-pct=7",
            "--rand-spec-res=40",
            "--rand-spec-iter=3",
        ][..],
    ] {
        let mut args = vec!["--rand-seed=3"];
        args.extend_from_slice(opts);
        args.extend([s.as_str(), "run"]);
        same_lines(Tool::SysbenchIsolated, &[], &args, &WORKER);
    }
}

#[test]
fn main_thread_command_and_unique_streams_are_sysbenchs() {
    let s = script();
    let env = [("SEQ_TOP", "1"), ("SEQ_UNIQUE", "1")];
    // (the workers' "body" lines follow --rand-seed: left out; init and done follow the main
    // state's body)
    let main = ["init", "done"];
    // --rand-seed plays no part in the main thread's stream
    for seed in ["--rand-seed=7", "--rand-seed=0"] {
        same_lines(Tool::SysbenchIsolated, &env, &[seed, &s, "run"], &main);
    }
    same_lines(
        Tool::SysbenchIsolated,
        &env,
        &[&s, "prepare"],
        &["body", "prepare"],
    );
    same_lines(Tool::SysbenchIsolated, &env, &[&s, "one"], &["body", "one"]);
    same_lines(
        Tool::SysbenchIsolated,
        &env,
        &["--threads=1", &s, "pp"],
        &["body", "pp"],
    );
    // threads share the unique sequence in the order they draw: no unique draws here
    same_lines(
        Tool::SysbenchIsolated,
        &env[..1],
        &["--rand-seed=5", "--threads=3", &s, "pp"],
        &["body", "pp"],
    );
}

/// A digest of every `sbtest*` table's rows.
fn digest(db: &TestDb) -> String {
    db.psql(
        "select string_agg(t || ':' || d, ' ' order by t) from (
           select 1 t, md5(string_agg(id || '/' || k || '/' || c || '/' || pad, ',' order by id)) d from sbtest1
           union all
           select 2, md5(string_agg(id || '/' || k || '/' || c || '/' || pad, ',' order by id)) from sbtest2
         ) q",
    )
}

/// `tool` runs `args` on `db`, successfully.
fn on(tool: Tool, db: &TestDb, args: &[&str]) {
    let out = run(command(tool, Some(db), args));
    assert!(out.success(), "{args:?}: {}{}", out.stdout, out.stderr);
}

const OLTP: &str = "/usr/share/sysbench/oltp_read_write.lua";

/// The digest `make` leaves on a fresh database, from the oracle: run again (up to 4 times)
/// until it is `want`, as sysbench's threads race for their seeds (a parallel `prepare`'s
/// threads, a run's report thread and worker start together; `isolate.c` makes them take
/// their seeds in order, and a thread slower than its 5 s could still lose).
fn oracle_digest(want: &str, make: impl Fn(&TestDb)) -> String {
    let mut got = String::new();
    for attempt in 0..4 {
        let db = fresh_db(&format!("rand_oracle_{attempt}"));
        make(&db);
        got = digest(&db);
        if got == want {
            break;
        }
    }
    got
}

#[test]
fn prepare_makes_sysbenchs_tables_on_the_lua_and_native_paths() {
    for threads in ["--threads=1", "--threads=2"] {
        let args = [threads, "--tables=2", "--table-size=700"];
        let native = fresh_db("rand_prepare_native");
        on(
            Tool::Pgrig,
            &native,
            &[&args[..], &["oltp_read_write", "prepare"]].concat(),
        );
        let lua = fresh_db("rand_prepare_lua");
        on(Tool::Pgrig, &lua, &[&args[..], &[OLTP, "prepare"]].concat());
        let ours = digest(&native);
        let expected = oracle_digest(&ours, |db| {
            on(
                Tool::SysbenchIsolated,
                db,
                &[&args[..], &[OLTP, "prepare"]].concat(),
            )
        });
        assert_eq!(ours, expected, "{threads}: native prepare");
        assert_eq!(digest(&lua), expected, "{threads}: Lua prepare");
    }
}

#[test]
fn a_seeded_run_leaves_sysbenchs_rows_on_the_lua_and_native_paths() {
    for (test, extra) in [
        ("oltp_read_write", &["--percentile=95"][..]),
        ("oltp_write_only", &["--db-ps-mode=disable"][..]),
        (
            "oltp_update_non_index",
            &["--percentile=0", "--report-interval=1"][..],
        ),
    ] {
        let script = format!("/usr/share/sysbench/{test}.lua");
        let prep = ["--tables=2", "--table-size=300", test, "prepare"];
        let mut args = vec![
            "--tables=2",
            "--table-size=300",
            "--threads=1",
            "--events=40",
            "--rand-seed=7",
        ];
        args.extend_from_slice(extra);
        let after = |db: &TestDb, tool: Tool, what: &str| {
            on(Tool::Pgrig, db, &prep);
            let before = digest(db);
            on(tool, db, &[&args[..], &[what, "run"]].concat());
            assert_ne!(digest(db), before, "{what}: the run wrote nothing");
        };
        let native = fresh_db("rand_run_native");
        after(&native, Tool::Pgrig, test);
        let lua = fresh_db("rand_run_lua");
        after(&lua, Tool::Pgrig, &script);
        let ours = digest(&native);
        let theirs = oracle_digest(&ours, |db| after(db, Tool::SysbenchIsolated, &script));
        assert_eq!(ours, theirs, "{test}: native run");
        assert_eq!(digest(&lua), theirs, "{test}: Lua run");
    }
}
