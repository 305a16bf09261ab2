//! Ctrl-C during a sysbench Lua script's `run`: on its own, the threads finish their events,
//! the report and the run document (marked interrupted) cover exactly what ran — the events
//! equal the rows the script inserted — and the status is 130; inside a study, the script's
//! run stops at once and the study with it, storing no partial run.

use crate::{common, sysbench_common};

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{finish_within as finish, interrupt, spawn_piped as spawn};

use pgrig_testkit::{fresh_db, CmdOutput, TestDb};

const INSERTER: &str = r#"
function prepare()
  sysbench.sql.driver():connect():query("CREATE TABLE ticks (tid int, at timestamptz DEFAULT now())")
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("INSERT INTO ticks (tid) VALUES (" .. sysbench.tid .. ")")
end
"#;

fn ticks(db: &TestDb) -> u64 {
    db.psql("select count(*) from ticks")
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Waits (at most a minute) until the script has inserted rows.
fn wait_for_ticks(db: &TestDb) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let exists = || db.psql("select to_regclass('ticks') is not null").trim() == "t";
    while !exists() || ticks(db) == 0 {
        assert!(Instant::now() < deadline, "the script inserted nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C once the script has inserted rows; the output, once it stopped (within 20 s).
fn ctrl_c_once_it_inserts(child: Child, db: &TestDb) -> CmdOutput {
    wait_for_ticks(db);
    let t = Instant::now();
    interrupt(&child);
    let out = finish(child, Duration::from_secs(60));
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?} to stop",
        t.elapsed()
    );
    out
}

fn script(dir: &Path) -> String {
    let path = dir.join("ticks.lua");
    std::fs::write(&path, INSERTER).unwrap();
    path.display().to_string()
}

#[test]
fn ctrl_c_ends_a_scripts_run_with_its_report_and_document_and_status_130() {
    let db = fresh_db("lua_ctrl_c");
    let dir = tempfile::tempdir().unwrap();
    let lua = script(dir.path());
    let link = sysbench_common::link();
    let prep = pgrig_testkit::run(sysbench_common::command(link, &db, &[&lua, "prepare"]));
    assert!(prep.success(), "{}", prep.stdout);
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let args = [lua.as_str(), "--threads=2", "--time=300", &json_arg, "run"];
    let child = spawn(sysbench_common::command(link, &db, &args));
    let out = ctrl_c_once_it_inserts(child, &db);
    assert_eq!(out.code, Some(130), "{}{}", out.stdout, out.stderr);
    let events: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no report:\n{}", out.stdout));
    assert_eq!(events, ticks(&db), "events vs rows inserted");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json file")).unwrap();
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["transactions"]["ok"].as_u64(), Some(events));
}

#[test]
fn ctrl_c_stops_a_studys_script_run_at_once_and_stores_no_partial_run() {
    let db = fresh_db("lua_ctrl_c_study");
    let dir = tempfile::tempdir().unwrap();
    script(dir.path());
    let study = format!(
        "name = \"lua-stop\"\n[[targets]]\nname = \"db\"\nurl = \"{}\"\n[workload]\nsysbench = \"ticks.lua\"\nclients = 1\nduration = \"300s\"\n",
        db.url()
    );
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let store = dir.path().join("runs.db");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["study", "s.toml", "--store"])
        .arg(&store)
        .current_dir(dir.path());
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    let out = ctrl_c_once_it_inserts(spawn(c), &db);
    assert_ne!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    let export = pgrig_testkit::run({
        let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
        e.args(["results", "export", "--format", "json", "--store"])
            .arg(&store);
        e
    });
    let runs: Vec<serde_json::Value> = serde_json::from_str(&export.stdout).unwrap_or_default();
    assert!(
        runs.is_empty(),
        "a partial run was stored: {}",
        export.stdout
    );
}
