//! Command-line overrides of a study file (`pgrig study FILE --set KEY=VALUE`): KEY is a TOML
//! dotted key into the file (`workload.transactions`, `matrix."settings.synchronous_commit"`,
//! `repetitions`), VALUE a TOML value (`40`, `"1s"`, `[1, 4]`, `true`) or else a bare string
//! (`1s`, `serializable`). The overridden study is a new text (a header comment naming the
//! overrides, then the merged document), so what is stored reproduces exactly what ran and resumes
//! only with the same overrides. Pure: no I/O.

use toml::{Table, Value};

use crate::error::{did_you_mean, StudyError};
use crate::plan::{is_matrix_key, unknown_matrix_key, unknown_workload_key};
use crate::workload::WORKLOAD_KEYS;

/// Keys that say the same thing: setting one removes the others from the file, so
/// `--set workload.transactions=40` shortens a study written with `duration`.
const ALTERNATIVES: &[&[&str]] = &[
    &["workload.transactions", "workload.duration"],
    &["repetitions", "matrix.repetitions"],
];

/// One parsed `--set KEY=VALUE`: the key's path and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub text: String,
    pub path: Vec<String>,
    pub value: Value,
}

fn bad(set: &str, why: impl std::fmt::Display) -> StudyError {
    StudyError::Other(format!(
        "--set {set}: {why} (expected KEY=VALUE, e.g. workload.transactions=40 or \
         'matrix.\"settings.synchronous_commit\"=[\"off\"]')"
    ))
}

/// Parses `KEY=VALUE`: the key with TOML's own key syntax (so quoted keys keep their dots), the
/// value as TOML, or as a string when it is not TOML.
pub fn parse(set: &str) -> Result<Override, StudyError> {
    let Some(eq) = find_assignment(set) else {
        return Err(bad(set, "no `=`"));
    };
    let (key, value) = (set[..eq].trim(), set[eq + 1..].trim());
    if key.is_empty() {
        return Err(bad(set, "empty key"));
    }
    // the key with TOML's own syntax: walk the nested tables down to the placeholder
    let keyed: Table = format!("{key} = 0")
        .parse()
        .map_err(|e: toml::de::Error| bad(set, format!("bad key: {}", e.message().trim_end())))?;
    let mut path = Vec::new();
    let mut node = &keyed;
    while let Some((k, v)) = node.iter().next() {
        path.push(k.clone());
        match v {
            Value::Table(t) => node = t,
            _ => break,
        }
    }
    if let Some(why) = unknown_key(&path) {
        return Err(StudyError::Other(format!("--set {set}: {why}")));
    }
    let value = match format!("v = {value}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(Value::String(String::new())),
        Err(_) => Value::String(value.to_string()),
    };
    Ok(Override {
        text: set.to_string(),
        path,
        value,
    })
}

/// Top-level keys of a study file.
const TOP_LEVEL: &[&str] = &[
    "version",
    "name",
    "description",
    "target",
    "targets",
    "settings",
    "dataset",
    "workload",
    "matrix",
    "steps",
    "zip",
    "repetitions",
    "collect",
];

/// A key path the study file cannot have (top level, `workload.*`, `matrix.*`), named by
/// itself with the nearest known key; other sections are checked when the file is parsed.
fn unknown_key(path: &[String]) -> Option<String> {
    let first = path[0].as_str();
    if !TOP_LEVEL.contains(&first) {
        return Some(format!(
            "unknown key `{first}`{} (expected one of: {})",
            did_you_mean(first, TOP_LEVEL.iter().copied()),
            TOP_LEVEL.join(", ")
        ));
    }
    let second = path.get(1)?.as_str();
    match first {
        "workload" if !WORKLOAD_KEYS.contains(&second) => Some(unknown_workload_key(second)),
        "matrix" if !is_matrix_key(second) => Some(unknown_matrix_key(second)),
        _ => None,
    }
}

/// The `=` that ends the key: the first one outside quotes.
fn find_assignment(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '=') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Applies the overrides to study text: returns the new text, starting with a comment that names
/// the file and the overrides. `file` names the file in errors.
pub fn apply(file: &str, text: &str, sets: &[Override]) -> Result<String, StudyError> {
    let mut doc: Table = text.parse().map_err(|e: toml::de::Error| {
        StudyError::Other(format!("{file}: {}", e.message().trim_end()))
    })?;
    for o in sets {
        let dotted = o.path.join(".");
        for group in ALTERNATIVES {
            if group.contains(&dotted.as_str()) {
                for other in group.iter().filter(|k| **k != dotted) {
                    remove(&mut doc, other);
                }
            }
        }
        set(&mut doc, &o.path, o.value.clone()).map_err(|why| bad(&o.text, why))?;
    }
    let body =
        toml::to_string(&doc).map_err(|e| StudyError::Other(format!("{file} with --set: {e}")))?;
    let mut out = format!("# {file}, overridden on the command line:\n");
    for o in sets {
        out.push_str(&format!("#   --set {}\n", o.text.replace('\n', " ")));
    }
    out.push_str(&body);
    Ok(out)
}

fn remove(doc: &mut Table, dotted: &str) {
    let parts: Vec<&str> = dotted.split('.').collect();
    let mut node = doc;
    for p in &parts[..parts.len() - 1] {
        match node.get_mut(*p) {
            Some(Value::Table(t)) => node = t,
            _ => return,
        }
    }
    node.remove(parts[parts.len() - 1]);
}

fn set(doc: &mut Table, path: &[String], value: Value) -> Result<(), String> {
    let mut node = doc;
    for (i, p) in path[..path.len() - 1].iter().enumerate() {
        let entry = node
            .entry(p.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        match entry {
            Value::Table(t) => node = t,
            _ => {
                return Err(format!(
                    "`{}` is not a table in the study file",
                    path[..=i].join(".")
                ))
            }
        }
    }
    node.insert(path[path.len() - 1].clone(), value);
    Ok(())
}

#[cfg(test)]
#[path = "overrides_tests.rs"]
mod tests;
