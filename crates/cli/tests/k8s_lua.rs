//! `pgrig k8s manifest --lua-script FILE -- [sysbench options]`: a sysbench Lua script's run over
//! N pods. The printed objects validate against the Kubernetes API schema
//! (`kubernetes-validate --strict`, PyPI; missing, the test fails), are read back by PyYAML
//! (kubernetes-validate's reader): the ConfigMap holds the script and its modules byte for byte
//! (SHA-256 by Python's hashlib against `sha256sum` of the file), the pods run the worker and
//! coordinator commands of a Lua run, and bad input is refused before anything is printed.
//! `k8s_lua_pods` runs the printed commands themselves.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A script declaring an option; every event writes a row with its thread id.
pub(crate) const SCRIPT: &str = r#"#!/usr/bin/env sysbench
-- a custom workload, run over several pods
sysbench.cmdline.options = { rows = {"rows per thread", 10}, label = {"a label", "x"} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE seen (tid int NOT NULL, n int NOT NULL)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", sysbench.tid,
                          sysbench.rand.uniform(1, sysbench.opt.rows)))
end
"#;

/// `pgrig k8s manifest --segments N --lua-script FILE ... EXTRA`.
pub(crate) fn manifest(segments: u32, file: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args(["k8s", "manifest", "--segments", &segments.to_string()])
        .args(["--image", "ghcr.io/example/pgrig:0.1", "--lua-script"])
        .arg(file)
        .args(["--target-secret", "pg-bench"])
        .args(extra)
        .output()
        .expect("pgrig")
}

pub(crate) fn script_in(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

/// The YAML stream as JSON documents, read by PyYAML (kubernetes-validate's own reader).
pub(crate) fn documents(yaml: &[u8]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.yaml");
    std::fs::write(&path, yaml).unwrap();
    let code = "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1], encoding='utf-8')))))";
    let out = Command::new("python3")
        .args(["-c", code])
        .arg(&path)
        .output()
        .expect("python3 with PyYAML (kubernetes-validate's dependency)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn ok(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    documents(&out.stdout)
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap()
}

pub(crate) fn pod(doc: &Value) -> &Value {
    &doc["spec"]["template"]["spec"]
}

#[test]
fn k8s_lua_manifest_validates_against_the_kubernetes_schema() {
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(dir.path(), "custom.lua", SCRIPT.as_bytes());
    let out = manifest(
        4,
        &file,
        &[
            "--namespace",
            "bench",
            "--",
            "--threads=64",
            "--time=300",
            "--rows=8",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.path().join("run.yaml");
    std::fs::write(&path, &out.stdout).unwrap();
    let v = Command::new("kubernetes-validate")
        .args(["--strict", "-k", "1.30.0"])
        .arg(&path)
        .output()
        .expect(
            "kubernetes-validate is the oracle: pip install kubernetes-validate (.ci/run does)",
        );
    let report =
        String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr);
    assert!(v.status.success(), "{report}");
    assert_eq!(
        report.matches("passed for resource job/").count(),
        2,
        "{report}"
    );
    assert_eq!(
        report.matches("passed for resource configmap/").count(),
        1,
        "{report}"
    );
}

/// Texts a YAML writer gets wrong easily: leading spaces on the first line, no final line
/// break, several, tabs, document markers, CRLF, characters YAML refuses raw or reads as line
/// breaks.
fn tricky_texts() -> Vec<(&'static str, String)> {
    vec![
        ("plain.lua", SCRIPT.to_string()),
        ("indented.lua", format!("   -- leading spaces\n{SCRIPT}")),
        ("no_newline.lua", SCRIPT.trim_end().to_string()),
        ("blank_tail.lua", format!("{SCRIPT}\n\n\n")),
        (
            "markers.lua",
            "--[[\n---\n...\n# not a comment\n  \n\t\tx: y\n]]\nfunction event() end\n".into(),
        ),
        ("crlf.lua", SCRIPT.replace('\n', "\r\n")),
        (
            "unicode.lua",
            "-- é ü 漢字 😀\nlocal s = \"a\u{2028}b\u{85}c\u{7f}\"\n\u{feff}\nfunction event() end\n"
                .into(),
        ),
        ("one_line.lua", "function event() end".into()),
    ]
}

#[test]
fn k8s_lua_config_map_holds_the_script_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in tricky_texts() {
        let file = script_in(dir.path(), name, text.as_bytes());
        let out = manifest(2, &file, &["--run-id", "r1", "--", "--threads=2"]);
        let docs = ok(&out);
        assert_eq!(docs.len(), 3, "{name}");
        let cm = &docs[0];
        assert_eq!(cm["kind"], "ConfigMap", "{name}");
        let data = cm["data"].as_object().unwrap();
        assert_eq!(data.len(), 1, "{name}");
        let held = data[name]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no key"));
        assert!(held.as_bytes() == text.as_bytes(), "{name}: {held:?}");
        // SHA-256 of the ConfigMap's value (Python) against the file's (sha256sum)
        let py = Command::new("python3")
            .args([
                "-c",
                "import sys, hashlib; print(hashlib.sha256(sys.argv[1].encode('utf-8', 'surrogatepass')).hexdigest())",
                held,
            ])
            .output()
            .unwrap();
        let sum = Command::new("sha256sum").arg(&file).output().unwrap();
        let file_sum = String::from_utf8_lossy(&sum.stdout);
        assert_eq!(
            String::from_utf8_lossy(&py.stdout).trim(),
            file_sum.split_whitespace().next().unwrap(),
            "{name}"
        );
        // the mounted volume is this ConfigMap
        for job in &docs[1..] {
            let vol = &pod(job)["volumes"][0]["configMap"]["name"];
            assert_eq!(vol, &cm["metadata"]["name"], "{name}");
        }
    }
}

#[test]
fn k8s_lua_pods_run_the_worker_and_the_coordinator_of_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(dir.path(), "custom.lua", SCRIPT.as_bytes());
    let docs = ok(&manifest(
        3,
        &file,
        &[
            "--run-id",
            "r42",
            "--target-host",
            "pg.bench.svc",
            "--",
            "--threads=64",
            "--time=300",
            "--rows=8",
            "--label=$(HOME)",
        ],
    ));
    let (cm, w, c) = (&docs[0], &docs[1], &docs[2]);
    assert_eq!(cm["metadata"]["name"], "pgrig-r42-script");
    assert_eq!(w["metadata"]["name"], "pgrig-r42-workers");
    assert_eq!(c["metadata"]["name"], "pgrig-r42-coordinator");
    assert_eq!(w["spec"]["completionMode"], "Indexed");
    assert_eq!(w["spec"]["completions"], 3);
    for d in [w, c] {
        assert_eq!(d["spec"]["activeDeadlineSeconds"], 1200);
        let mount = &pod(d)["containers"][0]["volumeMounts"][0];
        assert_eq!(mount["mountPath"], "/etc/pgrig/lua");
        assert_eq!(mount["readOnly"], true);
        assert_eq!(pod(d)["volumes"][0]["name"], mount["name"]);
    }
    let coordinator = "host=$(PGHOST) port=$(PGPORT) dbname=$(PGDATABASE) user=$(PGUSER)";
    let wargs = strings(&pod(w)["containers"][0]["args"]);
    let digest = &wargs[6];
    assert_eq!(
        wargs,
        [
            "worker",
            "--segment",
            "$(SEGMENT)/3",
            "--coordinator",
            coordinator,
            "--options-digest",
            digest,
            "--lua-script",
            "/etc/pgrig/lua/custom.lua"
        ]
    );
    assert!(digest.len() == 16 && digest.chars().all(|c| c.is_ascii_hexdigit()));
    let cargs = strings(&pod(c)["containers"][0]["args"]);
    let seed = cargs[cargs.len() - 2].clone();
    assert!(seed.starts_with("--rand-seed="), "{cargs:?}");
    assert_eq!(
        cargs,
        [
            "sysbench",
            "/etc/pgrig/lua/custom.lua",
            "--segments=3",
            &format!("--coordinator={coordinator}"),
            "--store=postgresql://$(PGUSER)@$(PGHOST):$(PGPORT)/$(PGDATABASE)",
            "--threads=64",
            "--time=300",
            "--rows=8",
            "--label=$$(HOME)",
            &seed,
            "run"
        ]
    );
    // the password: from the Secret into the environment, never an argument
    for d in [w, c] {
        let cont = &pod(d)["containers"][0];
        let env = cont["env"].as_array().unwrap();
        let pw = env.iter().find(|e| e["name"] == "PGPASSWORD").unwrap();
        assert_eq!(pw["valueFrom"]["secretKeyRef"]["name"], "pg-bench");
        assert!(pw.get("value").is_none());
        let host = env.iter().find(|e| e["name"] == "PGHOST").unwrap();
        assert_eq!(host["value"], "pg.bench.svc");
        assert_eq!(cont["command"], serde_json::json!(["pgrig"]));
    }
    // the same run id, the same manifest (the seed is the run id's); another, another seed
    let again = ok(&manifest(
        3,
        &file,
        &["--run-id", "r42", "--", "--threads=64"],
    ));
    let other = ok(&manifest(
        3,
        &file,
        &["--run-id", "r43", "--", "--threads=64"],
    ));
    let seed_of = |d: &[Value]| {
        strings(&pod(&d[2])["containers"][0]["args"])
            .into_iter()
            .rev()
            .nth(1)
    };
    assert_eq!(seed_of(&again), Some(seed));
    assert_ne!(seed_of(&other), seed_of(&again));
    // a given seed is the run's
    let given = ok(&manifest(
        3,
        &file,
        &["--", "--threads=3", "--rand-seed=77"],
    ));
    let args = strings(&pod(&given[2])["containers"][0]["args"]);
    assert_eq!(
        args.iter().filter(|a| a.starts_with("--rand-seed")).count(),
        1
    );
    assert!(args.contains(&"--rand-seed=77".to_string()));
}

fn refused(file: &Path, extra: &[&str], needle: &str) -> String {
    let out = manifest(3, file, extra);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
    assert!(err.contains(needle), "{extra:?}: {err}");
    assert!(err.starts_with("pgrig: error: "), "{extra:?}: {err}");
    assert!(out.stdout.is_empty(), "{extra:?}: printed a manifest");
    err
}

#[test]
fn k8s_lua_manifest_refuses_bad_scripts_and_options_before_printing() {
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(dir.path(), "custom.lua", SCRIPT.as_bytes());
    let t = ["--", "--threads=6"];
    // the script
    refused(&dir.path().join("missing.lua"), &t, "--lua-script");
    refused(dir.path(), &t, "not a regular file");
    let big = script_in(dir.path(), "big.lua", &vec![b'-'; (1 << 20) + 1]);
    refused(&big, &t, "over a ConfigMap's limit of 1048576 bytes");
    let latin1 = script_in(
        dir.path(),
        "latin1.lua",
        b"-- caf\xe9\nfunction event() end\n",
    );
    refused(&latin1, &t, "not UTF-8");
    let spaced = script_in(dir.path(), "my script.lua", SCRIPT.as_bytes());
    refused(&spaced, &t, "is not a ConfigMap key");
    let broken = script_in(dir.path(), "broken.lua", b"function event(\n");
    refused(&broken, &["--", "--threads=6", "--rows=2"], "does not load");
    // the options, by the coordinator's rules
    refused(
        &file,
        &["--", "--threads=2"],
        "--segments 3 needs at least 3 threads",
    );
    refused(&file, &["--", "--threads=3", "--events=2"], "no event");
    refused(&file, &["--", "--threads=x"], "the sysbench options");
    refused(
        &file,
        &["--", "--threads=6", "run"],
        "\"run\" is not an option",
    );
    refused(
        &file,
        &["--", "--threads=6", "--tabels=8"],
        "--tabels=8: not one of",
    );
    refused(
        &file,
        &["--", "--threads=6", "--config-file=/etc/x"],
        "--config-file",
    );
    refused(&file, &["--", "--threads=6", "--test=other.lua"], "--test");
    refused(
        &file,
        &["--", "--threads=6", "--json=/tmp/x"],
        "pgrig's own option",
    );
    refused(
        &file,
        &["--", "--threads=6", "--segments=2"],
        "pgrig's own option",
    );
    refused(&file, &["--", "--threads=6", "--db-driver=mysql"], "pgsql");
    // connection options: the target comes from the Secret and --target-*
    refused(
        &file,
        &["--", "--threads=6", "--pgsql-host=db"],
        "--pgsql-host: a connection option",
    );
    let err = refused(
        &file,
        &["--", "--threads=6", "--pgsql-password=hunter2"],
        "--target-secret",
    );
    assert!(!err.contains("hunter2"), "{err}");
    let err = refused(
        &file,
        &["--", "--threads=6", "--rows=postgresql://u:hunter2@db/x"],
        "password",
    );
    assert!(!err.contains("hunter2"), "{err}");
    // the manifest's own checks hold for Lua runs too
    refused(
        &file,
        &["--name", "My_Bench", "--", "--threads=6"],
        "--name",
    );
}

/// sysbench's oltp_*.lua scripts `require("oltp_common")`: pgrig's image has no sysbench
/// script directory, so the manifest says to add the module, and takes it with --lua-module.
#[test]
fn k8s_lua_manifest_carries_the_modules_a_script_requires() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = Path::new("/usr/share/sysbench/oltp_read_write.lua");
    let common_lua = Path::new("/usr/share/sysbench/oltp_common.lua");
    assert!(
        shipped.is_file() && common_lua.is_file(),
        "sysbench's scripts are the oracle's: apt-get install sysbench (./test does)"
    );
    let file = script_in(
        dir.path(),
        "oltp_read_write.lua",
        &std::fs::read(shipped).unwrap(),
    );
    let opts = ["--", "--threads=8", "--tables=4", "--table-size=1000"];
    let out = manifest(2, &file, &opts);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("requires \"oltp_common\"")
            && err.contains("--lua-module /usr/share/sysbench/oltp_common.lua"),
        "{err}"
    );
    assert_eq!(ok(&out)[0]["data"].as_object().unwrap().len(), 1);
    let with = [&["--lua-module", common_lua.to_str().unwrap()][..], &opts].concat();
    let out = manifest(2, &file, &with);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = ok(&out);
    let data = docs[0]["data"].as_object().unwrap();
    let keys: Vec<&String> = data.keys().collect();
    assert_eq!(keys, ["oltp_common.lua", "oltp_read_write.lua"]);
    assert!(
        data["oltp_common.lua"].as_str().unwrap().as_bytes() == std::fs::read(common_lua).unwrap()
    );
    // the worker runs the script, not the module
    let wargs = strings(&pod(&docs[1])["containers"][0]["args"]);
    assert_eq!(wargs.last().unwrap(), "/etc/pgrig/lua/oltp_read_write.lua");
    // one name twice, and the limit counts every file
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let twin = script_in(&other, "oltp_read_write.lua", b"-- a twin\n");
    let err = refused(
        &file,
        &["--lua-module", twin.to_str().unwrap(), "--", "--threads=6"],
        "a second file named oltp_read_write.lua",
    );
    assert!(err.contains("--lua-module"), "{err}");
    let half = script_in(dir.path(), "half.lua", &vec![b'-'; 600 << 10]);
    let half2 = script_in(&other, "half2.lua", &vec![b'-'; 600 << 10]);
    refused(
        &half,
        &["--lua-module", half2.to_str().unwrap(), "--", "--threads=6"],
        "over its limit of 1048576 bytes (1 MiB) in all",
    );
}

/// 1 MiB exactly is a ConfigMap's limit, and taken; over 256 KiB client-side `kubectl apply`
/// fails on its annotation, which the warning says.
#[test]
fn k8s_lua_manifest_takes_a_1_mib_script_and_warns_about_client_side_apply() {
    let dir = tempfile::tempdir().unwrap();
    let line = "-- a long comment line of the script, to make it big ---------------------\n";
    let mut text = line.repeat((1 << 20) / line.len());
    text.push_str(&"-".repeat((1 << 20) - text.len() - 1));
    text.push('\n');
    assert_eq!(text.len(), 1 << 20);
    let file = script_in(dir.path(), "big.lua", text.as_bytes());
    let out = manifest(2, &file, &["--", "--threads=2"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("pgrig: warning: --lua-script"), "{err}");
    assert!(err.contains("kubectl apply --server-side"), "{err}");
    let docs = ok(&out);
    assert!(docs[0]["data"]["big.lua"].as_str() == Some(text.as_str()));
    let small = script_in(dir.path(), "small.lua", SCRIPT.as_bytes());
    let out = manifest(2, &small, &["--", "--threads=2"]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn k8s_lua_manifest_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(dir.path(), "oltp_custom.lua", SCRIPT.as_bytes());
    let out = manifest(
        2,
        &file,
        &[
            "--run-id",
            "snap1",
            "--target-host",
            "pg.bench.svc",
            "--",
            "--threads=16",
            "--time=60",
            "--rows=4",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    pgrig_testkit::snapshot::check(
        &dir,
        "k8s_lua_manifest.yaml",
        &String::from_utf8(out.stdout).unwrap(),
    );
}
