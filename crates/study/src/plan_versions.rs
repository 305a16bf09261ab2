//! `[matrix] server_version = ["15", "18"]`: each value a major version of PostgreSQL, each a
//! throwaway server of its own. The plan turns every throwaway target into one target per
//! version (the versions outermost after the targets, so each server starts once whatever the
//! order of the other keys); external targets are refused. Which binaries serve a version is
//! decided when the study is checked (`checked`), not here: the plan stays pure.

use super::TargetPlan;
use crate::error::StudyError;
use crate::spec::Study;

/// The matrix key.
pub const KEY: &str = "server_version";

/// The versions the matrix sweeps, each with where it was written (empty without the key).
pub(super) fn versions(study: &Study) -> Result<Vec<(u32, usize)>, StudyError> {
    let Some((_, v)) = study.spec.matrix.get(KEY) else {
        return Ok(Vec::new());
    };
    let toml::Value::Array(list) = v.get_ref() else {
        return Err(study.error_at(
            v.span().start,
            format!("matrix key `{KEY}` must be a list of major versions, e.g. {KEY} = [\"15\", \"18\"]"),
        ));
    };
    if list.is_empty() {
        return Err(study.error_at(v.span().start, format!("matrix key `{KEY}` has no values")));
    }
    let mut out: Vec<(u32, usize)> = Vec::new();
    for (i, x) in list.iter().enumerate() {
        let at = study.at(&["matrix", KEY, &i.to_string()]);
        let major = match x {
            toml::Value::Integer(n) => u32::try_from(*n).ok(),
            toml::Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.parse().ok()
            }
            _ => None,
        };
        let Some(major) = major.filter(|m| *m > 0) else {
            return Err(study.error_at(
                at,
                format!("matrix `{KEY}` value {x}: a major version of PostgreSQL is a whole number such as \"15\" or \"18\" (not a minor release)"),
            ));
        };
        if out.iter().any(|(m, _)| *m == major) {
            return Err(study.error_at(
                at,
                format!("matrix `{KEY}`: version {major} is listed twice"),
            ));
        }
        out.push((major, at));
    }
    Ok(out)
}

/// Each target once per version (the targets themselves without versions).
pub(super) fn by_version(
    study: &Study,
    targets: Vec<TargetPlan>,
    versions: &[(u32, usize)],
) -> Result<Vec<TargetPlan>, StudyError> {
    if versions.is_empty() {
        return Ok(targets);
    }
    let mut out = Vec::new();
    for t in targets {
        if t.url.is_some() {
            return Err(study.error_at(
                versions[0].1,
                format!(
                    "matrix `{KEY}` starts a throwaway server of each version, but target \"{}\" is an external server (its version is what it is); remove its url or the key",
                    t.name
                ),
            ));
        }
        if t.bin_dir.is_some() {
            return Err(study.error_at(
                versions[0].1,
                format!(
                    "matrix `{KEY}` chooses the binaries of each version, so target \"{}\" cannot name a bin_dir too; name a version's directory with PGRIG_PG<N>_BINDIR",
                    t.name
                ),
            ));
        }
        for &(major, at) in versions {
            out.push(TargetPlan {
                server_version: Some((major, at)),
                ..t.clone()
            });
        }
    }
    Ok(out)
}
