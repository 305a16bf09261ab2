//! Plan expansion, pure: a parsed study → its targets, its points (the cartesian product of the
//! matrix, targets outermost, dimensions in file order) and the ordered list of runs
//! (points × repetitions × rounds), each marked with whether it re-initialises the data first.

use std::path::Path;

use crate::error::{did_you_mean, StudyError};
use crate::spec::{scalar_text, Order, Reinit, Study};
use crate::workload::{effective, CacheState, WorkloadSpec, WORKLOAD_KEYS};

#[derive(Debug, Clone, PartialEq)]
pub struct TargetPlan {
    pub name: String,
    /// External server; `None`: a throwaway local server.
    pub url: Option<String>,
    /// Study-wide settings, then the target's own.
    pub settings: Vec<(String, String)>,
    pub fast: bool,
    pub bin_dir: Option<String>,
    /// Throwaway server: connect over TCP instead of the unix socket.
    pub tcp: bool,
    /// `[matrix] server_version`: this target's major version and where it was written (its
    /// binaries are found when the study is checked, into `bin_dir`).
    pub server_version: Option<(u32, usize)>,
    /// The position of the target in the file (`[target]`: 0) when versions multiply targets.
    pub source: usize,
}

impl TargetPlan {
    /// A throwaway local server with PostgreSQL's settings (what `pgrig run` starts).
    pub fn throwaway(name: &str, tcp: bool) -> TargetPlan {
        TargetPlan {
            name: name.into(),
            url: None,
            settings: Vec::new(),
            fast: false,
            bin_dir: None,
            tcp,
            server_version: None,
            source: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub target: usize,
    /// The matrix values of this point, in file order (plus `target` when there are several).
    pub values: Vec<(String, toml::Value)>,
    pub workload: WorkloadSpec,
    /// `settings.X` matrix values of this point.
    pub settings: Vec<(String, String)>,
    /// A steps study: the step of this point.
    pub step: Option<StepRef>,
}

/// A point's step: its position (0-based, in file order) and name.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRef {
    pub index: usize,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    /// Position in the study (stable across resumes of the same file).
    pub index: usize,
    pub point: usize,
    /// 1-based
    pub repetition: u32,
    /// 1-based
    pub round: u32,
    /// Re-create the dataset before this run.
    pub reinit: bool,
    /// First round of a repetition: warm up before it.
    pub first_round: bool,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub targets: Vec<TargetPlan>,
    pub points: Vec<Point>,
    pub runs: Vec<PlannedRun>,
    pub repetitions: u32,
    pub reinit: Reinit,
}

enum Dim {
    Workload(String),
    Setting(String),
}

/// One matrix dimension: what it varies, its key, where its values were written, the values.
struct Dimension {
    dim: Dim,
    key: String,
    at: usize,
    values: Vec<toml::Value>,
}

/// Expands the study into its plan, validating every point's workload.
pub fn expand(study: &Study) -> Result<Plan, StudyError> {
    let spec = &study.spec;
    let versions = versions::versions(study)?;
    let targets = versions::by_version(study, targets(study)?, &versions)?;
    check_workload_keys(study)?;
    let (dims, repetitions) = dimensions(study)?;
    // a step or zip cannot change the server's version: that is a target of its own
    let steppable = |k: &str| is_matrix_key(k) && k != "repetitions" && k != versions::KEY;
    let steps = steps::steps(study, &steppable)?;
    let zips = steps::zips(study, &steps, &steppable)?;
    check_point_count(study, targets.len() * steps.len().max(1), &dims)?;
    let step_list: Vec<Option<(usize, &StepPlan)>> = match steps.is_empty() {
        true => vec![None],
        false => steps.iter().enumerate().map(Some).collect(),
    };
    let mut points = Vec::new();
    for ti in 0..targets.len() {
        for step in &step_list {
            let stepped = step_dimensions(study, step.map(|s| s.1))?;
            for combo in cartesian(&dims.iter().map(|d| d.values.len()).collect::<Vec<_>>()) {
                let point = point(study, (&targets, ti), *step, &stepped, &dims, &combo, &zips)?;
                points.push(Point {
                    index: points.len(),
                    ..point
                });
            }
        }
    }
    check_run_count(study, &points, repetitions)?;
    let reinit = spec.dataset.as_ref().map(|d| d.reinit).unwrap_or_default();
    let runs = runs(&points, repetitions, reinit, spec.order);
    Ok(Plan {
        targets,
        points,
        runs,
        repetitions,
        reinit,
    })
}

/// Most points (targets × matrix combinations) a study may have: a 200×200×200 matrix tried to
/// build 8 million points and aborted, even under `--dry-run`.
pub const MAX_POINTS: u64 = 10_000;

/// Most runs (points × repetitions × rounds) a study may have.
pub const MAX_RUNS: u64 = 100_000;

/// Refuses a matrix above [`MAX_POINTS`] before anything is built, naming the count.
/// Plan-time check of a query point on its target: a cold cache needs a throwaway server.
fn check_cold_cache(study: &Study, t: &TargetPlan, w: &WorkloadSpec) -> Result<(), StudyError> {
    if study.spec.collect.profile && w.cache_state() == CacheState::Cold {
        return Err(study.error_at(
            study.key_at("cache"),
            "workload `cache`: \"cold\" restarts the server between executions, so [collect] profile \
             cannot follow its processes; profile a warm-cache study (cache = \"warm\")",
        ));
    }
    if t.url.is_some() && w.cache_state() == CacheState::Cold {
        return Err(study.error_at(
            study.key_at("cache"),
            format!(
                "workload `cache`: \"cold\" restarts the server and drops the OS page cache, which pgrig does only \
                 on a throwaway local server; target \"{}\" is external",
                t.name
            ),
        ));
    }
    Ok(())
}

fn check_point_count(study: &Study, targets: usize, dims: &[Dimension]) -> Result<(), StudyError> {
    let count = dims
        .iter()
        .try_fold(targets as u64, |n, d| n.checked_mul(d.values.len() as u64));
    match count {
        Some(n) if n <= MAX_POINTS => Ok(()),
        n => Err(study.error_in(
            &["matrix"],
            format!(
                "the matrix has {} points (targets × values of each key); at most {MAX_POINTS} are allowed",
                n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string())
            ),
        )),
    }
}

/// Refuses a plan above [`MAX_RUNS`] runs, naming the count.
fn check_run_count(study: &Study, points: &[Point], repetitions: u32) -> Result<(), StudyError> {
    let count = points.iter().try_fold(0u64, |n, p| {
        n.checked_add(u64::from(repetitions) * u64::from(p.workload.rounds))
    });
    match count {
        Some(n) if n <= MAX_RUNS => Ok(()),
        n => Err(study.error_in(
            &["matrix"],
            format!(
                "the study has {} runs (points × repetitions × rounds); at most {MAX_RUNS} are allowed",
                n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string())
            ),
        )),
    }
}

/// Every `[workload]` key is known and its value valid on its own, whether or not the matrix
/// overrides it; errors point at the key or value.
fn check_workload_keys(study: &Study) -> Result<(), StudyError> {
    let Some(w) = &study.spec.workload else {
        return Ok(());
    };
    for (k, v) in &w.get_ref().entries {
        let key = k.get_ref();
        if !WORKLOAD_KEYS.contains(&key.as_str()) {
            return Err(study.error_at(k.span().start, unknown_workload_key(key)));
        }
        check_value(key, v.get_ref())
            .map_err(|m| study.error_at(v.span().start, format!("workload `{key}`: {m}")))?;
    }
    Ok(())
}

/// The message for a key that is not a workload key, with the nearest one.
pub fn unknown_workload_key(key: &str) -> String {
    format!(
        "unknown workload key `{key}`{} (expected one of: {})",
        did_you_mean(key, WORKLOAD_KEYS.iter().copied()),
        WORKLOAD_KEYS.join(", ")
    )
}

/// Checks one workload key's value by itself (type, then value).
fn check_value(key: &str, v: &toml::Value) -> Result<(), String> {
    effective(&toml::Table::new(), &[(key.to_string(), v.clone())])?
        .validate()
        .map_err(|(_, m)| m)
}

/// The matrix's dimensions in file order (each value checked by itself) and the repetitions.
fn dimensions(study: &Study) -> Result<(Vec<Dimension>, u32), StudyError> {
    let mut repetitions = study.spec.repetitions.unwrap_or(1);
    let mut dims = Vec::new();
    for (k, v) in &study.spec.matrix.entries {
        let key = k.get_ref().as_str();
        let at = v.span().start;
        if key == versions::KEY {
            continue; // targets, one per version
        }
        if key == "repetitions" {
            repetitions = match v.get_ref() {
                toml::Value::Integer(n) if *n >= 1 && *n <= u32::MAX as i64 => *n as u32,
                _ => return Err(study.error_at(at, "repetitions must be an integer of at least 1")),
            };
            continue;
        }
        let dim = dimension_kind(study, key, k.span().start)?;
        let toml::Value::Array(list) = v.get_ref() else {
            return Err(study.error_at(
                at,
                format!("matrix key `{key}` must be a list of values, e.g. {key} = [1, 4]"),
            ));
        };
        if list.is_empty() {
            return Err(study.error_at(at, format!("matrix key `{key}` has no values")));
        }
        let mut values = list.clone();
        for x in values.iter_mut() {
            checked_value(&dim, key, x)
                .map_err(|m| study.error_at(at, format!("matrix `{key}` value {x}: {m}")))?;
        }
        dims.push(Dimension {
            dim,
            key: key.to_string(),
            at,
            values,
        });
    }
    if repetitions == 0 {
        return Err(study.error_in(&["repetitions"], "repetitions must be at least 1"));
    }
    Ok((dims, repetitions))
}

/// A matrix or step value made canonical (a lone script is a list of one) and checked by
/// itself.
fn checked_value(dim: &Dim, key: &str, x: &mut toml::Value) -> Result<(), String> {
    if let (Dim::Workload(_), "scripts" | "queries", toml::Value::String(s)) = (dim, key, &x) {
        *x = toml::Value::Array(vec![toml::Value::String(s.clone())]);
    }
    let bad = match dim {
        Dim::Workload(_) if key.starts_with("options.") => scalar_text(x)
            .is_none()
            .then(|| "an option must be a string, number or boolean".to_string()),
        Dim::Workload(_) => check_value(key, x).err(),
        Dim::Setting(_) => setting_text(x).err(),
    };
    bad.map_or(Ok(()), Err)
}

/// A step's changes as one-valued dimensions (none without steps), each value checked.
fn step_dimensions(study: &Study, step: Option<&StepPlan>) -> Result<Vec<Dimension>, StudyError> {
    let Some(step) = step else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for c in &step.set {
        let dim = dimension_kind(study, &c.key, c.at)?;
        let mut value = c.value.clone();
        checked_value(&dim, &c.key, &mut value).map_err(|m| {
            study.error_at(
                c.at,
                format!("step \"{}\" `{}` = {value}: {m}", step.name, c.key),
            )
        })?;
        out.push(Dimension {
            dim,
            key: c.key.clone(),
            at: c.at,
            values: vec![value],
        });
    }
    Ok(out)
}

/// One point: its target, its step's changes, one value of each matrix dimension, then the
/// zipped keys; the workload validated as a whole.
fn point(
    study: &Study,
    (targets, ti): (&[TargetPlan], usize),
    step: Option<(usize, &StepPlan)>,
    stepped: &[Dimension],
    dims: &[Dimension],
    combo: &[usize],
    zips: &[Zip],
) -> Result<Point, StudyError> {
    let spec = &study.spec;
    let t = &targets[ti];
    let mut values = Vec::new();
    if targets.iter().any(|o| o.name != t.name) {
        values.push(("target".to_string(), toml::Value::String(t.name.clone())));
    }
    if let Some((major, _)) = t.server_version {
        values.push((
            versions::KEY.to_string(),
            toml::Value::String(major.to_string()),
        ));
    }
    if let Some((_, s)) = step {
        values.push(("step".to_string(), toml::Value::String(s.name.clone())));
    }
    // (dimension, its value at this point), steps' changes first
    let mut chosen: Vec<(&Dimension, toml::Value)> =
        stepped.iter().map(|d| (d, d.values[0].clone())).collect();
    for (d, &i) in dims.iter().zip(combo) {
        values.push((d.key.clone(), d.values[i].clone()));
        chosen.push((d, d.values[i].clone()));
    }
    let mut zipped = Vec::new();
    for z in zips {
        let v = chosen
            .iter()
            .find(|(d, _)| d.key == z.leader)
            .map(|(_, v)| v.clone());
        // a leader set only by later steps: the base workload's own value stands
        let Some(v) = v.or_else(|| spec.workload_table().get(&z.leader).cloned()) else {
            continue;
        };
        let dim = dimension_kind(study, &z.follower, z.at)?;
        let mut value = v;
        checked_value(&dim, &z.follower, &mut value).map_err(|m| {
            study.error_at(
                z.at,
                format!("zip `{}` = {value} (from `{}`): {m}", z.follower, z.leader),
            )
        })?;
        zipped.push(Dimension {
            dim,
            key: z.follower.clone(),
            at: z.at,
            values: vec![value],
        });
    }
    chosen.extend(zipped.iter().map(|d| (d, d.values[0].clone())));
    let mut wl = Vec::new();
    let mut settings = Vec::new();
    for (d, v) in chosen {
        match &d.dim {
            Dim::Workload(k) => wl.push((k.clone(), v)),
            Dim::Setting(name) => {
                let text = scalar_text(&v).unwrap_or_default();
                if t.url.is_none() {
                    check_local_setting(name, &text).map_err(|m| study.error_at(d.at, m))?;
                }
                settings.push((name.clone(), text))
            }
        }
    }
    let workload = workload_of(study, t, &wl, stepped.iter().chain(dims).chain(&zipped))?;
    Ok(Point {
        index: 0,
        target: ti,
        values,
        workload,
        settings,
        step: step.map(|(index, s)| StepRef {
            index,
            name: s.name.clone(),
        }),
    })
}

/// The workload of a point: the base with the point's values, validated as a whole (errors at
/// the dimension that set the offending key), checked against its target.
fn workload_of<'a>(
    study: &Study,
    t: &TargetPlan,
    wl: &[(String, toml::Value)],
    dims: impl Iterator<Item = &'a Dimension> + Clone,
) -> Result<WorkloadSpec, StudyError> {
    let spec = &study.spec;
    // every key was type-checked on its own; what is left are combinations
    let workload = effective(&spec.workload_table(), wl)
        .map_err(|m| study.error_at(spec.workload_offset(), format!("workload: {m}")))?;
    workload
        .validate()
        .and_then(|_| workload.validate_kind())
        .map_err(|(key, m)| {
            let at = match dims.clone().find(|d| d.key == key) {
                Some(d) => d.at,
                None => spec.workload_value_offset(key),
            };
            study.error_at(at, format!("workload `{key}`: {m}"))
        })?;
    if let (Some(url), Some(level)) = (&t.url, &workload.isolation) {
        let endpoint = crate::target::Endpoint {
            conninfo: url.clone(),
        };
        endpoint
            .with_options(&crate::target::isolation_option(level))
            .map_err(|e| study.error_at(target_at(study, t.source, "url"), e.to_string()))?;
    }
    if t.url.is_some() && workload.server_cpus.is_some() {
        return Err(StudyError::Refused(format!(
            "{}: server_cpus needs a throwaway local server; target \"{}\" is external (remove server_cpus or the url)",
            study.file, t.name
        )));
    }
    check_cold_cache(study, t, &workload)?;
    Ok(workload)
}

fn dimension_kind(study: &Study, key: &str, at: usize) -> Result<Dim, StudyError> {
    if let Some(name) = key.strip_prefix("settings.") {
        if name.is_empty() {
            return Err(study.error_at(at, "matrix key `settings.` needs a setting name"));
        }
        check_setting_name(name).map_err(|m| study.error_at(at, m))?;
        return Ok(Dim::Setting(name.to_string()));
    }
    if WORKLOAD_KEYS.contains(&key) {
        return Ok(Dim::Workload(key.to_string()));
    }
    if let Some(name) = key.strip_prefix("options.") {
        if name.is_empty() {
            return Err(study.error_at(at, "matrix key `options.` needs an option name"));
        }
        return Ok(Dim::Workload(key.to_string()));
    }
    Err(study.error_at(at, unknown_matrix_key(key)))
}

/// The message for a key that is not a matrix key, with the nearest one.
pub fn unknown_matrix_key(key: &str) -> String {
    let known = WORKLOAD_KEYS.iter().copied().chain(["repetitions"]);
    format!(
        "unknown matrix key `{key}`{} (expected a workload key ({}), `options.NAME`, `settings.NAME`, `server_version` or `repetitions`)",
        did_you_mean(key, known),
        WORKLOAD_KEYS.join(", ")
    )
}

/// Whether `key` may stand in `[matrix]`.
pub fn is_matrix_key(key: &str) -> bool {
    key == "repetitions"
        || key == versions::KEY
        || key.starts_with("settings.")
        || key.starts_with("options.")
        || WORKLOAD_KEYS.contains(&key)
}

/// All index combinations of lists with these lengths, first list outermost.
pub fn cartesian(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &n in lens {
        let mut next = Vec::with_capacity(out.len() * n);
        for prefix in &out {
            for i in 0..n {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// Points × repetitions × rounds in the study's `order`, with the re-init policy applied.
pub fn runs(points: &[Point], repetitions: u32, reinit: Reinit, order: Order) -> Vec<PlannedRun> {
    let pairs: Vec<(&Point, u32)> = match order {
        Order::Points => points
            .iter()
            .flat_map(|p| (1..=repetitions).map(move |rep| (p, rep)))
            .collect(),
        Order::Interleaved => (1..=repetitions)
            .flat_map(|rep| points.iter().map(move |p| (p, rep)))
            .collect(),
    };
    let mut out = Vec::new();
    let (mut last_target, mut last_point) = (None, None);
    for (p, rep) in pairs {
        let new_point = last_point != Some(p.index);
        last_point = Some(p.index);
        for round in 1..=p.workload.rounds {
            let first_round = round == 1;
            let new_target = last_target != Some(p.target);
            last_target = Some(p.target);
            // per-point: fresh data whenever another point's runs come next (interleaved, at
            // every run; otherwise before the point's first repetition)
            let reinit = new_target
                || match reinit {
                    Reinit::PerRun => first_round,
                    Reinit::PerPoint => first_round && new_point,
                    Reinit::Once => false,
                };
            out.push(PlannedRun {
                index: out.len(),
                point: p.index,
                repetition: rep,
                round,
                reinit,
                first_round,
            });
        }
    }
    out
}

/// The directory relative paths in the study are resolved against.
pub fn base_dir(study_file: &Path) -> std::path::PathBuf {
    study_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::path::PathBuf::from("."))
}

#[path = "plan_steps.rs"]
mod steps;
use steps::{StepPlan, Zip};

#[path = "plan_versions.rs"]
mod versions;
pub use versions::KEY as SERVER_VERSION;

#[path = "plan_targets.rs"]
mod targets;
pub(crate) use targets::{check_local_setting, target_at};
use targets::{check_setting_name, setting_text, targets};

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
