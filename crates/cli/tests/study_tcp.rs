//! A study comparing the unix socket with TCP on throwaway servers: a target's `tcp = true`
//! connects over 127.0.0.1 with the generated password (never stored), the default over the
//! socket; `tcp` on an external target is refused.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir).env_remove("PGPASSFILE");
    pgrig_testkit::run(c)
}

#[test]
fn study_compares_socket_and_tcp_targets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        r#"
name = "transport"
[[targets]]
name = "socket"
fast = true
[[targets]]
name = "tcp"
fast = true
tcp = true
[dataset]
scale = 1
[workload]
builtin = "select-only"
transactions = 50
[matrix]
clients = [1]
"#,
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let export = pgrig(dir.path(), &["results", "export", "--format", "json"]);
    let runs: Vec<Value> = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(runs.len(), 2, "{}", export.stdout);
    let mut transports = Vec::new();
    for r in &runs {
        let shown = pgrig(dir.path(), &["results", "show", &r["run_id"].to_string()]);
        let v: Value = serde_json::from_str(&shown.stdout).unwrap();
        let target = &v["provenance"]["target"];
        transports.push((target["name"].to_string(), target["tcp"].clone()));
        assert!(!shown.stdout.contains("password"), "{}", shown.stdout);
    }
    transports.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        transports,
        [
            ("\"socket\"".to_string(), Value::Bool(false)),
            ("\"tcp\"".to_string(), Value::Bool(true))
        ]
    );
}

#[test]
fn tcp_on_an_external_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"x\"\n[target]\nurl = \"postgresql://h/db\"\ntcp = true\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("tcp applies to a throwaway server"),
        "{}",
        out.stderr
    );
}
