//! Runs from the results store (SQLite file or `postgresql://` URL) through `pgrig_results::Store`:
//! a study by name (every stored version of its text becomes its own [`Study`]), a run by id, or
//! every study when nothing is named. Uses `Store::open_existing`, so a missing file is an error and
//! nothing is created.

use pgrig_results::{RunView, Store};

use crate::error::ReportError;
use crate::input::{doc, query};
use crate::model::{Run, Study};

/// What to take from the store.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    Study(String),
    Run(i64),
}

/// Opens the store and reads the picked studies (or all of them) and runs.
pub fn load(path: &str, picks: &[Pick]) -> Result<(Vec<Study>, Vec<Run>), ReportError> {
    let mut store = Store::open_existing(path)?;
    let shown = pgrig_text::mask_passwords(path);
    let rows = store.list(None).map_err(|e| schema(e, &shown))?;
    if rows.is_empty() {
        return Err(ReportError::Selection(format!(
            "the results store \"{shown}\" holds no runs (run a study first)"
        )));
    }
    let mut studies = Vec::new();
    let mut loose = Vec::new();
    let names: Vec<String> = if picks.is_empty() {
        let mut n: Vec<String> = rows.iter().map(|r| r.study.clone()).collect();
        n.dedup();
        n
    } else {
        Vec::new()
    };
    for name in &names {
        studies.extend(study(&mut store, &rows, name, &shown)?);
    }
    for p in picks {
        match p {
            Pick::Study(name) => studies.extend(study(&mut store, &rows, name, &shown)?),
            Pick::Run(id) => {
                let v = store.show(*id)?.ok_or_else(|| {
                    ReportError::Selection(format!("no run with id {id} in \"{shown}\""))
                })?;
                let view = RunView::of(&v);
                let mut r = doc::from_view(format!("run {id}"), &view);
                if let Some(s) = &view.study {
                    r.id = format!("run {id} ({s})");
                }
                loose.push(r);
            }
        }
    }
    Ok((studies, loose))
}

/// A store whose tables lack what this version reads was written by another version of pgrig.
fn schema(e: pgrig_results::StoreError, shown: &str) -> ReportError {
    let text = e.to_string();
    if text.contains("no such column") || text.contains("no such table") {
        let message = text.split_once("\": ").map(|x| x.1).unwrap_or(&text);
        let what = message.split(" in SELECT").next().unwrap_or(message);
        return ReportError::Selection(format!(
            "the results store \"{shown}\" has another schema than this pgrig reads ({}); \
             report it with the pgrig version that wrote it, or run the study again into a new store",
            what
        ));
    }
    e.into()
}

fn study(
    store: &mut Store,
    rows: &[pgrig_results::store::RunRow],
    name: &str,
    shown: &str,
) -> Result<Vec<Study>, ReportError> {
    let ids: Vec<i64> = rows
        .iter()
        .filter(|r| r.study == name)
        .map(|r| r.id)
        .collect();
    if ids.is_empty() {
        let mut known: Vec<&str> = rows.iter().map(|r| r.study.as_str()).collect();
        known.dedup();
        return Err(ReportError::Selection(format!(
            "no study named \"{name}\" in \"{shown}\" (it holds: {}){}",
            known.join(", "),
            if name.contains('/') {
                ", and no file of that name"
            } else {
                ""
            }
        )));
    }
    let mut out: Vec<Study> = Vec::new();
    let mut docs: Vec<Vec<serde_json::Value>> = Vec::new();
    for id in ids {
        let Some(v) = store.show(id)? else { continue };
        let view = RunView::of(&v);
        let text = view.study_text.clone().unwrap_or_default();
        let run = doc::from_view(format!("run {id}"), &view);
        match out.iter().position(|s| s.text == text) {
            Some(s) => {
                out[s].runs.push(run);
                docs[s].push(v);
            }
            None => {
                out.push(Study {
                    name: name.to_string(),
                    text,
                    runs: vec![run],
                    ..Study::default()
                });
                docs.push(vec![v]);
            }
        }
    }
    for (s, d) in out.iter_mut().zip(&docs) {
        s.query = query::points(d);
    }
    if out.len() > 1 {
        let n = out.len();
        for (i, s) in out.iter_mut().enumerate() {
            s.name = format!("{name} (version {} of {n})", i + 1);
        }
    }
    Ok(out)
}
