//! The Kubernetes objects of `pgrig k8s manifest` (a segmented run), as JSON values for
//! `k8s_yaml`: the workers as an Indexed Job (`completionMode: Indexed`, the pod's completion
//! index is its segment), the coordinator as a Job of one pod, resource requests and limits,
//! the target's password from a Secret (`secretKeyRef`, never in the manifest), pod
//! anti-affinity so segments land on different nodes, both Jobs ended by
//! `activeDeadlineSeconds` and deleted `ttlSecondsAfterFinished` later; for a sysbench Lua
//! script's run a ConfigMap holding the script (first), mounted read-only at [`MOUNT`] in every
//! pod. Built from options already checked (`k8s_check`; the cli's `k8s` reads and checks them).

use serde_json::{json, Value};

use crate::k8s_lua_files::LuaFile;

/// Where a Lua run's ConfigMap is mounted (read-only) in every pod.
pub const MOUNT: &str = "/etc/pgrig/lua";

/// The manifest's options, checked (`pgrig k8s manifest`'s command line as plain data).
#[derive(Clone, Debug)]
pub struct Spec {
    /// worker pods (segments)
    pub segments: u32,
    pub image: String,
    pub target_secret: String,
    pub target_secret_key: String,
    pub target_host: String,
    pub target_port: u16,
    pub target_db: String,
    pub target_user: String,
    /// name prefix of the objects
    pub name: String,
    pub ttl_after_finished: u32,
    /// the results store (default: the target database, [`STORE`])
    pub store: Option<String>,
    pub namespace: Option<String>,
    /// each worker pod's CPU and memory (requests and limits)
    pub cpu: String,
    pub memory: String,
    pub soft_anti_affinity: bool,
    /// the run's pgbench options (a Lua run's are in [`LuaObjects`])
    pub bench: Vec<String>,
}

/// One run's particulars: its id, the options digest workers match, the Jobs' deadline, and a
/// Lua script's run.
pub struct Run {
    pub id: String,
    pub digest: String,
    pub deadline_s: u64,
    pub lua: Option<LuaObjects>,
}

/// What a sysbench Lua script's run puts in the objects.
pub struct LuaObjects {
    /// the ConfigMap's files: the script first, then the modules
    pub files: Vec<LuaFile>,
    /// the worker container's arguments (its segment `$(SEGMENT)`)
    pub worker_args: Vec<String>,
    /// the coordinator container's arguments
    pub coordinator_args: Vec<String>,
}

/// The objects, in the order they are applied: a Lua run's ConfigMap, the workers' Indexed
/// Job, the coordinator's Job.
pub fn objects(a: &Spec, run: &Run) -> Vec<Value> {
    let mut docs = Vec::new();
    if let Some(l) = &run.lua {
        docs.push(config_map(a, run, l));
    }
    docs.extend([workers_job(a, run), coordinator_job(a, run)]);
    docs
}

/// The target's connection in libpq's environment; the password from the Secret.
fn env(a: &Spec, worker: bool) -> Value {
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
pub const COORDINATOR: &str = "host=$(PGHOST) port=$(PGPORT) dbname=$(PGDATABASE) user=$(PGUSER)";

fn metadata(a: &Spec, run: &Run, name: &str, role: &str) -> Value {
    let mut m = json!({"name": name, "labels": labels(a, run, role)});
    if let Some(ns) = &a.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

fn labels(a: &Spec, run: &Run, role: &str) -> Value {
    json!({"app.kubernetes.io/name": "pgrig",
           "app.kubernetes.io/instance": format!("{}-{}", a.name, run.id),
           "app.kubernetes.io/component": role})
}

fn resources(a: &Spec) -> Value {
    let r = json!({"cpu": a.cpu, "memory": a.memory});
    json!({"requests": r, "limits": r})
}

fn anti_affinity(a: &Spec, run: &Run) -> Value {
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

fn job(a: &Spec, run: &Run, role: &str, spec: Value, pod: Value) -> Value {
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

fn container(a: &Spec, name: &str, args: Vec<String>) -> Value {
    json!({"name": name, "image": a.image, "command": ["pgrig"], "args": args,
           "env": env(a, name == "worker"), "resources": resources(a)})
}

/// Where a worker pod writes `-l` logs (an emptyDir volume).
const LOG_DIR: &str = "/var/log/pgrig";

/// The ConfigMap holding a Lua run's script and modules (file names the keys), mounted in
/// every pod.
fn config_map(a: &Spec, run: &Run, l: &LuaObjects) -> Value {
    let name = script_map_name(a, run);
    let data: serde_json::Map<String, Value> = (l.files.iter())
        .map(|f| (f.key.clone(), json!(f.text)))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": metadata(a, run, &name, "script"),
           "data": data})
}

fn script_map_name(a: &Spec, run: &Run) -> String {
    format!("{}-{}-script", a.name, run.id)
}

/// The script's volume and its read-only mount, for a Lua run's pods.
fn script_volume(a: &Spec, run: &Run) -> (Value, Value) {
    let volume = json!({"name": "script", "configMap": {"name": script_map_name(a, run)}});
    let mount = json!({"name": "script", "mountPath": MOUNT, "readOnly": true});
    (volume, mount)
}

fn workers_job(a: &Spec, run: &Run) -> Value {
    let n = a.segments;
    let spec = json!({"completionMode": "Indexed", "completions": n, "parallelism": n});
    if let Some(l) = &run.lua {
        let mut c = container(a, "worker", l.worker_args.clone());
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

/// The coordinator's `--store`: `--store` `$`-escaped, else [`STORE`].
pub fn store_url(store: Option<&str>) -> String {
    store.map_or(STORE.to_string(), crate::k8s_check::escape_dollars)
}

fn coordinator_job(a: &Spec, run: &Run) -> Value {
    let store = store_url(a.store.as_deref());
    if let Some(l) = &run.lua {
        let mut c = coordinator_container(a, l.coordinator_args.clone());
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
    args.extend(a.bench.iter().map(|o| crate::k8s_check::escape_dollars(o)));
    let pod = json!({"restartPolicy": "Never", "containers": [coordinator_container(a, args)]});
    job(a, run, "coordinator", json!({}), pod)
}

/// The coordinator's container: it runs no client, so a small one.
fn coordinator_container(a: &Spec, args: Vec<String>) -> Value {
    let mut c = container(a, "coordinator", args);
    c["resources"] = json!({"requests": {"cpu": "250m", "memory": "256Mi"},
                            "limits": {"cpu": "1", "memory": "256Mi"}});
    c
}
