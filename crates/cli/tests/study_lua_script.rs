//! A sysbench Lua script in a study (`[workload] sysbench = "SCRIPT.lua"`, its options as
//! `options` and `options.NAME` matrix keys): an option the script does not declare is refused
//! where it was written (file:line:column, with the options the script declares), before
//! anything runs; a study with the script (on an external server) runs its `prepare` once per
//! dataset and stores a run per point whose document records the option the script ran with,
//! and the table the script updates holds exactly the stored events.

use std::path::Path;
use std::process::Command;

use pgrig_results::view::RunView;

const COUNTER: &str = r#"
sysbench.cmdline.options = { step = {"added per event", 1} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE IF NOT EXISTS counter (step int PRIMARY KEY, n bigint NOT NULL)")
  con:query(string.format("INSERT INTO counter VALUES (%d, 0)", sysbench.opt.step))
end
function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS counter")
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query(string.format("UPDATE counter SET n = n + 1 WHERE step = %d", sysbench.opt.step))
end
"#;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    pgrig_testkit::run(c)
}

#[test]
fn a_script_option_the_script_does_not_declare_is_refused_where_it_was_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter.lua"), COUNTER).unwrap();
    let study = "name = \"x\"\n[workload]\nsysbench = \"counter.lua\"\n[matrix]\n\"options.stpe\" = [1, 2]\n";
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let out = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("s.toml:5:1: unknown option \"stpe\" of sysbench script")
            && out
                .stderr
                .contains("it declares: step in sysbench.cmdline.options"),
        "{}",
        out.stderr
    );
    let study =
        "name = \"x\"\n[workload]\nsysbench = \"counter.lua\"\noptions = { step = 1, x = 2 }\n";
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let out = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("s.toml:4:11: unknown option \"x\""),
        "{}",
        out.stderr
    );
}

#[test]
fn a_studys_script_is_prepared_and_each_points_run_stored_with_its_option() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter.lua"), COUNTER).unwrap();
    let db = pgrig_testkit::fresh_db("study_lua_counter");
    let study = format!(
        "name = \"lua-counter\"\n[[targets]]\nname = \"db\"\nurl = \"{}\"\n[workload]\nsysbench = \"counter.lua\"\nclients = 2\ntransactions = 25\n[matrix]\n\"options.step\" = [3, 7]\n",
        db.url()
    );
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let store = dir.path().join("runs.db");
    let store_arg = store.display().to_string();
    let out = pgrig(dir.path(), &["study", "s.toml", "--store", &store_arg]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let export = pgrig(
        dir.path(),
        &[
            "results", "export", "--format", "json", "--store", &store_arg,
        ],
    );
    assert_eq!(export.code, Some(0), "{}", export.stderr);
    let runs: Vec<serde_json::Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        let v = RunView::of(r);
        // 25 events per client, as pgbench's transactions per client
        assert_eq!(v.transactions.ok, Some(50.0), "{r}");
        assert_eq!(v.workload.as_deref(), Some("sysbench"));
        let step = v
            .point
            .get("options.step")
            .and_then(|s| s.as_i64())
            .expect("point");
        assert_eq!(r["workload_options"]["step"], step.to_string().as_str());
        assert_eq!(r["workload_counters"]["queries_write"].as_u64(), Some(50));
    }
    // prepared for step 3, then cleaned up and prepared again for step 7
    assert_eq!(db.psql("SELECT step, n FROM counter").trim(), "7|50");
}

#[test]
fn a_scripts_warmup_runs_its_events_unmeasured_before_the_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter.lua"), COUNTER).unwrap();
    let db = pgrig_testkit::fresh_db("study_lua_warmup");
    let study = format!(
        "name = \"lua-warmup\"\n[[targets]]\nname = \"db\"\nurl = \"{}\"\n[workload]\nsysbench = \"counter.lua\"\nclients = 1\ntransactions = 10\nwarmup = \"1s\"\n",
        db.url()
    );
    std::fs::write(dir.path().join("s.toml"), study).unwrap();
    let store = dir.path().join("runs.db");
    let store_arg = store.display().to_string();
    let out = pgrig(dir.path(), &["study", "s.toml", "--store", &store_arg]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let export = pgrig(
        dir.path(),
        &[
            "results", "export", "--format", "json", "--store", &store_arg,
        ],
    );
    let runs: Vec<serde_json::Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(RunView::of(&runs[0]).transactions.ok, Some(10.0));
    // the table counts the warm-up's events too: a second of them, then the stored ten
    let n: u64 = db.psql("SELECT n FROM counter").trim().parse().unwrap();
    assert!(n > 10, "the warm-up ran no event: counter {n}");
}
