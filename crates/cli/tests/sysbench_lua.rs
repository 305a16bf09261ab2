//! Lua scripts through the `sysbench` link (pgrig's embedded LuaJIT with sysbench 1.0's API):
//! a custom script's events are counted (checked against the table it updates), a bundled
//! script run by path sends the statements the native test sends (from the server's statement
//! log), bad scripts are reported with `file:line` and status 1 as the real sysbench reports
//! them (how `--time` ends a run: `sysbench_shutdown`).

use crate::sysbench_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pgrig_testkit::{fresh_db_on, run, CmdOutput, Server, ServerOptions, TestDb};
use sysbench_common::{command, link, oracle};

/// This binary's cluster: every statement logged with its database.
fn logging_cluster() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(
            ServerOptions::default()
                .setting("log_statement", "all")
                .setting("log_line_prefix", "%d|%p|")
                .setting("autovacuum", "off"),
        )
    })
}

/// A directory of scripts for one test.
fn script_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-sb-lua-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("script dir");
    dir
}

/// `program ARGS` against `db`, run in `dir`.
fn run_in(program: &Path, db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    let mut c = command(program, db, args);
    c.current_dir(dir);
    run(c)
}

const COUNTER: &str = r#"
sysbench.cmdline.options = { step = {"added per event", 1} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE counter (n bigint NOT NULL)")
  con:query("INSERT INTO counter VALUES (0)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("UPDATE counter SET n = n + ?")
  step = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(step)
end
function event()
  step:set(sysbench.opt.step)
  stmt:execute()
  local n = con:query_row("SELECT n FROM counter")
  assert(tonumber(n) > 0)
end
"#;

#[test]
fn a_custom_scripts_events_are_counted_as_the_table_says() {
    let db = fresh_db_on(logging_cluster(), "sb_lua_counter");
    let dir = script_dir("counter");
    std::fs::write(dir.join("counter.lua"), COUNTER).unwrap();
    let prep = run_in(link(), &db, &dir, &["counter.lua", "prepare"]);
    assert_eq!(prep.code, Some(0), "{}{}", prep.stdout, prep.stderr);
    // found as sysbench finds it: NAME in the current directory, .lua added
    let args = [
        "counter",
        "--step=3",
        "--threads=3",
        "--events=60",
        "--time=0",
        "run",
    ];
    let out = run_in(link(), &db, &dir, &args);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_eq!(db.psql("SELECT n FROM counter").trim(), "180");
    let line = |label: &str| {
        out.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .map(|l| l.split_whitespace().nth(1).unwrap_or_default().to_string())
    };
    assert_eq!(
        line("transactions:").as_deref(),
        Some("60"),
        "{}",
        out.stdout
    );
    assert_eq!(line("write:").as_deref(), Some("60"));
    assert_eq!(line("read:").as_deref(), Some("60"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The statements logged for `db`, values taken out, counted.
fn statements(db: &TestDb) -> BTreeMap<String, u64> {
    let log = std::fs::read_to_string(logging_cluster().log_path()).expect("server log");
    let prefix = format!("{}|", db.name);
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some((_, msg)) = line.strip_prefix(&prefix).and_then(|r| r.split_once('|')) else {
            continue;
        };
        let sql = if let Some(s) = msg.strip_prefix("LOG:  statement: ") {
            s
        } else if let Some(s) = msg.strip_prefix("LOG:  execute ") {
            s.split_once(": ").map_or(s, |(_, sql)| sql)
        } else {
            continue;
        };
        let shape: String = sql
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        *out.entry(shape).or_insert(0) += 1;
    }
    out
}

#[test]
fn a_bundled_script_by_path_sends_the_native_tests_statements() {
    let server = logging_cluster();
    let native = fresh_db_on(server, "sb_lua_native");
    let by_path = fresh_db_on(server, "sb_lua_path");
    let script = "/usr/share/sysbench/oltp_read_write.lua";
    assert!(
        Path::new(script).exists(),
        "sysbench's scripts are installed"
    );
    for (db, test) in [(&native, "oltp_read_write"), (&by_path, script)] {
        let prep = run(command(
            &oracle(),
            db,
            &["oltp_read_write", "--table-size=200", "prepare"],
        ));
        assert!(prep.success(), "{}", prep.stdout);
        let args = [test, "--table-size=200", "--events=25", "--time=0", "run"];
        let out = run(command(link(), db, &args));
        assert_eq!(out.code, Some(0), "{test}: {}{}", out.stdout, out.stderr);
    }
    let run_only = |m: BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.into_iter()
            .filter(|(k, _)| !k.starts_with("CREATE") && !k.contains("(k, c, pad) VALUES"))
            .collect()
    };
    let (n, p) = (
        run_only(statements(&native)),
        run_only(statements(&by_path)),
    );
    assert_eq!(n.get("BEGIN"), Some(&25), "native: {n:?}");
    assert_eq!(p, n);
}

/// Both programs' output for a bad script, status first.
/// Each program's exit status and its distinct FATAL lines in order: how many threads print
/// their driver's lines before the run stops depends on timing, in sysbench as in pgrig.
fn both(db: &TestDb, dir: &Path, args: &[&str]) -> [(Option<i32>, String); 2] {
    [link(), &oracle()].map(|p| {
        let o = run_in(p, db, dir, args);
        let mut lines: Vec<&str> = Vec::new();
        for l in o.stdout.lines().filter(|l| l.starts_with("FATAL")) {
            if !lines.contains(&l) {
                lines.push(l);
            }
        }
        (o.code, lines.join("\n"))
    })
}

#[test]
fn bad_scripts_are_reported_with_file_and_line_as_sysbench_does() {
    let db = fresh_db_on(logging_cluster(), "sb_lua_bad");
    let dir = script_dir("bad");
    let cases = [
        ("syntax.lua", "function event()\n  local x = \nend\n"),
        ("runtime.lua", "function event()\n  local t = nil\n  return t.field\nend\n"),
        ("init.lua", "function thread_init()\n  error('no luck')\nend\nfunction event() end\n"),
        ("noevent.lua", "function foo() end\n"),
        ("sql.lua", "function event()\n  sysbench.sql.driver():connect():query('SELECT * FROM missing')\nend\n"),
    ];
    for (file, text) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        let [ours, theirs] = both(&db, &dir, &[file, "--threads=2", "--events=4", "run"]);
        assert_eq!(ours.0, Some(1), "{file}: {}", ours.1);
        assert!(
            ours.1.contains(file) || file == "sql.lua",
            "{file}: {}",
            ours.1
        );
        assert_eq!(ours, theirs, "{file}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// sysbench 1.0.20's test suite copy (`include/oltp_legacy/` holds sysbench 0.5's scripts).
fn legacy_scripts() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    [
        std::env::var("PGRIG_SHARED").ok().map(PathBuf::from),
        Some(root.join("shared")),
        Some("/work/shared".into()),
    ]
    .into_iter()
    .flatten()
    .map(|s| s.join("reference/sysbench-1.0.20-tests/include/oltp_legacy"))
    .find(|d| d.join("oltp.lua").is_file())
}

#[test]
fn a_sysbench_0_5_command_line_prepares_and_runs() {
    let Some(dir) = legacy_scripts() else {
        pgrig_testkit::skip("sysbench's test suite copy (reference/sysbench-1.0.20-tests) is not found; set PGRIG_SHARED");
        return;
    };
    let db = fresh_db_on(logging_cluster(), "sb_lua_legacy");
    let test = format!("--test={}", dir.join("oltp.lua").display());
    let common = [
        test.as_str(),
        "--oltp-tables-count=2",
        "--oltp-table-size=300",
    ];
    let prep = run(command(link(), &db, &[&common[..], &["prepare"]].concat()));
    assert_eq!(prep.code, Some(0), "{}{}", prep.stdout, prep.stderr);
    assert!(
        prep.stderr
            .contains("WARNING: the --test option is deprecated"),
        "{}",
        prep.stderr
    );
    assert_eq!(db.psql("SELECT count(*) FROM sbtest2").trim(), "300");
    let args = [
        &common[..],
        &[
            "--oltp-write-only=on",
            "--num-threads=2",
            "--max-requests=40",
            "--max-time=0",
            "run",
        ],
    ]
    .concat();
    let out = run(command(link(), &db, &args));
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("WARNING: --num-threads is deprecated, use --threads instead\n"),
        "{}",
        out.stdout
    );
    let value = |label: &str| {
        out.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    assert_eq!(value("transactions:"), Some(40));
    assert_eq!(value("read:"), Some(0), "write-only: {}", out.stdout);
    // per event: BEGIN and COMMIT ("other"), 2 updates, a delete and an insert (writes, as
    // sysbench's driver counts them: a statement that affected rows; a DELETE of an id the
    // other thread has just deleted affects none and counts as "other"); restarted events add
    let (w, o) = (value("write:").unwrap_or(0), value("other:").unwrap_or(0));
    assert!(w + o >= 40 * 6 && w >= 40 * 2, "{}", out.stdout);
    // the ids deleted and inserted again leave the tables' sizes as they were
    assert_eq!(db.psql("SELECT count(*) FROM sbtest1").trim(), "300");
}

#[test]
fn a_script_run_whose_output_pipe_closes_runs_to_its_end_without_a_panic() {
    let db = pgrig_testkit::fresh_db("sb_lua_pipe");
    let dir = script_dir("pipe");
    std::fs::write(dir.join("noop.lua"), "function event() end\n").unwrap();
    let mut c = command(
        link(),
        &db,
        &[
            "noop.lua",
            "--events=200000",
            "--time=0",
            "--report-interval=1",
            "--verbosity=5",
            "run",
        ],
    );
    c.current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("pgrig runs");
    drop(child.stdout.take()); // the reader goes away at once, as `| head -1` does
    let out = child.wait_with_output().expect("pgrig ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
