//! `pgrig k8s manifest`: the Kubernetes objects of a segmented run, for `kubectl apply -f -`:
//! the workers as an Indexed Job (`completionMode: Indexed`, the pod's completion index is its
//! segment), the coordinator as a Job of one pod (`pgrig bench --segments N`), resource requests
//! and limits, the target's password from a Secret (`secretKeyRef`, never in the manifest) and
//! pod anti-affinity so segments land on different nodes. Written as YAML (block style, every
//! string double-quoted); the coordination schema lives in the target database.

use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(
    name = "pgrig k8s manifest",
    about = "Kubernetes Jobs for a run from N client pods: an Indexed Job of workers and the coordinator",
    after_help = "Everything after `--` is the run's pgbench options, e.g. `-- -c 64 -j 8 -T 300 -S`."
)]
pub struct ManifestArgs {
    /// Number of worker pods (segments).
    #[arg(long, value_name = "N")]
    pub segments: u32,
    /// Container image with the pgrig binary on its PATH.
    #[arg(long, value_name = "IMAGE")]
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
    /// Name prefix of the objects.
    #[arg(long, default_value = "pgrig")]
    pub name: String,
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
    /// The run's pgbench options.
    #[arg(last = true, value_name = "PGBENCH OPTIONS")]
    pub bench: Vec<String>,
}

pub fn main(args: &[String]) -> i32 {
    match args.get(1).map(String::as_str) {
        Some("manifest") => {}
        _ => {
            eprintln!("pgrig: error: usage: pgrig k8s manifest --segments N --image IMAGE --target-secret NAME [-- PGBENCH OPTIONS]");
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
    if a.bench.iter().any(|s| pgrig_wire::mask_passwords(s) != *s) {
        return Err(
            "a password among the pgbench options would be written into the manifest: \
                    it comes from --target-secret"
                .into(),
        );
    }
    let docs = [workers_job(a), coordinator_job(a)];
    Ok(docs
        .iter()
        .map(|d| format!("---\n{}", yaml(d, 0)))
        .collect())
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

fn metadata(a: &ManifestArgs, name: &str, role: &str) -> Value {
    let mut m = json!({"name": name, "labels": labels(a, role)});
    if let Some(ns) = &a.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

fn labels(a: &ManifestArgs, role: &str) -> Value {
    json!({"app.kubernetes.io/name": "pgrig", "app.kubernetes.io/instance": a.name,
           "app.kubernetes.io/component": role})
}

fn resources(a: &ManifestArgs) -> Value {
    let r = json!({"cpu": a.cpu, "memory": a.memory});
    json!({"requests": r, "limits": r})
}

fn anti_affinity(a: &ManifestArgs) -> Value {
    let term = json!({
        "labelSelector": {"matchLabels": labels(a, "worker")},
        "topologyKey": "kubernetes.io/hostname",
    });
    if a.soft_anti_affinity {
        json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": term}]}})
    } else {
        json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    }
}

fn job(a: &ManifestArgs, name: &str, role: &str, spec: Value, pod: Value) -> Value {
    let mut spec = spec;
    spec["backoffLimit"] = json!(0);
    spec["template"] = json!({"metadata": {"labels": labels(a, role)}, "spec": pod});
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(a, name, role),
           "spec": spec})
}

fn container(a: &ManifestArgs, name: &str, args: Vec<String>) -> Value {
    json!({"name": name, "image": a.image, "command": ["pgrig"], "args": args,
           "env": env(a, name == "worker"), "resources": resources(a)})
}

fn workers_job(a: &ManifestArgs) -> Value {
    let n = a.segments;
    let args = vec![
        "worker".to_string(),
        "--segment".into(),
        format!("$(SEGMENT)/{n}"),
        "--coordinator".into(),
        COORDINATOR.into(),
    ];
    let pod = json!({
        "restartPolicy": "Never",
        "affinity": anti_affinity(a),
        "containers": [container(a, "worker", args)],
    });
    let spec = json!({"completionMode": "Indexed", "completions": n, "parallelism": n});
    job(a, &format!("{}-workers", a.name), "worker", spec, pod)
}

fn coordinator_job(a: &ManifestArgs) -> Value {
    let mut args = vec![
        "bench".to_string(),
        "--segments".into(),
        a.segments.to_string(),
        "--coordinator".into(),
        COORDINATOR.into(),
    ];
    args.extend(a.bench.iter().cloned());
    let mut c = container(a, "coordinator", args);
    c["resources"] = json!({"requests": {"cpu": "250m", "memory": "256Mi"},
                            "limits": {"cpu": "1", "memory": "256Mi"}});
    let pod = json!({"restartPolicy": "Never", "containers": [c]});
    job(
        a,
        &format!("{}-coordinator", a.name),
        "coordinator",
        json!({}),
        pod,
    )
}

/// `v` as block-style YAML at `indent` spaces; strings double-quoted (JSON's escapes are YAML's).
fn yaml(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push_str(&format!("{pad}{}:", key(k)));
                out.push_str(&nested(v, indent));
            }
        }
        Value::Array(items) => {
            for v in items {
                out.push_str(&format!("{pad}-"));
                out.push_str(&nested(v, indent));
            }
        }
        scalar => out.push_str(&format!("{pad}{scalar}\n")),
    }
    out
}

/// A mapping key: plain when it is a simple name (`app.kubernetes.io/name`), else quoted.
fn key(k: &str) -> String {
    let plain = k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    if plain {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A value after `key:` or `-`: a scalar on the same line, a collection below, indented.
fn nested(v: &Value, indent: usize) -> String {
    match v {
        Value::Object(m) if !m.is_empty() => format!("\n{}", yaml(v, indent + 2)),
        Value::Array(a) if !a.is_empty() => format!("\n{}", yaml(v, indent + 2)),
        Value::Object(_) => " {}\n".into(),
        Value::Array(_) => " []\n".into(),
        scalar => format!(" {scalar}\n"),
    }
}
