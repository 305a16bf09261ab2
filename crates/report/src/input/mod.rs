//! Everything the report reads, mapped into the plain [`crate::model`]: the results store
//! (`store`), JSON run documents (`files`, `doc`), pgbench's `-l` logs (`pgbench_log`). The one
//! place that knows input formats; the rest of the crate sees only the model.

pub mod curve;
pub mod doc;
pub mod files;
pub mod pgbench_log;
pub mod query;
pub mod store;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::ReportError;
use crate::model::Model;
use store::Pick;

/// `NAME.PID.N` (a pgbench thread's log) → `NAME.PID`, so a run's thread files go together.
fn log_run_name(path: &str) -> String {
    if let Some((stem, last)) = path.rsplit_once('.') {
        let stem_is_pid = stem
            .rsplit_once('.')
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if stem_is_pid && !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
            return stem.to_string();
        }
    }
    path.to_string()
}

/// Reads the inputs named on the command line: existing files by content, otherwise a run id
/// (digits) or a study name in the store at `store_path`. No inputs: every study in the store.
pub fn load(store_path: &str, args: &[String]) -> Result<Model, ReportError> {
    let mut model = Model::default();
    let mut picks = Vec::new();
    let mut logs: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for a in args {
        let path = Path::new(a);
        if path.is_file() {
            match files::load(path)? {
                Ok(files::Loaded::Runs(r)) => model.loose.extend(r),
                Ok(files::Loaded::Studies(s)) => {
                    for mut st in s {
                        // the same study exported from two stores: tell them apart by file
                        if model.studies.iter().any(|o| o.name == st.name) {
                            st.name = format!("{} ({})", st.name, files::short_name(a));
                        }
                        model.studies.push(st);
                    }
                }
                Err(text) => logs
                    .entry(log_run_name(a))
                    .or_default()
                    .push((a.clone(), text)),
            }
            model.sources.push(a.clone());
        } else if path.exists() || a.ends_with(".json") || a.ends_with(".log") {
            // a study name may hold '/': only what exists or looks like a file is a path
            return Err(ReportError::Read {
                file: a.clone(),
                message: if path.is_dir() {
                    "a directory, not a file"
                } else if path.exists() {
                    "not a regular file"
                } else {
                    "no such file"
                }
                .into(),
            });
        } else if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) {
            picks.push(Pick::Run(a.parse().map_err(|_| {
                ReportError::Selection(format!("run id \"{a}\" is out of range"))
            })?));
        } else {
            picks.push(Pick::Study(a.clone()));
        }
    }
    for (name, group) in logs {
        let id = files::short_name(&name);
        model.loose.push(pgbench_log::parse(&id, &group)?);
    }
    if !picks.is_empty() || args.is_empty() {
        let (studies, loose) = store::load(store_path, &picks)?;
        model.studies.extend(studies);
        model.loose.extend(loose);
        model.sources.push(pgrig_text::mask_passwords(store_path));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_logs_of_one_run_share_a_name() {
        assert_eq!(log_run_name("d/pgbench_log.123.1"), "d/pgbench_log.123");
        assert_eq!(log_run_name("d/pgbench_log.123"), "d/pgbench_log.123");
        assert_eq!(log_run_name("a.log"), "a.log");
    }
}
