//! The commands `pgrig k8s manifest --lua-script` prints, run without a cluster: the
//! coordinator's and the workers' `command`/`args` and `env` taken from the manifest, the
//! environment filled as the kubelet fills it (`PGPASSWORD` from the "Secret": the test server's
//! password; `SEGMENT` the completion index), `$(VAR)`/`$$` expanded as Kubernetes expands
//! them, the ConfigMap's data laid out as the kubelet mounts it (`..data` a link to a
//! timestamped directory, each key a link through it) in a local directory that stands for
//! `/etc/pgrig/lua`, against a test database over TCP. The runs are checked against the server.

use crate::common;
use crate::k8s_lua::{manifest, ok, pod, script_in, strings};
use crate::sysbench_common::{command, link};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pgrig_testkit::{CmdOutput, TestDb};
use serde_json::Value;

/// The e2e run's script: its event in a module, which the pods find beside the script.
pub(crate) const MAIN: &str = r#"local rows = require("seen_rows")
sysbench.cmdline.options = { rows = {"rows per thread", 10} }
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE seen (tid int NOT NULL, n int NOT NULL)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  rows.insert(con)
end
"#;
pub(crate) const MODULE: &str = r#"local M = {}
function M.insert(con)
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", sysbench.tid,
                          sysbench.rand.uniform(1, sysbench.opt.rows)))
end
return M
"#;

/// `$(VAR)` in a container's args as Kubernetes expands it: a variable of the container's
/// environment is replaced, `$$` is `$`, anything else stays as written.
fn expand(arg: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("$$") {
            out.push('$');
            rest = r;
        } else if let Some((name, r)) = rest
            .strip_prefix("$(")
            .and_then(|r| r.split_once(')'))
            .filter(|(n, _)| env.contains_key(*n))
        {
            out.push_str(&env[name]);
            rest = r;
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out + rest
}

/// A pod's environment: the manifest's values, `SEGMENT` the completion index, secrets from
/// `secret`.
fn pod_env(container: &Value, index: u32, secret: &str) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for e in container["env"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap().to_string();
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else if e["valueFrom"]["secretKeyRef"]["name"] == "pg-bench" {
            secret.to_string()
        } else {
            let path = e["valueFrom"]["fieldRef"]["fieldPath"].as_str().unwrap();
            assert!(path.contains("job-completion-index"), "{path}");
            index.to_string()
        };
        env.insert(name, value);
    }
    env
}

/// The ConfigMap's data as the kubelet mounts it: `..data` a link to a timestamped directory,
/// each key a link through `..data`.
fn mount_config_map(dir: &Path, cm: &Value) {
    let real = dir.join("..2026_11_26_08_00_00.000000001");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(real.file_name().unwrap(), dir.join("..data")).unwrap();
    for (key, text) in cm["data"].as_object().unwrap() {
        std::fs::write(real.join(key), text.as_str().unwrap()).unwrap();
        std::os::unix::fs::symlink(format!("..data/{key}"), dir.join(key)).unwrap();
    }
}

/// The printed commands of a pod: `pgrig ARGS` with the pod's environment (and nothing of the
/// test's `PG*`), the mount path replaced by `mount`.
fn pod_command(container: &Value, env: &BTreeMap<String, String>, mount: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    assert_eq!(container["command"], serde_json::json!(["pgrig"]));
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("PG")) {
            c.env_remove(&k);
        }
    }
    let local = mount.display().to_string();
    for a in strings(&container["args"]) {
        c.arg(expand(&a, env).replace("/etc/pgrig/lua", &local));
    }
    c.envs(env);
    c
}

/// The superuser's password from the test server's password file (the Secret's value).
fn secret(db: &pgrig_testkit::TestDb) -> String {
    let Some(passfile) = db.server().passfile() else {
        return String::new();
    };
    let line = std::fs::read_to_string(passfile).unwrap();
    let line = line.lines().next().unwrap().to_string();
    assert!(!line.contains('\\'), "an escaped password file line");
    line.splitn(5, ':').nth(4).unwrap().to_string()
}

/// `--target-*` naming `db` over TCP, as a Service and a Secret would.
fn target(db: &TestDb) -> Vec<String> {
    let server = db.server();
    [
        "--target-host",
        "127.0.0.1",
        "--target-port",
        &server.port().to_string(),
        "--target-user",
        server.user(),
        "--target-db",
        &db.name,
    ]
    .map(String::from)
    .to_vec()
}

/// The manifest's pods run: the coordinator, then `n` workers; their outputs (each finished
/// with status 0, the password never printed).
fn run_pods(db: &TestDb, docs: &[Value], dir: &Path, n: u32) -> (Vec<CmdOutput>, CmdOutput) {
    let mount = dir.join("mount");
    std::fs::create_dir(&mount).unwrap();
    mount_config_map(&mount, &docs[0]);
    let password = secret(db);
    let cc = &pod(&docs[2])["containers"][0];
    let coord = common::spawn_piped(pod_command(cc, &pod_env(cc, 0, &password), &mount));
    let wc = &pod(&docs[1])["containers"][0];
    let workers: Vec<_> = (0..n)
        .map(|i| common::spawn_piped(pod_command(wc, &pod_env(wc, i, &password), &mount)))
        .collect();
    let limit = std::time::Duration::from_secs(120);
    let ws: Vec<_> = (workers.into_iter())
        .map(|w| common::finish_within(w, limit))
        .collect();
    let c = common::finish_within(coord, limit);
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w.code, Some(0), "worker {i}:\n{}\n{}", w.stdout, w.stderr);
    }
    assert_eq!(c.code, Some(0), "coordinator:\n{}\n{}", c.stdout, c.stderr);
    assert!(c.stderr.contains("run stored as run"), "{}", c.stderr);
    for out in ws.iter().chain([&c]) {
        let printed = out.stdout.contains(&password) || out.stderr.contains(&password);
        assert!(password.is_empty() || !printed, "the password was printed");
    }
    (ws, c)
}

/// The first figure of the report line starting with `label`.
fn figure(report: &str, label: &str) -> u64 {
    let line = (report.lines())
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} line:\n{report}"));
    let n = line.split_whitespace().next().unwrap_or_default();
    n.parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn k8s_lua_manifest_commands_run_the_script_over_two_segments() {
    let _turn = common::alone();
    let db = pgrig_testkit::fresh_db("k8s_lua_run");
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(dir.path(), "custom.lua", MAIN.as_bytes());
    let module = script_in(dir.path(), "seen_rows.lua", MODULE.as_bytes());
    let prep = command(link(), &db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stdout)
    );
    let mut args = target(&db);
    args.extend(["--lua-module", module.to_str().unwrap(), "--"].map(String::from));
    args.extend(["--threads=3", "--events=301", "--time=0", "--rows=7"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let docs = ok(&manifest(2, &file, &args));
    assert_eq!(docs[0]["data"]["seen_rows.lua"], MODULE);
    let (ws, c) = run_pods(&db, &docs, dir.path(), 2);
    for w in &ws {
        assert!(
            w.stderr.contains("script custom.lua (sha256"),
            "{}",
            w.stderr
        );
    }
    // the server's rows against the merged report
    let rows: u64 = db.psql("SELECT count(*) FROM seen").trim().parse().unwrap();
    assert_eq!(rows, 301);
    assert_eq!(figure(&c.stdout, "transactions:"), rows);
    let tids = db.psql("SELECT string_agg(DISTINCT tid::text, ',') FROM seen");
    assert_eq!(tids.trim(), "0,1,2");
}

/// sysbench's own `oltp_read_write.lua` with its `oltp_common.lua` (`--lua-module`), as the
/// pods run it: the run completes over two segments with every event, its writes keep every
/// table's rows (each event deletes a row and inserts it back), and the report's write queries
/// are 4 per event (plus those of events restarted after an ignored error).
#[test]
fn k8s_lua_manifest_commands_run_sysbenchs_oltp_read_write_with_its_module() {
    let _turn = common::alone();
    let shipped = Path::new("/usr/share/sysbench");
    assert!(
        shipped.join("oltp_common.lua").is_file(),
        "sysbench's scripts are the oracle's: apt-get install sysbench (./test does)"
    );
    let db = pgrig_testkit::fresh_db("k8s_lua_oltp");
    let dir = tempfile::tempdir().unwrap();
    let file = script_in(
        dir.path(),
        "oltp_read_write.lua",
        &std::fs::read(shipped.join("oltp_read_write.lua")).unwrap(),
    );
    let module = shipped.join("oltp_common.lua");
    let size = ["--tables=2", "--table-size=500"];
    let prep = command(
        link(),
        &db,
        &[&[file.to_str().unwrap()][..], &size, &["prepare"]].concat(),
    )
    .output()
    .unwrap();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stdout)
    );
    let mut args = target(&db);
    args.extend(["--lua-module", module.to_str().unwrap(), "--"].map(String::from));
    // --time=0: the events alone end the run (sysbench's default 10 s would cut it on a loaded
    // machine)
    args.extend(["--threads=4", "--events=400", "--time=0", size[0], size[1]].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = manifest(2, &file, &args);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, c) = run_pods(&db, &ok(&out), dir.path(), 2);
    assert_eq!(figure(&c.stdout, "transactions:"), 400);
    for t in ["sbtest1", "sbtest2"] {
        let n = db.psql(&format!("SELECT count(*) FROM {t}"));
        assert_eq!(n.trim(), "500", "{t}");
    }
    // per event 20 statements (sysbench's oltp_read_write defaults: 14 reads, 2 updates, a
    // delete and an insert, BEGIN and COMMIT); an event that hit a deadlock or a duplicate key
    // (an ignored error) is rolled back and restarted: the statements it completed count, the
    // failed one only as an error (as in sysbench). A write that changed no row (a delete of
    // an id another thread deleted) counts as other, as sysbench's pgsql driver counts it, so
    // the classes' total is what holds
    let (writes, ignored) = (
        figure(&c.stdout, "write:"),
        figure(&c.stdout, "ignored errors:"),
    );
    let total = figure(&c.stdout, "read:") + writes + figure(&c.stdout, "other:");
    assert!(
        (400 * 20..400 * 20 + 20 * ignored + 1).contains(&total) && writes <= 400 * 4 + 4 * ignored,
        "{total} statements, {writes} writes, {ignored} ignored errors:\n{}",
        c.stdout
    );
}
