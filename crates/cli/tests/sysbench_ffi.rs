//! sysbench's FFI surface: the C types its internal modules declare before a script runs and
//! the C symbols its binary exports, reached through `ffi.C`, as under sysbench 1.0.20 (the
//! oracle, on the same server): the minimal `sb_counter_inc` script gives the same report and
//! exit status; each counter type moves the same report line; every declared type compiles
//! with the same sizes, every declared function resolves; a type declared again is refused as
//! LuaJIT refuses it under sysbench, a function declared again is not.

use crate::sysbench_common;

use std::path::PathBuf;

use pgrig_testkit::{fresh_db, CmdOutput, TestDb};
use sysbench_common::{normalise, pgrig, same, sysbench};

fn script(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-sb-ffi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("script dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("script");
    path
}

/// The number after `label` on the report's line.
fn figure(report: &str, label: &str) -> u64 {
    let line = (report.lines())
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{report}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

const MINIMAL: &str = r#"ffi.cdef[[void sb_counter_inc(int, sb_counter_type);]]
function event() ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR) end
"#;

#[test]
fn the_minimal_sb_counter_inc_script_runs_as_under_sysbench() {
    let db = fresh_db("sb_ffi_minimal");
    let path = script("minimal.lua", MINIMAL);
    let p = path.to_str().unwrap();
    let out = same(&db, &[p, "--events=5", "--time=0", "run"]);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert_eq!(figure(&out.stdout, "total number of events:"), 5);
}

/// Connects (so the report has its SQL statistics) and adds one count of `--kind` per event.
const COUNTER: &str = r#"ffi.cdef[[void sb_counter_inc(int, sb_counter_type);]]
sysbench.cmdline.options = { kind = {"counter type", "SB_CNT_OTHER"} }
function thread_init() con = sysbench.sql.driver():connect() end
function event() ffi.C.sb_counter_inc(sysbench.tid, ffi.C[sysbench.opt.kind]) end
"#;

const LINES: [&str; 7] = [
    "read:",
    "write:",
    "other:",
    "transactions:",
    "ignored errors:",
    "reconnects:",
    "total number of events:",
];

fn counter_run(tool: fn(&TestDb, &[&str]) -> CmdOutput, db: &TestDb, kind: &str) -> Vec<u64> {
    let path = script("counter.lua", COUNTER);
    let k = format!("--kind={kind}");
    let out = tool(
        db,
        &[path.to_str().unwrap(), &k, "--events=5", "--time=0", "run"],
    );
    assert_eq!(out.code, Some(0), "{kind}: {}{}", out.stdout, out.stderr);
    LINES.iter().map(|l| figure(&out.stdout, l)).collect()
}

#[test]
fn each_counter_type_moves_the_report_line_sysbench_moves() {
    let db = fresh_db("sb_ffi_counters");
    let kinds = [
        ("SB_CNT_OTHER", 2),
        ("SB_CNT_READ", 0),
        ("SB_CNT_WRITE", 1),
        ("SB_CNT_TRX", 3),
        ("SB_CNT_ERROR", 4),
        ("SB_CNT_RECONNECT", 5),
    ];
    for (kind, line) in kinds {
        let ours = counter_run(pgrig, &db, kind);
        let theirs = counter_run(sysbench, &db, kind);
        assert_eq!(ours, theirs, "{kind}: {LINES:?}");
        // 5 events; the counted kind's line has 5 (events: 10)
        let want = if line == 3 { 10 } else { 5 };
        assert_eq!(ours[line], want, "{kind}: {LINES:?} {ours:?}");
    }
}

/// Prints each declared type's size, the enums' constants, and whether each declared function
/// resolves (a `cdata` function) — at load, so every state prints it.
const TYPES: &str = r#"
local out = {}
for _, t in ipairs({"sql_error_t", "sql_value", "sql_row", "sb_counter_type", "sql_result",
                    "sql_bind_type_t", "sql_bind", "sb_arg_type_t", "sb_arg_t"}) do
  out[#out + 1] = t .. "=" .. ffi.sizeof(t)
end
for _, t in ipairs({"sql_driver", "sql_connection", "sql_statement"}) do
  out[#out + 1] = t .. "=" .. ffi.sizeof(t, 0)
end
local b = ffi.new("sql_bind")
b.type = ffi.C.SQL_TYPE_VARCHAR
out[#out + 1] = "bind=" .. tonumber(b.type)
local a = ffi.new("sb_arg_t[1]")
a[0].type = ffi.C.SB_ARG_TYPE_FILE
out[#out + 1] = "arg=" .. tonumber(a[0].type)
out[#out + 1] = "cnt=" .. tonumber(ffi.C.SB_CNT_MAX) .. "," .. tonumber(ffi.C.DB_ERROR_FATAL)
out[#out + 1] = "h=" .. tostring(ffi.typeof("sb_histogram_t *") ~= nil)
for _, f in ipairs({"sb_event_start", "sb_event_stop", "sb_more_events", "db_create",
                    "db_connection_create", "db_query", "db_prepare", "db_execute",
                    "db_fetch_row", "db_free_results", "db_bulk_insert_init",
                    "sb_lua_set_test_args", "sb_print_test_options", "sb_histogram_new",
                    "sb_histogram_update", "sb_histogram_print", "sb_histogram_delete",
                    "sb_rand_uniform", "sb_rand_default", "sb_rand_gaussian", "sb_rand_special",
                    "sb_rand_pareto", "sb_rand_unique", "sb_rand_str", "sb_rand_uniform_uint64",
                    "sb_rand_uniform_double"}) do
  local ok, v = pcall(function() return ffi.C[f] end)
  out[#out + 1] = f .. "=" .. tostring(ok and type(v) == "cdata")
end
print(table.concat(out, " "))
-- the declared functions called as sysbench's modules call them
function event()
  local v = ffi.C.sb_rand_uniform(3, 3)
  local buf = ffi.new("char[4]")
  ffi.C.sb_rand_str("a#b@", buf)
  local s = ffi.string(buf, 4)
  local h = ffi.gc(ffi.C.sb_histogram_new(100, 1, 10), ffi.C.sb_histogram_delete)
  ffi.C.sb_histogram_update(h, 5)
  print("rand=" .. v .. " str=" .. s:sub(1, 1) .. s:sub(3, 3) .. #s .. " d=" ..
        tostring(ffi.C.sb_rand_uniform_double() < 1))
end
"#;

#[test]
fn sysbenchs_declared_types_compile_and_its_functions_resolve_as_under_sysbench() {
    let db = fresh_db("sb_ffi_types");
    let path = script("types.lua", TYPES);
    let p = path.to_str().unwrap();
    let out = same(&db, &[p, "--events=2", "--time=0", "run"]);
    assert!(out.stdout.contains("sql_bind=40"), "{}", out.stdout);
    assert!(!out.stdout.contains("=false"), "{}", out.stdout);
    assert!(
        out.stdout.contains("rand=3 str=ab4 d=true"),
        "{}",
        out.stdout
    );
}

#[test]
fn declaring_a_type_again_is_refused_and_a_function_again_is_not_as_under_sysbench() {
    let db = fresh_db("sb_ffi_redeclare");
    let again = script(
        "again.lua",
        "ffi.cdef[[void sb_event_start(int thread_id);]]\nfunction event() end\n",
    );
    let out = same(
        &db,
        &[again.to_str().unwrap(), "--events=1", "--time=0", "run"],
    );
    assert_eq!(out.code, Some(0));
    let clash = script(
        "clash.lua",
        "ffi.cdef[[typedef enum { SB_CNT_OTHER } mine;]]\nfunction event() end\n",
    );
    let c = clash.to_str().unwrap();
    let ours = pgrig(&db, &[c, "--events=1", "--time=0", "run"]);
    let theirs = sysbench(&db, &[c, "--events=1", "--time=0", "run"]);
    assert_eq!(ours.code, theirs.code);
    assert!(
        ours.stdout.contains("attempt to redefine 'SB_CNT_OTHER'"),
        "{}",
        ours.stdout
    );
    assert_eq!(normalise(&ours.stdout), normalise(&theirs.stdout));
}

#[test]
fn a_db_call_through_ffi_c_fails_naming_the_function() {
    let db = fresh_db("sb_ffi_db");
    let path = script(
        "dbcall.lua",
        "function event() ffi.C.db_query(nil, 'SELECT 1', 8) end\n",
    );
    let out = pgrig(
        &db,
        &[path.to_str().unwrap(), "--events=1", "--time=0", "run"],
    );
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("FATAL: ffi.C.db_query() is sysbench's C driver API"),
        "{}",
        out.stdout
    );
}

/// A script's own `thread_run` loop, as sysbench's built-in one is written: `sb_more_events`
/// stops it at `--events`, `sb_event_start/stop` count and time its events.
const OWN_LOOP: &str = r#"
function thread_run(tid)
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    event(tid)
    ffi.C.sb_event_stop(tid)
  end
end
function event() end
"#;

#[test]
fn a_scripts_own_thread_run_loop_counts_and_limits_its_events_as_sysbenchs() {
    let db = fresh_db("sb_ffi_loop");
    let path = script("own_loop.lua", OWN_LOOP);
    let p = path.to_str().unwrap();
    let out = same(&db, &[p, "--threads=2", "--events=7", "--time=0", "run"]);
    assert_eq!(figure(&out.stdout, "total number of events:"), 7);
}
