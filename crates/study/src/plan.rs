//! Plan expansion, pure: a parsed study → its targets, its points (the cartesian product of the
//! matrix, targets outermost, dimensions in file order) and the ordered list of runs
//! (points × repetitions × rounds), each marked with whether it re-initialises the data first.

use std::path::Path;

use crate::error::StudyError;
use crate::spec::{scalar_text, Reinit, Study, TargetSpec};
use crate::workload::{effective, WorkloadSpec, WORKLOAD_KEYS};

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

/// Expands the study into its plan, validating every point's workload.
pub fn expand(study: &Study) -> Result<Plan, StudyError> {
    let spec = &study.spec;
    let targets = targets(study)?;
    let mut repetitions = spec.repetitions.unwrap_or(1);
    let mut dims: Vec<(Dim, String, usize, Vec<toml::Value>)> = Vec::new();
    for (k, v) in &spec.matrix.entries {
        let key = k.get_ref().as_str();
        let at = k.span().start;
        if key == "repetitions" {
            repetitions = match v.get_ref() {
                toml::Value::Integer(n) if *n >= 1 => *n as u32,
                _ => {
                    return Err(study.error_at(
                        v.span().start,
                        "repetitions must be an integer of at least 1",
                    ))
                }
            };
            continue;
        }
        let dim = if let Some(name) = key.strip_prefix("settings.") {
            if name.is_empty() {
                return Err(study.error_at(at, "matrix key `settings.` needs a setting name"));
            }
            Dim::Setting(name.to_string())
        } else if WORKLOAD_KEYS.contains(&key) {
            Dim::Workload(key.to_string())
        } else {
            return Err(study.error_at(
                at,
                format!(
                    "unknown matrix key `{key}` (expected a workload key ({}), `settings.NAME` or `repetitions`)",
                    WORKLOAD_KEYS.join(", ")
                ),
            ));
        };
        let toml::Value::Array(list) = v.get_ref() else {
            return Err(study.error_at(
                v.span().start,
                format!("matrix key `{key}` must be a list of values, e.g. {key} = [1, 4]"),
            ));
        };
        if list.is_empty() {
            return Err(study.error_at(v.span().start, format!("matrix key `{key}` has no values")));
        }
        let mut values = list.clone();
        if key == "scripts" {
            for x in values.iter_mut() {
                if let toml::Value::String(s) = x {
                    *x = toml::Value::Array(vec![toml::Value::String(s.clone())]);
                }
            }
        }
        if let Dim::Setting(_) = dim {
            if let Some(bad) = values.iter().find(|x| scalar_text(x).is_none()) {
                return Err(study.error_at(
                    v.span().start,
                    format!("matrix key `{key}`: {bad} is not a setting value (string, number or boolean)"),
                ));
            }
        }
        dims.push((dim, key.to_string(), v.span().start, values));
    }
    if repetitions == 0 {
        return Err(study.error_at(0, "repetitions must be at least 1"));
    }

    let mut points = Vec::new();
    for (ti, t) in targets.iter().enumerate() {
        for combo in cartesian(&dims.iter().map(|d| d.3.len()).collect::<Vec<_>>()) {
            let mut values = Vec::new();
            if targets.len() > 1 {
                values.push(("target".to_string(), toml::Value::String(t.name.clone())));
            }
            let mut wl = Vec::new();
            let mut settings = Vec::new();
            for ((dim, key, _, vals), &i) in dims.iter().zip(&combo) {
                let v = vals[i].clone();
                values.push((key.clone(), v.clone()));
                match dim {
                    Dim::Workload(k) => wl.push((k.clone(), v)),
                    Dim::Setting(name) => {
                        settings.push((name.clone(), scalar_text(&v).unwrap_or_default()))
                    }
                }
            }
            let base = spec.workload_table();
            let workload = effective(&base, &wl).map_err(|m| {
                // find the matrix value that breaks it, else blame the [workload] table
                let culprit = wl
                    .iter()
                    .find(|(k, v)| effective(&base, &[(k.clone(), v.clone())]).is_err());
                match culprit {
                    Some((k, _)) => {
                        let at = dims.iter().find(|d| &d.1 == k).map(|d| d.2).unwrap_or(0);
                        study.error_at(at, format!("matrix `{k}`: {m}"))
                    }
                    None => {
                        study.error_at(offending_offset(study, &dims, &m), format!("workload: {m}"))
                    }
                }
            })?;
            workload.validate().map_err(|(key, m)| {
                let at = dims
                    .iter()
                    .find(|d| d.1 == key)
                    .map(|d| d.2)
                    .unwrap_or(spec.workload_offset());
                study.error_at(at, format!("workload `{key}`: {m}"))
            })?;
            if t.url.is_some() && workload.server_cpus.is_some() {
                return Err(StudyError::Refused(format!(
                    "{}: server_cpus needs a throwaway local server; target \"{}\" is external (remove server_cpus or the url)",
                    study.file, t.name
                )));
            }
            points.push(Point {
                index: points.len(),
                target: ti,
                values,
                workload,
                settings,
            });
        }
    }
    let reinit = spec.dataset.as_ref().map(|d| d.reinit).unwrap_or_default();
    let runs = runs(&points, repetitions, reinit);
    Ok(Plan {
        targets,
        points,
        runs,
        repetitions,
        reinit,
    })
}

/// Where to point at for a workload deserialization error: the matrix key it names, else the
/// `[workload]` table.
fn offending_offset(
    study: &Study,
    dims: &[(Dim, String, usize, Vec<toml::Value>)],
    msg: &str,
) -> usize {
    dims.iter()
        .find(|d| msg.contains(&format!("`{}`", d.1)))
        .map(|d| d.2)
        .unwrap_or(study.spec.workload_offset())
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

/// Points × repetitions × rounds, with the re-init policy applied.
pub fn runs(points: &[Point], repetitions: u32, reinit: Reinit) -> Vec<PlannedRun> {
    let mut out = Vec::new();
    let mut last_target = None;
    for p in points {
        for rep in 1..=repetitions {
            for round in 1..=p.workload.rounds {
                let first_round = round == 1;
                let new_target = last_target != Some(p.target);
                last_target = Some(p.target);
                let reinit = new_target
                    || match reinit {
                        Reinit::PerRun => first_round,
                        Reinit::PerPoint => first_round && rep == 1,
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
    }
    out
}

fn targets(study: &Study) -> Result<Vec<TargetPlan>, StudyError> {
    let spec = &study.spec;
    let list: Vec<TargetSpec> = match (&spec.target, &spec.targets) {
        (Some(_), Some(_)) => {
            return Err(StudyError::Refused(format!(
                "{}: give either [target] or [[targets]], not both",
                study.file
            )))
        }
        (Some(t), None) => vec![t.clone()],
        (None, Some(ts)) if !ts.is_empty() => ts.clone(),
        _ => vec![TargetSpec::default()],
    };
    let mut out: Vec<TargetPlan> = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let name = t.name.clone().unwrap_or_else(|| match &t.url {
            None if list.len() == 1 => "local".to_string(),
            _ => format!("target{}", i + 1),
        });
        if out.iter().any(|o| o.name == name) {
            return Err(StudyError::Refused(format!(
                "{}: two targets are named \"{name}\"",
                study.file
            )));
        }
        if t.tcp && t.url.is_some() {
            return Err(StudyError::Refused(format!(
                "{}: target \"{name}\": tcp applies to a throwaway server; an external server is reached as its url says",
                study.file
            )));
        }
        let mut settings = Vec::new();
        for (k, v) in spec.settings.iter().chain(&t.settings) {
            let text = scalar_text(v).ok_or_else(|| {
                StudyError::Refused(format!(
                    "{}: setting \"{k}\" must be a string, number or boolean",
                    study.file
                ))
            })?;
            settings.retain(|(n, _): &(String, String)| n != k);
            settings.push((k.clone(), text));
        }
        out.push(TargetPlan {
            name,
            url: t.url.clone(),
            settings,
            fast: t.fast,
            bin_dir: t.bin_dir.clone(),
            tcp: t.tcp,
        });
    }
    Ok(out)
}

/// The directory relative paths in the study are resolved against.
pub fn base_dir(study_file: &Path) -> std::path::PathBuf {
    study_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::path::PathBuf::from("."))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
