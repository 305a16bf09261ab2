//! `pgrig k8s manifest --lua-script FILE -- [sysbench options]`: what a sysbench Lua script's
//! run brings to the manifest. The script (and the modules it requires, `--lua-module`) travel
//! in a ConfigMap (file names the keys, texts the values, byte for byte;
//! `pgrig_fleet::k8s_lua_files`), mounted read-only at [`MOUNT`] in every pod, so each worker runs
//! its own copy (`pgrig worker --lua-script`, the trust boundary of Lua runs) and the
//! coordinator hashes the same bytes. Refused before printing: sysbench options the
//! coordinator in the pod would refuse (checked by the coordinator's own rules,
//! `crate::sysbench::fleet_options`, plus: no connection option — the target comes from the
//! Secret and `--target-*` —, no pgrig option, no bare word). The run's `--rand-seed` is fixed
//! here (the given one, else one derived from the run id) so the options digest the workers
//! join by (`--options-digest`) is the one the coordinator will compute.

use std::path::Path;

use pgrig_fleet::lua_script::{self, ScriptRef};

use crate::sysbench::cmdline::CmdLine;
use crate::sysbench::general::{Exit, General};
use crate::sysbench::options::{self, Section};
use crate::sysbench::script::SCRIPT_DIR;
use pgrig_fleet::k8s_lua_files::{self as files, LuaFile};

/// Where the script's ConfigMap is mounted (read-only) in every pod.
pub use pgrig_fleet::k8s_objects::MOUNT;

/// Client-side `kubectl apply` keeps a copy of the object in an annotation; annotations are
/// limited to 256 KiB in all.
const ANNOTATION_MAX: u64 = 256 << 10;

/// A Lua script's run, checked: the script and the coordinator's options.
pub struct LuaRun {
    /// the ConfigMap's files: the script first, then the modules
    pub files: Vec<LuaFile>,
    /// the sysbench options as the coordinator gets them (`--rand-seed` fixed)
    options: Vec<String>,
    /// the options digest the coordinator will compute
    pub digest: String,
    /// the run's `--time`, if it has one
    pub seconds: Option<u64>,
    /// said on standard error, the manifest still printed
    pub warnings: Vec<String>,
}

impl LuaRun {
    /// The script at `file` (and `modules`) and the sysbench options `opts` of a run over
    /// `segments` pods with id `run_id`, checked.
    pub fn read(
        (file, modules): (&Path, &[std::path::PathBuf]),
        segments: u32,
        opts: &[String],
        run_id: &str,
    ) -> Result<LuaRun, String> {
        let files = files::read(file, modules)?;
        let pod = pod_path(&files[0].key);
        let (c, general) = parse(&pod, opts)?;
        check_segments(segments, &general)?;
        let mut options = opts.to_vec();
        let seed = if general.rand_seed != 0 {
            general.rand_seed
        } else {
            let seed = seed_of(run_id);
            options.push(format!("--rand-seed={seed}"));
            seed
        };
        let (stored, dropped) = crate::sysbench::fleet_options::for_workers(&c, seed)
            .map_err(|e| format!("the sysbench options: {e}"))?;
        if !dropped.is_empty() {
            return Err(format!(
                "the sysbench options: {}: a connection option is not taken here: the pods \
                 connect to --target-host, --target-port, --target-db as --target-user, the \
                 password from --target-secret",
                dropped.join(", ")
            ));
        }
        script_options_known(file, &c, &general)?;
        let scripts = ScriptRef::of(Path::new(&pod), files[0].text.as_bytes()).encode();
        let digest = pgrig_fleet::protocol::options_digest(segments, &stored, &scripts);
        let mut warnings = files::unanswered_requires(&files, file, Path::new(SCRIPT_DIR));
        let size: usize = files.iter().map(|f| f.text.len()).sum();
        if size as u64 > ANNOTATION_MAX {
            warnings.push(format!(
                "--lua-script {}: the ConfigMap holds {size} bytes: client-side `kubectl apply` \
                 keeps a copy in an annotation limited to 256 KiB; apply with `kubectl apply \
                 --server-side` or `kubectl create`",
                file.display()
            ));
        }
        Ok(LuaRun {
            files,
            options,
            digest,
            seconds: (general.time > 0).then_some(general.time),
            warnings,
        })
    }

    /// The worker's arguments (`segment`: the `$(VAR)` of the pod's completion index).
    pub fn worker_args(&self, segment: &str, n: u32, coordinator: &str) -> Vec<String> {
        [
            "worker",
            "--segment",
            &format!("{segment}/{n}"),
            "--coordinator",
            coordinator,
            "--options-digest",
            &self.digest[..16],
            "--lua-script",
            &pod_path(&self.files[0].key),
        ]
        .map(String::from)
        .to_vec()
    }

    /// The coordinator's arguments: `pgrig sysbench SCRIPT --segments=N ... OPTIONS run`, every
    /// `$` of the options doubled against Kubernetes' `$(VAR)` expansion (`store` is written
    /// for the pod already).
    pub fn coordinator_args(&self, n: u32, coordinator: &str, store: &str) -> Vec<String> {
        let mut args = vec![
            "sysbench".to_string(),
            pod_path(&self.files[0].key),
            format!("--segments={n}"),
            format!("--coordinator={coordinator}"),
            format!("--store={store}"),
        ];
        args.extend(
            self.options
                .iter()
                .map(|o| pgrig_fleet::k8s_check::escape_dollars(o)),
        );
        args.push("run".into());
        args
    }
}

/// The script's path in a pod.
fn pod_path(key: &str) -> String {
    format!("{MOUNT}/{key}")
}

/// The options as the coordinator in the pod parses them (`pgrig sysbench POD_PATH OPTIONS
/// run`), with sysbench's checks; refused: a bare word, `--test`, pgrig's own options (the
/// manifest sets `--segments`, `--coordinator` and `--store`).
fn parse(pod: &str, opts: &[String]) -> Result<(CmdLine, General), String> {
    if let Some(bare) = opts.iter().find(|o| !o.starts_with("--")) {
        return Err(format!(
            "the sysbench options: \"{}\" is not an option: after -- come sysbench's \
             --name=value options only (the script is --lua-script, the command is run)",
            pgrig_wire::mask_passwords(bare).escape_debug()
        ));
    }
    let mut argv = vec![pod.to_string()];
    argv.extend(opts.iter().cloned());
    argv.push("run".into());
    let c = CmdLine::parse(&argv).map_err(|u| format!("the sysbench options: {}", u.0))?;
    if c.deprecated_test {
        return Err("the sysbench options: --test: the script is --lua-script".into());
    }
    let pgrig: Vec<String> = (c.general.iter())
        .filter(|(n, _)| options::find(n).is_some_and(|o| o.section == Section::Pgrig))
        .map(|(n, _)| format!("--{n}"))
        .collect();
    if !pgrig.is_empty() {
        return Err(format!(
            "the sysbench options: {}: pgrig's own option, not taken here (the manifest sets \
             --segments, --coordinator and --store: see --store of `pgrig k8s manifest`)",
            pgrig.join(", ")
        ));
    }
    let general = General::read(&c).map_err(|e| exit_message(&e))?;
    Ok((c, general))
}

fn exit_message(e: &Exit) -> String {
    let text = format!("{}{}", e.stdout, e.stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    format!("the sysbench options: {}", lines.join("; "))
}

/// The coordinator's checks of the split: a thread for every segment, an event for every
/// segment when `--events` is given.
fn check_segments(segments: u32, general: &General) -> Result<(), String> {
    use pgrig_lua::segment::{share_of, threads_of};
    if general.threads < segments {
        return Err(format!(
            "--segments {segments} needs at least {segments} threads (--threads={})",
            general.threads
        ));
    }
    if general.events > 0 {
        let starved = (0..segments).find(|&i| {
            let (first, n) = threads_of(i, segments, general.threads);
            share_of(general.events, first, n, general.threads) == 0
        });
        if let Some(i) = starved {
            return Err(format!(
                "--events={} leaves segment {i} of --segments {segments} no event",
                general.events
            ));
        }
    }
    Ok(())
}

/// The workers' rule for the script's own options: declared in `sysbench.cmdline.options`, or,
/// for a script without declarations, replacing none of its globals. The script is loaded to
/// read them (its top level runs, as `sysbench SCRIPT help` runs it), connecting nowhere.
fn script_options_known(file: &Path, c: &CmdLine, general: &General) -> Result<(), String> {
    if c.rest.is_empty() {
        return Ok(());
    }
    let path = file.to_string_lossy().into_owned();
    let args: Vec<String> = Vec::new();
    let inv = crate::sysbench::lua::invocation(
        (c, &args),
        (&path, &path, None),
        general,
        Default::default(),
    );
    let rule = pgrig_lua::script_options(inv)
        .map_err(|e| format!("--lua-script {path}: the script does not load: {e}"))?;
    for (name, _, raw) in &c.rest {
        let why = match &rule {
            pgrig_lua::ScriptOptions::Declared(names) if !names.contains(name) => {
                format!("not one of {path}'s options")
            }
            pgrig_lua::ScriptOptions::Globals { taken } if taken.contains(name) => {
                format!("would replace {path}'s global {name}")
            }
            _ => continue,
        };
        let shown = pgrig_wire::mask_passwords(raw);
        return Err(format!(
            "the sysbench options: {}: {why} (the workers would refuse it)",
            shown.escape_debug()
        ));
    }
    Ok(())
}

/// A seed from the run id (1 to 2^31-1): the same manifest for the same `--run-id`.
fn seed_of(run_id: &str) -> u32 {
    let hex = lua_script::digest(format!("pgrig k8s lua seed {run_id}").as_bytes());
    let n = u32::from_str_radix(&hex[..8], 16).unwrap_or(1);
    (n & 0x7fff_ffff).max(1)
}
