//! The Lua API details the public script corpus (`sysbench_corpus`) found missing, each pinned
//! against the real sysbench 1.0.20 on the same server: a sysbench 0.5 script's options as
//! globals (`num_threads`), the script's file name in "test does not implement", the FFI-typed
//! bounds of `sysbench.rand.*`/`sb_rand*` (a string fails), and the latency figures of the
//! statistics handed to `sysbench.hooks.report_cumulative`.

use crate::sysbench_common;

use std::path::PathBuf;

use pgrig_testkit::fresh_db;
use sysbench_common::{pgrig, same, sysbench};

/// `body` written as `NAME` in a fresh scratch folder; the script's path.
fn script(name: &str, body: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("pgrig-sb-legacy-api-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, body).expect("script written");
    path
}

#[test]
fn a_script_without_option_declarations_sees_the_options_as_globals_as_under_sysbench() {
    let db = fresh_db("sb_legacy_globals");
    let path = script(
        "globals.lua",
        r#"
function thread_init()
  if sysbench.tid ~= 0 then return end
  for _, k in ipairs({ "num_threads", "threads", "events", "time", "thread_id", "percentile",
                       "verbosity", "validate", "rate", "report_interval", "db_driver",
                       "oltp_table_size", "debug", "help" }) do
    print(k, type(_G[k]), tostring(_G[k]))
  end
  -- a 0.5 script's arithmetic on them (select_random_points.lua, parallel_prepare.lua)
  print(thread_id + num_threads, oltp_table_size / 2)
end
function event() end
"#,
    );
    let p = path.to_str().expect("utf-8 path");
    let args = [
        p,
        "--threads=2",
        "--events=2",
        "--time=0",
        "--rand-seed=1",
        "--oltp-table-size=50",
        "run",
    ];
    let out = same(&db, &args);
    assert!(
        out.stdout.contains("num_threads\tnumber\t1\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("threads\tnumber\t2\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("oltp_table_size\tstring\t50\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_script_run_by_path_without_a_command_is_named_by_its_file_name_as_under_sysbench() {
    let db = fresh_db("sb_legacy_name");
    let path = script("no_commands.lua", "function event() end\n");
    let p = path.to_str().expect("utf-8 path");
    for cmd in ["help", "prepare", "cleanup"] {
        let out = same(&db, &[p, cmd]);
        assert_eq!(
            out.stderr,
            format!("'no_commands.lua' test does not implement the '{cmd}' command.\n")
        );
        assert_eq!(out.code, Some(1));
    }
}

#[test]
fn rand_bounds_convert_as_sysbench_ffi_uint32_does() {
    let db = fresh_db("sb_legacy_rand");
    let cases = [
        ("sb_rand(1, \"10\")", 1),
        ("sysbench.rand.uniform(\"1\", 10)", 1),
        ("sysbench.rand.default(1, nil)", 1),
        ("sysbench.rand.gaussian(1, {})", 1),
        ("sb_rand_special(1, \"2\")", 1),
        (
            "(function() local f = sysbench.rand.uniform; return f(1, \"x\") end)()",
            1,
        ),
        ("pcall(sb_rand, 1, \"2\")", 0),
        ("sysbench.rand.special(1, 2.5)", 0),
        ("sysbench.rand.pareto(1, true)", 0),
        ("sb_rand_uniform(5, 5)", 0),
    ];
    for (i, (call, code)) in cases.iter().enumerate() {
        let path = script(
            &format!("rand{i}.lua"),
            &format!("function event() print({call}) end\n"),
        );
        let p = path.to_str().expect("utf-8 path");
        let out = same(&db, &[p, "--events=1", "--time=0", "--rand-seed=1", "run"]);
        assert_eq!(out.code, Some(*code), "{call}: {}", out.stdout);
        if *code == 1 {
            assert!(
                out.stdout.contains("(cannot convert '"),
                "{call}: {}",
                out.stdout
            );
        }
    }
    // a template that is no string fails on its length (the location is each tool's own)
    let path = script("rand_string.lua", "function event() sb_rand_str(5) end\n");
    let p = path.to_str().expect("utf-8 path");
    let args = [p, "--events=1", "--time=0", "run"];
    let (ours, theirs) = (pgrig(&db, &args), sysbench(&db, &args));
    assert_eq!((ours.code, theirs.code), (Some(1), Some(1)));
    let why = "attempt to get length of local 'fmt' (a number value)";
    assert!(ours.stdout.contains(why), "{}", ours.stdout);
    assert!(theirs.stdout.contains(why), "{}", theirs.stdout);
}

#[test]
fn report_cumulative_gets_sysbench_statistics_with_latencies_in_seconds() {
    let db = fresh_db("sb_legacy_stat");
    let path = script(
        "stat.lua",
        r#"
function event()
  local t0 = os.clock()
  while os.clock() - t0 < 0.02 do end
end
sysbench.hooks.report_cumulative = function(stat)
  local keys = {}
  for k, v in pairs(stat) do keys[#keys + 1] = k .. " " .. type(v) end
  table.sort(keys)
  print(table.concat(keys, "\n"))
  print(string.format("events %d threads_running %d", stat.events, stat.threads_running))
  print("min>=15ms", stat.latency_min >= 0.015, "max<2s", stat.latency_max < 2)
  print("ordered", stat.latency_min <= stat.latency_avg and stat.latency_avg <= stat.latency_max)
  print("sum", stat.latency_sum >= 3 * stat.latency_min and stat.latency_sum <= stat.time_total)
end
"#,
    );
    let p = path.to_str().expect("utf-8 path");
    let out = same(&db, &[p, "--events=3", "--time=0", "run"]);
    assert_eq!(out.code, Some(0));
    for line in [
        "latency_avg number",
        "latency_sum number",
        "events 3 threads_running 0",
        "min>=15ms\ttrue\tmax<2s\ttrue",
        "ordered\ttrue",
        "sum\ttrue",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
}
