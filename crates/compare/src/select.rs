//! Resolves a parsed selection against the results store into the runs it names
//! ([`Sample`]s): run ids directly, a study by name, a point of a study by its matrix values.

use std::collections::BTreeSet;

use serde_json::Value;

use pgrig_results::{summary, RunView, Store};

use crate::error::CompareError;
use crate::record::Sample;
use crate::selector::{Filter, Selector};

/// The runs one side of the comparison selected.
#[derive(Debug, Clone)]
pub struct Side {
    /// "A" or "B"
    pub which: String,
    /// the selection as the user wrote it
    pub text: String,
    pub samples: Vec<Sample>,
}

impl Side {
    /// A side from run documents already at hand (`Store::show`'s JSON, with `provenance`),
    /// for callers that select runs themselves (the HTML report).
    pub fn from_docs(which: &str, text: &str, docs: &[Value]) -> Side {
        Side {
            which: which.to_string(),
            text: text.to_string(),
            samples: docs.iter().map(Sample::from_doc).collect(),
        }
    }
}

/// Keys every study's runs can be selected by besides its matrix keys.
const RUN_KEYS: &[&str] = &["target", "round"];

/// The runs `sel` names in `store` (`path` is the store's name for messages).
pub fn resolve(
    store: &mut Store,
    path: &str,
    which: &str,
    text: &str,
    sel: &Selector,
) -> Result<Side, CompareError> {
    let ids = run_ids(store, path, sel)?;
    let mut samples = Vec::with_capacity(ids.len());
    for id in ids {
        let doc = store.show(id)?.ok_or_else(|| match store.list(None) {
            Ok(l) if l.is_empty() => CompareError::EmptyStore(path.to_string()),
            _ => CompareError::UnknownRun {
                id,
                store: path.to_string(),
            },
        })?;
        samples.push(Sample::from_doc(&doc));
    }
    let side = Side {
        which: which.to_string(),
        text: text.to_string(),
        samples,
    };
    one_round(&side)?;
    Ok(side)
}

/// The ids of the runs `sel` names.
pub fn run_ids(store: &mut Store, path: &str, sel: &Selector) -> Result<Vec<i64>, CompareError> {
    match sel {
        Selector::Runs(ids) => Ok(ids.clone()),
        Selector::Study { name, filters } => study_runs(store, path, name, filters),
    }
}

/// Run ids of a study's runs matching every filter.
fn study_runs(
    store: &mut Store,
    path: &str,
    name: &str,
    filters: &[Filter],
) -> Result<Vec<i64>, CompareError> {
    let docs = store.export(Some(name))?;
    if docs.is_empty() {
        let all = store.list(None)?;
        if all.is_empty() {
            return Err(CompareError::EmptyStore(path.to_string()));
        }
        let known: BTreeSet<String> = all.into_iter().map(|r| r.study).collect();
        return Err(CompareError::UnknownStudy {
            name: name.to_string(),
            store: path.to_string(),
            known: known.into_iter().collect(),
        });
    }
    let docs: Vec<RunView> = docs.iter().map(RunView::of).collect();
    let mut keep: Vec<&RunView> = docs.iter().collect();
    for f in filters {
        check_key(name, &docs, &f.key)?;
        let before = keep.clone();
        keep.retain(|d| matches(d, f));
        if keep.is_empty() {
            let values: BTreeSet<String> = before.iter().map(|d| shown(d, &f.key)).collect();
            return Err(CompareError::NoMatch {
                study: name.to_string(),
                key: f.key.clone(),
                value: f.value.clone(),
                values: values.into_iter().collect(),
            });
        }
    }
    Ok(keep.iter().filter_map(|d| d.run_id).collect())
}

fn check_key(study: &str, docs: &[RunView], key: &str) -> Result<(), CompareError> {
    let mut valid: Vec<String> = Vec::new();
    for d in docs {
        for k in d.point.keys() {
            if !valid.contains(k) {
                valid.push(k.clone());
            }
        }
    }
    valid.extend(RUN_KEYS.iter().map(|k| k.to_string()));
    if valid.iter().any(|k| k == key) {
        return Ok(());
    }
    Err(CompareError::UnknownKey {
        study: study.to_string(),
        key: key.to_string(),
        valid,
    })
}

/// The value a run has for `key`: the run's target or round, else its point's matrix value.
fn field(doc: &RunView, key: &str) -> Value {
    match key {
        "target" => doc.target.clone().map_or(Value::Null, Value::String),
        "round" => doc.round.map_or(Value::Null, Value::from),
        _ => doc.point.get(key).cloned().unwrap_or(Value::Null),
    }
}

/// The value as the selection syntax writes it.
fn shown(doc: &RunView, key: &str) -> String {
    match field(doc, key) {
        Value::String(s) => s.clone(),
        Value::Array(a) if a.iter().all(Value::is_string) => format!(
            "[{}]",
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        v => v.to_string(),
    }
}

/// Whether the run's value for the filter's key is the filter's value: the same text, the
/// same number, or for a list (`scripts`) its elements (`[a.sql, b.sql]`, or one element alone).
fn matches(doc: &RunView, f: &Filter) -> bool {
    let v = field(doc, &f.key);
    let want = f.value.trim();
    let json_text = v.to_string();
    if shown(doc, &f.key) == want || json_text == want {
        return true;
    }
    match &v {
        Value::Number(n) => want.parse::<f64>().ok() == n.as_f64(),
        Value::Array(a) => {
            let items: Vec<&str> = want
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|s| s.trim().trim_matches('"'))
                .collect();
            a.len() == items.len() && a.iter().zip(&items).all(|(x, y)| x.as_str() == Some(y))
        }
        _ => false,
    }
}

/// A side must not mix rounds: round 3 of a table that grows is another measurement.
fn one_round(side: &Side) -> Result<(), CompareError> {
    let rounds: BTreeSet<u64> = side.samples.iter().map(|s| s.round).collect();
    if rounds.len() <= 1 {
        return Ok(());
    }
    Err(CompareError::SpansRounds {
        which: side.which.clone(),
        text: side.text.clone(),
        rounds: rounds.iter().map(u64::to_string).collect(),
    })
}

/// How a side's runs are labelled: the distinct points they come from.
pub fn points(side: &Side) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &side.samples {
        let mut label = summary::point_label(&s.point);
        if !s.target.is_empty() && s.target != "local" {
            label = format!("target={} {label}", s.target);
        }
        let label = format!("{}: {label}", s.study);
        if !out.contains(&label) {
            out.push(label);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(doc: &Value, key: &str, value: &str) -> bool {
        matches(
            &RunView::of(doc),
            &Filter {
                key: key.into(),
                value: value.into(),
            },
        )
    }

    #[test]
    fn values_match_as_the_study_file_writes_them() {
        let d = json!({"target": "a", "round": 2, "point": {
            "clients": 4, "isolation": "read committed", "fast": true,
            "scripts": ["insert_single_rows.sql"], "pair": ["a.sql", "b.sql"]}});
        assert!(hit(&d, "clients", "4") && hit(&d, "clients", "4.0") && !hit(&d, "clients", "8"));
        assert!(hit(&d, "isolation", "read committed"));
        assert!(hit(&d, "fast", "true"));
        assert!(hit(&d, "scripts", "insert_single_rows.sql"));
        assert!(hit(&d, "scripts", "[insert_single_rows.sql]"));
        assert!(hit(&d, "pair", "[a.sql, b.sql]") && hit(&d, "pair", r#"["a.sql","b.sql"]"#));
        assert!(!hit(&d, "pair", "a.sql"));
        assert!(hit(&d, "target", "a") && hit(&d, "round", "2") && !hit(&d, "target", "b"));
        assert_eq!(shown(&RunView::of(&d), "pair"), "[a.sql, b.sql]");
    }
}
