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
//! checked before anything is printed (`pgrig_fleet::k8s_check`); the objects are
//! `pgrig_fleet::k8s_objects`'. With `--lua-script FILE` the run is
//! a sysbench Lua script's (`crate::k8s_lua`): a ConfigMap holding the script comes first,
//! mounted read-only in every pod; the workers run `pgrig worker --lua-script`, the coordinator
//! `pgrig sysbench SCRIPT --segments=N ... run`. The YAML text: `pgrig_fleet::k8s_yaml`.

use clap::Parser;
use pgrig_fleet::k8s_objects::{self as objects, LuaObjects, Run, Spec};

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
    let (run, warnings) = check(a)?;
    for w in &warnings {
        eprintln!("pgrig: warning: {w}");
    }
    Ok(objects::objects(&spec(a), &run)
        .iter()
        .map(|d| format!("---\n{}", pgrig_fleet::k8s_yaml::yaml(d, 0)))
        .collect())
}

/// Every option checked ([`pgrig_fleet::k8s_check`]); the run's particulars and a Lua run's
/// warnings.
fn check(a: &ManifestArgs) -> Result<(Run, Vec<String>), String> {
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
    let (lua, warnings) = match lua {
        None => (None, Vec::new()),
        Some(l) => {
            let store = objects::store_url(a.store.as_deref());
            let lua = LuaObjects {
                worker_args: l.worker_args("$(SEGMENT)", a.segments, objects::COORDINATOR),
                coordinator_args: l.coordinator_args(a.segments, objects::COORDINATOR, &store),
                files: l.files,
            };
            (Some(lua), l.warnings)
        }
    };
    let run = Run {
        id,
        digest,
        deadline_s,
        lua,
    };
    Ok((run, warnings))
}

/// The checked options as the objects take them.
fn spec(a: &ManifestArgs) -> Spec {
    Spec {
        segments: a.segments,
        image: a.image.clone(),
        target_secret: a.target_secret.clone(),
        target_secret_key: a.target_secret_key.clone(),
        target_host: a.target_host.clone(),
        target_port: a.target_port,
        target_db: a.target_db.clone(),
        target_user: a.target_user.clone(),
        name: a.name.clone(),
        ttl_after_finished: a.ttl_after_finished,
        store: a.store.clone(),
        namespace: a.namespace.clone(),
        cpu: a.cpu.clone(),
        memory: a.memory.clone(),
        soft_anti_affinity: a.soft_anti_affinity,
        bench: a.bench.clone(),
    }
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
