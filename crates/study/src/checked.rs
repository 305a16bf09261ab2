//! A study checked before anything runs (and by `--dry-run`): its plan expanded once, its data
//! resolved (setup files read and split), every point's scripts read — each script file once —
//! and the `bin_dir` of throwaway targets looked at, so a missing file fails before the first run
//! and the runner reads nothing again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use pgrig_engine::config::ScriptSource;

use crate::dataset::Dataset;
use crate::error::StudyError;
use crate::plan::{expand, target_at, Plan};
use crate::spec::Study;
use crate::workload::{LuaPoint, NativePoint};

/// A study ready to run.
#[derive(Debug, Clone)]
pub struct Checked {
    pub study: Study,
    /// The directory the study's relative paths are resolved against.
    pub base_dir: PathBuf,
    pub plan: Plan,
    pub dataset: Dataset,
    /// Each point's scripts, by point index.
    pub scripts: Vec<Vec<ScriptSource>>,
    /// Each point's native workload (`None`: scripts or queries), by point index.
    pub natives: Vec<Option<NativePoint>>,
    /// Each point's sysbench Lua script (`None`: none), by point index.
    pub luas: Vec<Option<LuaPoint>>,
}

/// Checks everything a run needs: keys, values, URLs, the dataset, files.
pub fn check(study: Study, base_dir: &Path) -> Result<Checked, StudyError> {
    let mut plan = expand(&study)?;
    find_versions(&study, &mut plan)?;
    let dataset = Dataset::resolve(&study, &plan, base_dir)?;
    let scripts = read_scripts(&study, &plan, base_dir)?;
    let natives = plan
        .points
        .iter()
        .map(|p| p.workload.native_point().transpose())
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| study.error_at(study.spec.workload_value_offset("workload"), m))?;
    let luas = lua_points(&study, &plan, base_dir)?;
    crate::query::check_machine(&study, &plan)?;
    check_bin_dirs(&study, &plan)?;
    Ok(Checked {
        study,
        base_dir: base_dir.to_path_buf(),
        plan,
        dataset,
        scripts,
        natives,
        luas,
    })
}

/// Every point's sysbench script, loaded once per script and options; an unknown option is
/// reported where it was written (its `options.NAME` matrix key, else the `options` table),
/// a script that does not load at the `sysbench` key.
fn lua_points(
    study: &Study,
    plan: &Plan,
    base_dir: &Path,
) -> Result<Vec<Option<LuaPoint>>, StudyError> {
    let mut seen: HashMap<String, LuaPoint> = HashMap::new();
    let mut out = Vec::with_capacity(plan.points.len());
    for p in &plan.points {
        let Some(script) = &p.workload.sysbench else {
            out.push(None);
            continue;
        };
        let key = format!("{script}\n{:?}", p.workload.options);
        if let Some(done) = seen.get(&key) {
            out.push(Some(done.clone()));
            continue;
        }
        match p.workload.lua_point(base_dir) {
            Some(Ok(lp)) => {
                seen.insert(key, lp.clone());
                out.push(Some(lp));
            }
            Some(Err((option, m))) => {
                let at = match study.spec.matrix.get(&format!("options.{option}")) {
                    Some((k, _)) if !option.is_empty() => k.span().start,
                    _ if option.is_empty() => study.spec.workload_value_offset("sysbench"),
                    _ => study.spec.workload_value_offset("options"),
                };
                return Err(study.error_at(at, m));
            }
            None => out.push(None),
        }
    }
    Ok(out)
}

/// Every point's scripts; an error points at the `scripts` (or `builtin`) key that names them.
fn read_scripts(
    study: &Study,
    plan: &Plan,
    base_dir: &Path,
) -> Result<Vec<Vec<ScriptSource>>, StudyError> {
    let mut texts: HashMap<PathBuf, String> = HashMap::new();
    let mut read = |path: &Path| -> std::io::Result<String> {
        if let Some(text) = texts.get(path) {
            return Ok(text.clone());
        }
        let text = crate::workload::read_script_file(path)?;
        texts.insert(path.to_path_buf(), text.clone());
        Ok(text)
    };
    let mut all = Vec::with_capacity(plan.points.len());
    let mut parsed = HashSet::new();
    for p in &plan.points {
        // a query point runs queries, not scripts: its files are checked here, read by `query`
        let read_point = match p.workload.is_query() {
            true => p.workload.query_sources(base_dir).map(|_| Vec::new()),
            false => p
                .workload
                .script_sources(base_dir, &mut read)
                .and_then(|s| parse_scripts(&s, &p.workload, &mut parsed).map(|()| s)),
        };
        match read_point {
            Ok(scripts) => all.push(scripts),
            Err(m) => {
                let key = match (p.workload.is_query(), p.workload.query.is_some()) {
                    (true, true) => "query",
                    (true, false) => "queries",
                    _ if p.workload.scripts.is_some() => "scripts",
                    _ => "builtin",
                };
                let at = match study.spec.matrix.get(key) {
                    Some((_, v)) => v.span().start,
                    None => study.spec.workload_value_offset(key),
                };
                return Err(study.error_at(at, format!("workload `{key}`: {m}")));
            }
        }
    }
    Ok(all)
}

/// Parses each script file as the engine will (with the point's protocol), so that `--dry-run`
/// finds a syntax error too; each file and protocol once. The error is pgbench's
/// (`FILE:LINE: syntax error ...`).
fn parse_scripts(
    sources: &[ScriptSource],
    workload: &crate::workload::WorkloadSpec,
    parsed: &mut HashSet<(String, String)>,
) -> Result<(), String> {
    let mode = workload.mode()?;
    for src in sources {
        let ScriptSource::File { path, text, .. } = src else {
            continue;
        };
        if !parsed.insert((path.clone(), workload.protocol.clone())) {
            continue;
        }
        let mut vars = pgrig_script::VarTable::new();
        pgrig_script::parse::parse_script(path, text, &mut vars, mode, &mut 0)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `[matrix] server_version`: each version's binaries (see `pgrig_lab::versions`) become its
/// targets' `bin_dir`; a version not found is an error at the value, naming where pgrig looked.
fn find_versions(study: &Study, plan: &mut Plan) -> Result<(), StudyError> {
    for t in plan.targets.iter_mut() {
        let Some((major, at)) = t.server_version else {
            continue;
        };
        let found = pgrig_lab::versions::find_major(major).map_err(|looked| {
            study.error_at(
                at,
                format!(
                    "matrix `server_version`: PostgreSQL {major} is not installed where pgrig looks ({looked}); \
                     install it or name its bin directory with {}",
                    pgrig_lab::versions::env_var(major)
                ),
            )
        })?;
        t.bin_dir = Some(found.bin_dir().display().to_string());
    }
    Ok(())
}

/// A throwaway target's `bin_dir` holds `initdb` and `postgres`.
fn check_bin_dirs(study: &Study, plan: &Plan) -> Result<(), StudyError> {
    for t in &plan.targets {
        let Some(dir) = t.bin_dir.as_deref().filter(|_| t.url.is_none()) else {
            continue;
        };
        let missing: Vec<&str> = ["initdb", "postgres"]
            .into_iter()
            .filter(|b| !Path::new(dir).join(b).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(study.error_at(
                target_at(study, t.source, "bin_dir"),
                format!("bin_dir \"{dir}\" has no {}", missing.join(" and ")),
            ));
        }
    }
    Ok(())
}
