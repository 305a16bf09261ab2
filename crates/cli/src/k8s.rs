//! `pgrig k8s manifest`: the Kubernetes objects of a segmented run, for `kubectl apply -f -`:
//! the workers as an Indexed Job (`completionMode: Indexed`, the pod's completion index is its
//! segment), the coordinator as a Job of one pod (`pgrig bench --segments N`), resource requests
//! and limits, the target's password from a Secret (`secretKeyRef`, never in the manifest) and
//! pod anti-affinity so segments land on different nodes. Written as YAML (block style, every
//! string double-quoted); the coordination schema lives in the target database, and so does
//! the results store the coordinator writes the merged run to (`--store`), so the result
//! outlives the pods. Every object's name carries the run's id (`--run-id`, default: made up
//! from the clock), workers join only a run with these options (`--options-digest`), both Jobs
//! end by `activeDeadlineSeconds` and are deleted `ttlSecondsAfterFinished` later. Everything is
//! checked before anything is printed (`pgrig_fleet::k8s_check`). With `--lua-script FILE` the run is
//! a sysbench Lua script's (`crate::k8s_lua`): a ConfigMap holding the script comes first,
//! mounted read-only in every pod; the workers run `pgrig worker --lua-script`, the coordinator
//! `pgrig sysbench SCRIPT --segments=N ... run`. The YAML text: `pgrig_fleet::k8s_yaml`.

use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(
    name = "pgrig k8s manifest",
    about = "Kubernetes Jobs for a run from N client pods: an Indexed Job of workers and the coordinator",
    after_help = "Everything after `--` is the run's pgbench options, e.g. `-- -c 64 -j 8 -T 300 -S`; \
                  with --lua-script, sysbench's run and script options, e.g. `-- --threads=64 --time=300 --tables=8`."
)]
pub struct ManifestArgs {
    /// Number of worker pods (segments).
    #[arg(long, value_name = "N")]
    pub segments: u32,
    /// Container image with the pgrig binary on its PATH (built from the repository's
    /// Containerfile: `podman build -t pgrig:VERSION -f Containerfile .`).
    #[arg(long, value_name = "IMAGE", default_value = concat!("pgrig:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// Secret holding the target's password (key: --target-secret-key).
    #[arg(long, value_name = "NAME")]
    pub target_secret: String,
    #[arg(long, value_name = "KEY", default_value = "password")]
    pub target_secret_key: String,
    /// The target server's host (a Service name).
    #[arg(long, value_name = "HOST", default_value = "postgres")]
    pub target_host: String,
    #[arg(long, value_name = "PORT", default_value_t = 5432)]
    pub target_port: u16,
    #[arg(long, value_name = "DB", default_value = "postgres")]
    pub target_db: String,
    #[arg(long, value_name = "USER", default_value = "postgres")]
    pub target_user: String,
    /// Name prefix of the objects (a Kubernetes name, at most 40 characters).
    #[arg(long, default_value = "pgrig")]
    pub name: String,
    /// This run's id, in every object's name (lowercase letters and digits, at most 8;
    /// default: made up from the clock and the process id), so runs never collide.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// The Jobs' activeDeadlineSeconds (default: the run's -T plus 15 minutes, else 1 hour).
    #[arg(long, value_name = "SEC")]
    pub active_deadline: Option<u64>,
    /// The Jobs' ttlSecondsAfterFinished: finished pods are deleted this much later (the
    /// merged run is in the results store).
    #[arg(long, value_name = "SEC", default_value_t = 86_400)]
    pub ttl_after_finished: u32,
    /// Results store the coordinator writes the merged run to (default: the target database,
    /// as postgresql://$(PGUSER)@$(PGHOST):$(PGPORT)/$(PGDATABASE)); no password in it.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    #[arg(long)]
    pub namespace: Option<String>,
    /// CPU request (and limit) of each worker pod.
    #[arg(long, default_value = "2")]
    pub cpu: String,
    /// Memory request (and limit) of each worker pod.
    #[arg(long, default_value = "1Gi")]
    pub memory: String,
    /// Prefer, rather than require, one worker per node (for clusters with fewer nodes).
    #[arg(long)]
    pub soft_anti_affinity: bool,
    /// A sysbench Lua script: the run is `pgrig sysbench FILE --segments=N ... run`, the script
    /// in a ConfigMap mounted in every pod, and the options after `--` are sysbench's.
    #[arg(long, value_name = "FILE")]
    pub lua_script: Option<std::path::PathBuf>,
    /// A module the script requires (repeatable), put beside it in the ConfigMap, e.g.
    /// /usr/share/sysbench/oltp_common.lua for sysbench's oltp_*.lua scripts.
    #[arg(long, value_name = "FILE", requires = "lua_script")]
    pub lua_module: Vec<std::path::PathBuf>,
    /// The run's pgbench options (with --lua-script: sysbench's run and script options).
    #[arg(last = true, value_name = "PGBENCH OPTIONS")]
    pub bench: Vec<String>,
}

pub fn main(args: &[String]) -> i32 {
    match args.get(1).map(String::as_str) {
        Some("manifest") => {}
        _ => {
            eprintln!("pgrig: error: usage: pgrig k8s manifest --segments N --image IMAGE --target-secret NAME [--lua-script FILE] [-- PGBENCH OR SYSBENCH OPTIONS]");
            return 1;
        }
    }
    let a: ManifestArgs = match crate::own_args::parse(&args[1..]) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match manifest(&a) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            1
        }
    }
}

/// The YAML stream: the workers' Indexed Job, then the coordinator's Job.
pub fn manifest(a: &ManifestArgs) -> Result<String, String> {
    if a.segments == 0 {
        return Err("--segments must be at least 1".into());
    }
    if a.bench.iter().any(|s| pgrig_wire::mask_passwords(s) != *s)
        || a.store
            .as_deref()
            .is_some_and(|s| pgrig_wire::mask_passwords(s) != s)
    {
        return Err(
            "a password among the options after -- or in --store would be written into the \
             manifest: it comes from --target-secret"
                .into(),
        );
    }
    let run = check(a)?;
    for w in run.lua.iter().flat_map(|l| &l.warnings) {
        eprintln!("pgrig: warning: {w}");
    }
    let mut docs = Vec::new();
    if let Some(l) = &run.lua {
        docs.push(config_map(a, &run, l));
    }
    docs.extend([workers_job(a, &run), coordinator_job(a, &run)]);
    Ok(docs
        .iter()
        .map(|d| format!("---\n{}", pgrig_fleet::k8s_yaml::yaml(d, 0)))
        .collect())
}

/// One run's particulars: its id, the options digest workers match, the Jobs' deadline, and a
/// Lua script's run.
struct Run {
    id: String,
    digest: String,
    deadline_s: u64,
    lua: Option<crate::k8s_lua::LuaRun>,
}

/// Every option checked ([`pgrig_fleet::k8s_check`]); the run's particulars.
fn check(a: &ManifestArgs) -> Result<Run, String> {
    use pgrig_fleet::k8s_check as k;
    k::label("--name", &a.name, 40)?;
    if let Some(ns) = &a.namespace {
        k::label("--namespace", ns, 63)?;
    }
    k::subdomain("--target-secret", &a.target_secret)?;
    k::secret_key(&a.target_secret_key)?;
    k::conn_word("--target-host", &a.target_host)?;
    k::conn_word("--target-db", &a.target_db)?;
    k::conn_word("--target-user", &a.target_user)?;
    k::quantity("--cpu", &a.cpu)?;
    k::quantity("--memory", &a.memory)?;
    k::image(&a.image)?;
    let id = a.run_id.clone().unwrap_or_else(made_up_id);
    if id.is_empty()
        || id.len() > 8
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        return Err(format!(
            "--run-id \"{id}\": 1 to 8 lowercase letters or digits"
        ));
    }
    let (digest, seconds, lua) = match &a.lua_script {
        None => {
            let (digest, seconds) = k::bench_options(a.segments, &a.bench)?;
            (digest, seconds, None)
        }
        Some(file) => {
            let given = (file.as_path(), a.lua_module.as_slice());
            let l = crate::k8s_lua::LuaRun::read(given, a.segments, &a.bench, &id)?;
            (l.digest.clone(), l.seconds, Some(l))
        }
    };
    let deadline_s = a
        .active_deadline
        .unwrap_or_else(|| seconds.map_or(3600, |t| t + 900));
    if deadline_s == 0 {
        return Err("--active-deadline must be at least 1".into());
    }
    Ok(Run {
        id,
        digest,
        deadline_s,
        lua,
    })
}

/// A run id from the clock and this process: the seconds since 2020 in base 36 (6 characters
/// until 2090) and two more from the process id, so two manifests made in one second differ.
fn made_up_id() -> String {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .saturating_sub(1_577_836_800);
    let pid = u64::from(std::process::id()) % (36 * 36);
    base36(s) + &format!("{:0>2}", base36(pid))
}

fn base36(mut n: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 || out.is_empty() {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The target's connection in libpq's environment; the password from the Secret.
fn env(a: &ManifestArgs, worker: bool) -> Value {
    let mut env = json!([
        {"name": "PGHOST", "value": a.target_host},
        {"name": "PGPORT", "value": a.target_port.to_string()},
        {"name": "PGDATABASE", "value": a.target_db},
        {"name": "PGUSER", "value": a.target_user},
        {"name": "PGPASSWORD", "valueFrom": {"secretKeyRef": {
            "name": a.target_secret, "key": a.target_secret_key}}},
    ]);
    if worker {
        // the pod's completion index, as the Job controller annotates it
        let index = "metadata.annotations['batch.kubernetes.io/job-completion-index']";
        let var = json!({"name": "SEGMENT", "valueFrom": {"fieldRef": {"fieldPath": index}}});
        env.as_array_mut().expect("a list").push(var);
    }
    env
}

/// The coordination database: the target's, from the environment (no password in it).
const COORDINATOR: &str = "host=$(PGHOST) port=$(PGPORT) dbname=$(PGDATABASE) user=$(PGUSER)";

fn metadata(a: &ManifestArgs, run: &Run, name: &str, role: &str) -> Value {
    let mut m = json!({"name": name, "labels": labels(a, run, role)});
    if let Some(ns) = &a.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

fn labels(a: &ManifestArgs, run: &Run, role: &str) -> Value {
    json!({"app.kubernetes.io/name": "pgrig",
           "app.kubernetes.io/instance": format!("{}-{}", a.name, run.id),
           "app.kubernetes.io/component": role})
}

fn resources(a: &ManifestArgs) -> Value {
    let r = json!({"cpu": a.cpu, "memory": a.memory});
    json!({"requests": r, "limits": r})
}

fn anti_affinity(a: &ManifestArgs, run: &Run) -> Value {
    let term = json!({
        "labelSelector": {"matchLabels": labels(a, run, "worker")},
        "topologyKey": "kubernetes.io/hostname",
    });
    if a.soft_anti_affinity {
        json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": term}]}})
    } else {
        json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    }
}

fn job(a: &ManifestArgs, run: &Run, role: &str, spec: Value, pod: Value) -> Value {
    let mut spec = spec;
    spec["backoffLimit"] = json!(0);
    spec["activeDeadlineSeconds"] = json!(run.deadline_s);
    spec["ttlSecondsAfterFinished"] = json!(a.ttl_after_finished);
    spec["template"] = json!({"metadata": {"labels": labels(a, run, role)}, "spec": pod});
    let what = if role == "worker" { "workers" } else { role };
    let name = format!("{}-{}-{what}", a.name, run.id);
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(a, run, &name, role),
           "spec": spec})
}

fn container(a: &ManifestArgs, name: &str, args: Vec<String>) -> Value {
    json!({"name": name, "image": a.image, "command": ["pgrig"], "args": args,
           "env": env(a, name == "worker"), "resources": resources(a)})
}

/// Where a worker pod writes `-l` logs (an emptyDir volume).
const LOG_DIR: &str = "/var/log/pgrig";

/// The ConfigMap holding a Lua run's script and modules (file names the keys), mounted in
/// every pod.
fn config_map(a: &ManifestArgs, run: &Run, l: &crate::k8s_lua::LuaRun) -> Value {
    let name = script_map_name(a, run);
    let data: serde_json::Map<String, Value> = (l.files.iter())
        .map(|f| (f.key.clone(), json!(f.text)))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": metadata(a, run, &name, "script"),
           "data": data})
}

fn script_map_name(a: &ManifestArgs, run: &Run) -> String {
    format!("{}-{}-script", a.name, run.id)
}

/// The script's volume and its read-only mount, for a Lua run's pods.
fn script_volume(a: &ManifestArgs, run: &Run) -> (Value, Value) {
    let volume = json!({"name": "script", "configMap": {"name": script_map_name(a, run)}});
    let mount = json!({"name": "script", "mountPath": crate::k8s_lua::MOUNT, "readOnly": true});
    (volume, mount)
}

fn workers_job(a: &ManifestArgs, run: &Run) -> Value {
    let n = a.segments;
    let spec = json!({"completionMode": "Indexed", "completions": n, "parallelism": n});
    if let Some(l) = &run.lua {
        let mut c = container(a, "worker", l.worker_args("$(SEGMENT)", n, COORDINATOR));
        let (volume, mount) = script_volume(a, run);
        c["volumeMounts"] = json!([mount]);
        let pod = json!({"restartPolicy": "Never", "affinity": anti_affinity(a, run),
                         "containers": [c], "volumes": [volume]});
        return job(a, run, "worker", spec, pod);
    }
    let args = vec![
        "worker".to_string(),
        "--segment".into(),
        format!("$(SEGMENT)/{n}"),
        "--coordinator".into(),
        COORDINATOR.into(),
        "--options-digest".into(),
        run.digest[..16].to_string(),
        "--log-dir".into(),
        LOG_DIR.into(),
    ];
    let mut c = container(a, "worker", args);
    c["volumeMounts"] = json!([{"name": "logs", "mountPath": LOG_DIR}]);
    let pod = json!({
        "restartPolicy": "Never",
        "affinity": anti_affinity(a, run),
        "containers": [c],
        "volumes": [{"name": "logs", "emptyDir": {}}],
    });
    job(a, run, "worker", spec, pod)
}

/// The results store in the target database (the password from PGPASSWORD).
const STORE: &str = "postgresql://$(PGUSER)@$(PGHOST):$(PGPORT)/$(PGDATABASE)";

fn coordinator_job(a: &ManifestArgs, run: &Run) -> Value {
    let store = a
        .store
        .as_deref()
        .map_or(STORE.to_string(), pgrig_fleet::k8s_check::escape_dollars);
    if let Some(l) = &run.lua {
        let args = l.coordinator_args(a.segments, COORDINATOR, &store);
        let mut c = coordinator_container(a, args);
        let (volume, mount) = script_volume(a, run);
        c["volumeMounts"] = json!([mount]);
        let pod = json!({"restartPolicy": "Never", "containers": [c], "volumes": [volume]});
        return job(a, run, "coordinator", json!({}), pod);
    }
    let mut args = vec![
        "bench".to_string(),
        "--segments".into(),
        a.segments.to_string(),
        "--coordinator".into(),
        COORDINATOR.into(),
        "--store".into(),
        store,
    ];
    // Kubernetes expands $(VAR) in args: the options reach pgrig as written
    args.extend(
        a.bench
            .iter()
            .map(|o| pgrig_fleet::k8s_check::escape_dollars(o)),
    );
    let pod = json!({"restartPolicy": "Never", "containers": [coordinator_container(a, args)]});
    job(a, run, "coordinator", json!({}), pod)
}

/// The coordinator's container: it runs no client, so a small one.
fn coordinator_container(a: &ManifestArgs, args: Vec<String>) -> Value {
    let mut c = container(a, "coordinator", args);
    c["resources"] = json!({"requests": {"cpu": "250m", "memory": "256Mi"},
                            "limits": {"cpu": "1", "memory": "256Mi"}});
    c
}
