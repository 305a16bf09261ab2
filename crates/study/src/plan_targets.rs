//! The targets of a plan: `[target]` or `[[targets]]` resolved into [`TargetPlan`]s (names,
//! URLs that parse, study and target settings merged), and the checks of server settings —
//! names of letters, digits, `_` and `.`, values on one line — shared with the matrix. Every
//! error points at what it rejects.

use super::TargetPlan;
use crate::error::StudyError;
use crate::spec::{scalar_text, Study, TargetSpec};

pub(super) fn targets(study: &Study) -> Result<Vec<TargetPlan>, StudyError> {
    let spec = &study.spec;
    // (path of the target in the file, the target)
    let list: Vec<(Vec<String>, TargetSpec)> = match (&spec.target, &spec.targets) {
        (Some(_), Some(_)) => {
            return Err(study.error_in(
                &["targets"],
                "give either [target] or [[targets]], not both",
            ))
        }
        (Some(t), None) => vec![(vec!["target".into()], t.clone())],
        (None, Some(ts)) if !ts.is_empty() => ts
            .iter()
            .enumerate()
            .map(|(i, t)| (vec!["targets".into(), i.to_string()], t.clone()))
            .collect(),
        _ => vec![(Vec::new(), TargetSpec::default())],
    };
    let mut out: Vec<TargetPlan> = Vec::new();
    for (i, (path, t)) in list.iter().enumerate() {
        // where a key of this target was written
        let here = |keys: &[&str]| {
            let mut p: Vec<&str> = path.iter().map(String::as_str).collect();
            p.extend_from_slice(keys);
            study.at(&p)
        };
        if let Some(u) = &t.url {
            // the connection string parses (its password is masked in the message)
            pgrig_wire::Config::parse(u.get_ref())
                .map_err(|e| study.error_at(u.span().start, format!("target url: {e}")))?;
        }
        let name = t.name.clone().unwrap_or_else(|| match &t.url {
            None if list.len() == 1 => "local".to_string(),
            _ => format!("target{}", i + 1),
        });
        if out.iter().any(|o| o.name == name) {
            return Err(
                study.error_at(here(&["name"]), format!("two targets are named \"{name}\""))
            );
        }
        if t.tcp && t.url.is_some() {
            return Err(study.error_at(
                here(&["tcp"]),
                format!("target \"{name}\": tcp applies to a throwaway server; an external server is reached as its url says"),
            ));
        }
        let local = t.url.is_none();
        let mut settings = Vec::new();
        for (k, v) in &spec.settings {
            settings.push(setting(study, study.at(&["settings", k]), k, v, local)?);
        }
        for (k, v) in &t.settings {
            let s = setting(study, here(&["settings", k]), k, v, local)?;
            settings.retain(|(n, _): &(String, String)| n != k);
            settings.push(s);
        }
        out.push(TargetPlan {
            name,
            url: t.url.as_ref().map(|u| u.get_ref().clone()),
            settings,
            fast: t.fast,
            bin_dir: t.bin_dir.clone(),
            tcp: t.tcp,
            server_version: None,
            source: i,
        });
    }
    Ok(out)
}

/// A server setting of the file (`settings`, a target's `settings`, written at `at`) as name
/// and text; for a throwaway (`local`) server, checked by [`check_local_setting`].
fn setting(
    study: &Study,
    at: usize,
    name: &str,
    v: &toml::Value,
    local: bool,
) -> Result<(String, String), StudyError> {
    check_setting_name(name).map_err(|m| study.error_at(at, m))?;
    let text =
        setting_text(v).map_err(|m| study.error_at(at, format!("setting \"{name}\": {m}")))?;
    if local {
        check_local_setting(name, &text).map_err(|m| study.error_at(at, m))?;
    }
    Ok((name.to_string(), text))
}

/// A setting for a throwaway server pgrig starts: refused when it would change who can connect
/// or what the server runs (another configuration file, listening, authentication, TLS, a
/// library path, a shell command: `pgrig_lab::changes_access`) or move the port pgrig chose.
/// A study has no consent for these: they belong on an external server, set by hand.
pub(crate) fn check_local_setting(name: &str, value: &str) -> Result<(), String> {
    if let Some(reason) = pgrig_lab::owned_by_pgrig(name) {
        return Err(format!("setting \"{name}\": {reason}"));
    }
    if pgrig_lab::changes_access(name, value) {
        return Err(format!(
            "setting \"{name}\" changes who can connect to the throwaway server or what it runs \
             (another configuration file, listening, authentication, TLS, a library path or a \
             shell command); pgrig keeps servers it starts reachable only by their owner, so a \
             study never sets it there (set it by hand on an external server given by url)"
        ));
    }
    Ok(())
}

/// A setting name as PostgreSQL writes them (`work_mem`, `pg_stat_statements.track`): nothing
/// that could end a configuration line.
pub(super) fn check_setting_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid setting name \"{}\" (letters, digits, `_` and `.`, as in work_mem or pg_stat_statements.track)",
            name.escape_debug()
        ))
    }
}

/// The text of a setting value: a string, number or boolean, on one line.
pub(super) fn setting_text(v: &toml::Value) -> Result<String, String> {
    let text = scalar_text(v).ok_or("must be a string, number or boolean")?;
    if text.contains(['\n', '\r', '\0']) {
        return Err("a setting value cannot contain a line break or NUL".into());
    }
    Ok(text)
}

/// Where `key` of target `i` (`[target]` or the i-th `[[targets]]`) was written.
pub(crate) fn target_at(study: &Study, i: usize, key: &str) -> usize {
    match study.spec.targets {
        Some(_) => study.at(&["targets", &i.to_string(), key]),
        None => study.at(&["target", key]),
    }
}
