//! Steps and zipped keys of a study, pure: `[[steps]]` → each step with its cumulative changes
//! (its own keys on top of every earlier step's), `[zip]` → which key follows which swept key.
//! Checks of names only (which keys may be stepped or zipped); the values are checked by the
//! plan like matrix values. Every error points at what it rejects.

use crate::error::{did_you_mean, StudyError};
use crate::spec::Study;
use crate::workload::WORKLOAD_KEYS;

/// One key=value change, with where its value was written.
#[derive(Debug, Clone)]
pub struct Change {
    pub key: String,
    pub at: usize,
    pub value: toml::Value,
}

/// One step and the changes in effect at it (its own and every earlier step's, in file order).
#[derive(Debug, Clone)]
pub struct StepPlan {
    pub name: String,
    pub set: Vec<Change>,
}

/// `follower = "leader"`: the follower takes the leader's value at each point.
#[derive(Debug, Clone)]
pub struct Zip {
    pub follower: String,
    pub leader: String,
    /// where the zip entry's value was written
    pub at: usize,
}

/// Keys a step or a zip cannot set: they are not workload keys or settings.
const RESERVED: &[&str] = &["step", "target", "repetitions"];

/// The steps in file order, each with its cumulative changes. `settable` says whether a key may
/// stand in `[matrix]` (workload key, `options.NAME`, `settings.NAME`).
pub fn steps(study: &Study, settable: &dyn Fn(&str) -> bool) -> Result<Vec<StepPlan>, StudyError> {
    let mut out: Vec<StepPlan> = Vec::new();
    let mut current: Vec<Change> = Vec::new();
    for (i, s) in study.spec.steps.iter().enumerate() {
        let name = s.name.get_ref().trim().to_string();
        let name_at = s.name.span().start;
        if name.is_empty() {
            return Err(study.error_at(name_at, format!("step {} needs a name", i + 1)));
        }
        if let Some(j) = out.iter().position(|p| p.name == name) {
            return Err(study.error_at(
                name_at,
                format!(
                    "step name \"{name}\" is used twice (steps {} and {}); each step needs its own name",
                    j + 1,
                    i + 1
                ),
            ));
        }
        if i > 0 && s.set.entries.is_empty() {
            return Err(study.error_at(
                name_at,
                format!("step \"{name}\" changes nothing (only the first step, the baseline, may have no `set`)"),
            ));
        }
        for (k, v) in &s.set.entries {
            let key = k.get_ref().as_str();
            let at = k.span().start;
            if RESERVED.contains(&key) || !settable(key) {
                return Err(study.error_at(
                    at,
                    format!("step \"{name}\" sets `{key}`: {}", unsettable(key)),
                ));
            }
            if study.spec.matrix.get(key).is_some() {
                return Err(study.error_at(
                    at,
                    format!("step \"{name}\" sets `{key}`, which [matrix] also sweeps; a key is either swept or stepped"),
                ));
            }
            let change = Change {
                key: key.to_string(),
                at: v.span().start,
                value: v.get_ref().clone(),
            };
            match current.iter_mut().find(|c| c.key == key) {
                Some(c) => *c = change,
                None => current.push(change),
            }
        }
        out.push(StepPlan {
            name,
            set: current.clone(),
        });
    }
    Ok(out)
}

fn unsettable(key: &str) -> String {
    if RESERVED.contains(&key) {
        format!("`{key}` is not a workload key or setting")
    } else {
        format!(
            "unknown key{} (expected a workload key ({}), `options.NAME` or `settings.NAME`)",
            did_you_mean(key, WORKLOAD_KEYS.iter().copied()),
            WORKLOAD_KEYS.join(", ")
        )
    }
}

/// The zipped keys. A leader must be swept (a `[matrix]` key or a key some step sets); a follower
/// may not be swept, stepped or zipped twice, and may not lead another zip.
pub fn zips(
    study: &Study,
    steps: &[StepPlan],
    settable: &dyn Fn(&str) -> bool,
) -> Result<Vec<Zip>, StudyError> {
    let spec = &study.spec;
    let stepped = |k: &str| steps.iter().any(|s| s.set.iter().any(|c| c.key == k));
    let mut out: Vec<Zip> = Vec::new();
    for (k, v) in &spec.zip.entries {
        let follower = k.get_ref().clone();
        let at = k.span().start;
        if RESERVED.contains(&follower.as_str()) || !settable(&follower) {
            return Err(study.error_at(at, format!("zip `{follower}`: {}", unsettable(&follower))));
        }
        let toml::Value::String(leader) = v.get_ref() else {
            return Err(study.error_at(
                v.span().start,
                format!(
                    "zip `{follower}` must name the key it follows, e.g. {follower} = \"clients\""
                ),
            ));
        };
        let swept = |key: &str| spec.matrix.get(key).is_some() || stepped(key);
        if !swept(leader) || leader == "repetitions" {
            return Err(study.error_at(
                v.span().start,
                format!("zip `{follower} = \"{leader}\"`: `{leader}` is neither a [matrix] key nor set by a step; a zipped key follows a swept key"),
            ));
        }
        if swept(&follower) {
            return Err(study.error_at(
                at,
                format!("zip `{follower}`: `{follower}` is swept or set by a step; a zipped key takes its values from `{leader}` only"),
            ));
        }
        if spec.zip.get(leader).is_some() {
            return Err(study.error_at(
                v.span().start,
                format!("zip `{follower} = \"{leader}\"`: `{leader}` is zipped itself; follow the key it follows instead"),
            ));
        }
        out.push(Zip {
            follower,
            leader: leader.clone(),
            at: v.span().start,
        });
    }
    Ok(out)
}
