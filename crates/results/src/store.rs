//! The results store: SQLite (`sqlite_store`, one file, default `./pgrig.db`) or PostgreSQL
//! (`pg_store`). A study is identified by its name and the hash of its text, so running the same
//! file again resumes it; the process running a study holds it in the store (a second one is
//! refused, naming the first); every finished run is written in one transaction with its result
//! document, provenance, per-second series and merged latency histogram. Readers
//! ([`Store::open_existing`]) never write. Nothing stored contains a password.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::StoreError;
pub use crate::sqlite_store::SqliteStore;
pub use crate::store_schema::{create_private, text_hash, RunRecord, RunRow, SCHEMA_VERSION};

/// The results store: a SQLite file, or a PostgreSQL database (`postgresql://…`).
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(Box<crate::pg_store::PgStore>),
}

fn is_pg_url(path: &str) -> bool {
    path.starts_with("postgresql://") || path.starts_with("postgres://")
}

impl Store {
    /// Opens the store at `path` for a study (creating it and its tables if needed): a
    /// `postgresql://` URL or a SQLite file.
    pub fn open(path: &str) -> Result<Store, StoreError> {
        if is_pg_url(path) {
            return Ok(Store::Postgres(Box::new(crate::pg_store::PgStore::open(
                path,
            )?)));
        }
        SqliteStore::open(path).map(Store::Sqlite)
    }

    /// Opens an existing store read-only (`pgrig results`, reports): nothing is created or
    /// written; a missing file, an empty one or one of another schema version is an error.
    pub fn open_existing(path: &str) -> Result<Store, StoreError> {
        if is_pg_url(path) {
            return Ok(Store::Postgres(Box::new(
                crate::pg_store::PgStore::open_existing(path)?,
            )));
        }
        SqliteStore::open_existing(path).map(Store::Sqlite)
    }

    /// Checks `path` as a study would open it, creating and writing nothing (`--dry-run`): a
    /// URL must parse; an existing file must be a pgrig store of this version (or empty); a new
    /// file's directory must exist.
    pub fn check(path: &str) -> Result<(), StoreError> {
        if is_pg_url(path) {
            return pgrig_wire::Config::parse(path)
                .map(drop)
                .map_err(|e| StoreError::new(path, e));
        }
        let p = std::path::Path::new(path);
        if p.exists() {
            return SqliteStore::check(path);
        }
        match p.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) if !dir.is_dir() => Err(StoreError::new(
                path,
                format!("directory \"{}\" does not exist", dir.display()),
            )),
            _ => Ok(()),
        }
    }

    /// The id of the study with this name and text, registering it if new; the study is held
    /// for this process until the store is dropped (another process running it is refused).
    /// The text is stored with its passwords masked (and identified by that text).
    pub fn study_id(&mut self, name: &str, file: &str, text: &str) -> Result<i64, StoreError> {
        let text = pgrig_wire::mask_passwords(text);
        match self {
            Store::Sqlite(s) => s.study_id(name, file, &text),
            Store::Postgres(s) => s.study_id(name, file, &text),
        }
    }

    pub fn finished(&mut self, study_id: i64) -> Result<BTreeSet<usize>, StoreError> {
        match self {
            Store::Sqlite(s) => s.finished(study_id),
            Store::Postgres(s) => s.finished(study_id),
        }
    }

    /// Stores a finished run; every string in its documents is stored with passwords masked
    /// (a server setting such as `primary_conninfo` may hold one).
    pub fn save_run(&mut self, study_id: i64, r: &RunRecord) -> Result<i64, StoreError> {
        let mut r = r.clone();
        for doc in [&mut r.point, &mut r.result, &mut r.provenance] {
            mask_strings(doc);
        }
        r.target = pgrig_wire::mask_passwords(&r.target);
        match self {
            Store::Sqlite(s) => s.save_run(study_id, &r),
            Store::Postgres(s) => s.save_run(study_id, &r),
        }
    }

    pub fn list(&mut self, study: Option<&str>) -> Result<Vec<RunRow>, StoreError> {
        match self {
            Store::Sqlite(s) => s.list(study),
            Store::Postgres(s) => s.list(study),
        }
    }

    pub fn export(&mut self, study: Option<&str>) -> Result<Vec<Value>, StoreError> {
        match self {
            Store::Sqlite(s) => s.export(study),
            Store::Postgres(s) => s.export(study),
        }
    }

    pub fn export_study(&mut self, study_id: i64) -> Result<Vec<Value>, StoreError> {
        match self {
            Store::Sqlite(s) => s.export_study(study_id),
            Store::Postgres(s) => s.export_study(study_id),
        }
    }

    pub fn show(&mut self, id: i64) -> Result<Option<Value>, StoreError> {
        match self {
            Store::Sqlite(s) => s.show(id),
            Store::Postgres(s) => s.show(id),
        }
    }
}

/// Masks the passwords in every string (keys included) of a JSON document.
fn mask_strings(v: &mut Value) {
    match v {
        Value::String(s) => *s = pgrig_wire::mask_passwords(s),
        Value::Array(a) => a.iter_mut().for_each(mask_strings),
        Value::Object(o) => {
            let masked: serde_json::Map<String, Value> = std::mem::take(o)
                .into_iter()
                .map(|(k, mut x)| {
                    mask_strings(&mut x);
                    (pgrig_wire::mask_passwords(&k), x)
                })
                .collect();
            *o = masked;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(i: usize) -> RunRecord {
        RunRecord {
            run_index: i,
            point: json!({"clients": 4}),
            repetition: 1,
            round: 1,
            target: "local".into(),
            started_unix: 1_700_000_000.0,
            finished_unix: 1_700_000_001.5,
            tps: 10.0,
            result: json!({"study": "s", "tps": 10.0}),
            provenance: json!({}),
            series: json!([]),
            histogram: json!([]),
        }
    }

    #[test]
    fn passwords_in_study_text_and_run_documents_are_stored_masked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db").display().to_string();
        let mut s = Store::open(&path).unwrap();
        let id = s
            .study_id(
                "s",
                "s.toml",
                "# postgresql://bob:hunter2@h/db\nname = \"s\"",
            )
            .unwrap();
        let mut r = record(0);
        r.provenance =
            json!({"server_settings": {"primary_conninfo": "host=p password=hunter2 user=r"}});
        r.result = json!({"tps": 1.0, "note": ["postgres://a:hunter2@x/y"]});
        s.save_run(id, &r).unwrap();
        let run_id = s.list(None).unwrap()[0].id;
        let shown = s.show(run_id).unwrap().unwrap();
        let text = shown.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(
            shown["provenance"]["server_settings"]["primary_conninfo"],
            "host=p password=**** user=r"
        );
        assert_eq!(
            shown["study_text"],
            "# postgresql://bob:****@h/db\nname = \"s\""
        );
    }

    #[test]
    fn backslash_escaped_passwords_are_stored_masked_whole() {
        // issue 21: `password=Se\ CrEt` was stored as `password=**** CrEt`
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db").display().to_string();
        let mut s = Store::open(&path).unwrap();
        let text =
            "name = \"s\"\n[[targets]]\nname = \"t\"\nurl = \"host=h password=Se\\\\ CrEt\"\n";
        let id = s.study_id("s", "s.toml", text).unwrap();
        let mut r = record(0);
        r.target = "host=h password=Se\\ CrEt user=u".into();
        r.provenance =
            json!({"server_settings": {"primary_conninfo": "password=Se\\ CrEt host=p"}});
        s.save_run(id, &r).unwrap();
        let run_id = s.list(None).unwrap()[0].id;
        let shown = s.show(run_id).unwrap().unwrap().to_string();
        assert!(!shown.contains("CrEt"), "{shown}");
        assert!(shown.contains("password=****"), "{shown}");
    }

    #[test]
    fn runs_survive_reopen_and_resume_by_study_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db").display().to_string();
        let mut s = Store::open(&path).unwrap();
        let id = s.study_id("s", "s.toml", "name = \"s\"").unwrap();
        s.save_run(id, &record(0)).unwrap();
        s.save_run(id, &record(2)).unwrap();
        assert!(s.save_run(id, &record(2)).is_err(), "a run is stored once");
        drop(s);
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.study_id("s", "s.toml", "name = \"s\"").unwrap(), id);
        assert_ne!(
            s.study_id("s", "s.toml", "name = \"s\"\n# changed")
                .unwrap(),
            id
        );
        assert_eq!(
            s.finished(id).unwrap().into_iter().collect::<Vec<_>>(),
            vec![0, 2]
        );
        let e = s.export(Some("s")).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(s.export_study(id).unwrap().len(), 2);
        assert_eq!(s.export(Some("other")).unwrap().len(), 0);
        assert_eq!(e[0]["tps"], json!(10.0));
        assert!(e[0]["run_id"].as_i64().is_some());
        let rows = s.list(None).unwrap();
        assert_eq!(rows[1].finished_at, "2023-11-14T22:13:21.500Z");
        let shown = s.show(rows[0].id).unwrap().unwrap();
        assert_eq!(shown["study_text"], json!("name = \"s\""));
        assert!(s.show(999).unwrap().is_none());
    }
}
