//! The Lua path's hot calls stay off Lua's C API: `oltp_read_write.lua`, run by path, with its
//! `event()` watched by a Lua call hook that counts calls of host functions (a C function that
//! is not one of LuaJIT's own: an mlua native in pgrig, a `lua_CFunction` in sysbench). LuaJIT
//! compiles FFI calls into its traces but not C API calls, so pgrig's statements and random
//! numbers go through the FFI, as sysbench's own API does; the count is compared with the real
//! sysbench 1.0.20 running the same wrapper (deterministic: no timing involved). Before the FFI
//! path, pgrig made about 45 such calls per event (one per statement and per random number).

use crate::sysbench_common;

use pgrig_testkit::{fresh_db, run};
use sysbench_common::{command, link, oracle};

/// Runs the bundled script's events under a call hook and prints the host calls per event.
const WRAPPER: &str = r#"
local builtin = {}
for _, lib in ipairs({ _G, string, table, math, io, os, debug, coroutine, package,
                       jit or {}, bit or {}, require("ffi") }) do
  for _, f in pairs(lib) do
    if type(f) == "function" then builtin[f] = true end
  end
end
dofile("/usr/share/sysbench/oltp_read_write.lua")
local inner_event, inner_done = event, thread_done
local calls, events = 0, 0
local getinfo, sethook = debug.getinfo, debug.sethook
local function hook()
  local i = getinfo(2, "Sf")
  -- LuaJIT's fast functions (also the FFI's own metamethods) print as "builtin#N"
  if i.what == "C" and not builtin[i.func]
     and not tostring(i.func):find("builtin#", 1, true) then
    calls = calls + 1
  end
end
function event()
  sethook(hook, "c")
  inner_event()
  sethook()
  events = events + 1
end
function thread_done()
  print(string.format("host calls: %d events: %d", calls, events))
  inner_done()
end
"#;

/// (host calls, events) from a run's output.
fn counted(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("host calls: "))
        .unwrap_or_else(|| panic!("no count in:\n{stdout}"));
    let n: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (n[0], n[1])
}

#[test]
fn statements_and_random_numbers_cross_into_rust_through_the_ffi_as_in_sysbench() {
    let db = fresh_db("sb_lua_calls");
    let dir = std::env::temp_dir().join(format!("pgrig-sb-lua-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("script dir");
    let script = dir.join("watched.lua");
    std::fs::write(&script, WRAPPER).expect("script");
    let script = script.to_str().expect("utf-8 path");
    let prep = run(command(
        &oracle(),
        &db,
        &["oltp_read_write", "--table-size=100", "prepare"],
    ));
    assert!(prep.success(), "{}{}", prep.stdout, prep.stderr);
    let args = [
        script,
        "--table-size=100",
        "--threads=1",
        "--events=20",
        "--time=0",
        "run",
    ];
    let [ours, theirs] = [link(), &oracle()].map(|p| {
        let out = run(command(p, &db, &args));
        assert_eq!(
            out.code,
            Some(0),
            "{}: {}{}",
            p.display(),
            out.stdout,
            out.stderr
        );
        counted(&out.stdout)
    });
    assert_eq!(ours.1, 20, "pgrig ran every event");
    assert_eq!(theirs.1, 20, "sysbench ran every event");
    assert!(
        ours.0 <= theirs.0,
        "pgrig made {} host calls in 20 events, sysbench {}",
        ours.0,
        theirs.0
    );
    assert_eq!(
        ours.0, 0,
        "no C API call per event: statements and rand go through the FFI"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
