//! The results store: SQLite (one file, default `./pgrig.db`) or PostgreSQL (`pg_store`). A study is identified by its name
//! and the hash of its text, so running the same file again resumes it; every finished run is
//! written in one transaction with its result document, provenance, per-second series and merged
//! latency histogram. Nothing stored contains a password.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use crate::error::StudyError;

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('schema_version', '1');
CREATE TABLE IF NOT EXISTS studies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    file TEXT,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    UNIQUE (name, text_hash)
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    study_id INTEGER NOT NULL REFERENCES studies (id),
    run_index INTEGER NOT NULL,
    point TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    round INTEGER NOT NULL,
    target TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    tps REAL NOT NULL,
    result TEXT NOT NULL,
    provenance TEXT NOT NULL,
    series TEXT NOT NULL,
    histogram TEXT NOT NULL,
    UNIQUE (study_id, run_index)
);
";

/// One finished run, ready to store.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub run_index: usize,
    pub point: Value,
    pub repetition: u32,
    pub round: u32,
    pub target: String,
    pub started_unix: f64,
    pub finished_unix: f64,
    pub tps: f64,
    /// The export document (the keys and more).
    pub result: Value,
    pub provenance: Value,
    pub series: Value,
    pub histogram: Value,
}

/// A stored run as `results list` shows it.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub id: i64,
    pub study: String,
    pub point: String,
    pub repetition: u32,
    pub round: u32,
    pub target: String,
    pub finished_at: String,
    pub tps: f64,
}

/// The results store: a SQLite file, or a PostgreSQL database (`postgresql://…`).
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(Box<crate::pg_store::PgStore>),
}

fn is_pg_url(path: &str) -> bool {
    path.starts_with("postgresql://") || path.starts_with("postgres://")
}

impl Store {
    /// Opens (creating the tables if needed) the store at `path`: a `postgresql://` URL or a
    /// SQLite file.
    pub fn open(path: &str) -> Result<Store, StudyError> {
        if is_pg_url(path) {
            return Ok(Store::Postgres(Box::new(crate::pg_store::PgStore::open(
                path,
            )?)));
        }
        SqliteStore::open(path).map(Store::Sqlite)
    }

    /// Opens an existing store (for `results`): a missing SQLite file is an error, not a new store.
    pub fn open_existing(path: &str) -> Result<Store, StudyError> {
        if is_pg_url(path) {
            return Store::open(path);
        }
        SqliteStore::open_existing(path).map(Store::Sqlite)
    }

    pub fn study_id(&mut self, name: &str, file: &str, text: &str) -> Result<i64, StudyError> {
        match self {
            Store::Sqlite(s) => s.study_id(name, file, text),
            Store::Postgres(s) => s.study_id(name, file, text),
        }
    }

    pub fn finished(&mut self, study_id: i64) -> Result<BTreeSet<usize>, StudyError> {
        match self {
            Store::Sqlite(s) => s.finished(study_id),
            Store::Postgres(s) => s.finished(study_id),
        }
    }

    pub fn save_run(&mut self, study_id: i64, r: &RunRecord) -> Result<i64, StudyError> {
        match self {
            Store::Sqlite(s) => s.save_run(study_id, r),
            Store::Postgres(s) => s.save_run(study_id, r),
        }
    }

    pub fn list(&mut self, study: Option<&str>) -> Result<Vec<RunRow>, StudyError> {
        match self {
            Store::Sqlite(s) => s.list(study),
            Store::Postgres(s) => s.list(study),
        }
    }

    pub fn export(&mut self, study: Option<&str>) -> Result<Vec<Value>, StudyError> {
        match self {
            Store::Sqlite(s) => s.export(study),
            Store::Postgres(s) => s.export(study),
        }
    }

    pub fn export_study(&mut self, study_id: i64) -> Result<Vec<Value>, StudyError> {
        match self {
            Store::Sqlite(s) => s.export_study(study_id),
            Store::Postgres(s) => s.export_study(study_id),
        }
    }

    pub fn show(&mut self, id: i64) -> Result<Option<Value>, StudyError> {
        match self {
            Store::Sqlite(s) => s.show(id),
            Store::Postgres(s) => s.show(id),
        }
    }
}

/// The SQLite store.
pub struct SqliteStore {
    conn: Connection,
    path: String,
}

/// FNV-1a, 64 bits: a hash that stays the same across builds and platforms.
pub fn text_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// Creates a new store file with mode 0600 (results are private; SQLite gives its journal the
/// same mode). An existing file is left as it is.
fn create_private(path: &str) -> Result<(), StudyError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StudyError::store(path, e)),
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the SQLite store at `path`.
    pub fn open(path: &str) -> Result<SqliteStore, StudyError> {
        create_private(path)?;
        let conn = Connection::open(path).map_err(|e| StudyError::store(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| StudyError::store(path, e))?;
        conn.execute_batch(SCHEMA)
            .map_err(|e| StudyError::store(path, format!("creating the schema: {e}")))?;
        Ok(SqliteStore {
            conn,
            path: path.to_string(),
        })
    }

    /// Opens an existing store (for `results`): a missing file is an error, not a new store.
    pub fn open_existing(path: &str) -> Result<SqliteStore, StudyError> {
        if !std::path::Path::new(path).exists() {
            return Err(StudyError::store(
                path,
                "no such file (run a study first, or give --store PATH)",
            ));
        }
        SqliteStore::open(path)
    }

    fn err(&self, e: impl std::fmt::Display) -> StudyError {
        StudyError::store(&self.path, e)
    }

    /// The id of the study with this name and text, registering it if new.
    pub fn study_id(&mut self, name: &str, file: &str, text: &str) -> Result<i64, StudyError> {
        let hash = text_hash(text);
        let found: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM studies WHERE name = ?1 AND text_hash = ?2",
                params![name, hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if let Some(id) = found {
            return Ok(id);
        }
        self.conn
            .execute(
                "INSERT INTO studies (name, file, text, text_hash) VALUES (?1, ?2, ?3, ?4)",
                params![name, file, text, hash],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Run indexes already finished for a study.
    pub fn finished(&self, study_id: i64) -> Result<BTreeSet<usize>, StudyError> {
        let mut st = self
            .conn
            .prepare("SELECT run_index FROM runs WHERE study_id = ?1")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![study_id], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|i| i as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// Stores one finished run in its own transaction; returns its id.
    pub fn save_run(&mut self, study_id: i64, r: &RunRecord) -> Result<i64, StudyError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| StudyError::store(&path, e))?;
        tx.execute(
            "INSERT INTO runs (study_id, run_index, point, repetition, round, target, started_at, finished_at, \
             tps, result, provenance, series, histogram) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
             strftime('%Y-%m-%dT%H:%M:%fZ', ?7, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', ?8, 'unixepoch'), \
             ?9, ?10, ?11, ?12, ?13)",
            params![
                study_id,
                r.run_index as i64,
                r.point.to_string(),
                r.repetition,
                r.round,
                r.target,
                r.started_unix,
                r.finished_unix,
                r.tps,
                r.result.to_string(),
                r.provenance.to_string(),
                r.series.to_string(),
                r.histogram.to_string(),
            ],
        )
        .map_err(|e| StudyError::store(&path, e))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(|e| StudyError::store(&path, e))?;
        Ok(id)
    }

    /// Stored runs (optionally of one study name), in study and run order.
    pub fn list(&self, study: Option<&str>) -> Result<Vec<RunRow>, StudyError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.id, s.name, r.point, r.repetition, r.round, r.target, r.finished_at, r.tps \
                 FROM runs r JOIN studies s ON s.id = r.study_id WHERE ?1 IS NULL OR s.name = ?1 \
                 ORDER BY r.study_id, r.run_index",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![study], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    study: r.get(1)?,
                    point: r.get(2)?,
                    repetition: r.get(3)?,
                    round: r.get(4)?,
                    target: r.get(5)?,
                    finished_at: r.get(6)?,
                    tps: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// Export documents (optionally of one study name), each with its `run_id`.
    pub fn export(&self, study: Option<&str>) -> Result<Vec<Value>, StudyError> {
        self.export_where(
            "?1 IS NULL OR s.name = ?1",
            rusqlite::types::Value::from(study.map(str::to_string)),
        )
    }

    /// Export documents of one study (one version of its text).
    pub fn export_study(&self, study_id: i64) -> Result<Vec<Value>, StudyError> {
        self.export_where("s.id = ?1", rusqlite::types::Value::from(study_id))
    }

    fn export_where(
        &self,
        filter: &str,
        param: rusqlite::types::Value,
    ) -> Result<Vec<Value>, StudyError> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT r.id, r.result FROM runs r JOIN studies s ON s.id = r.study_id \
                 WHERE {filter} ORDER BY r.study_id, r.run_index"
            ))
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![param], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text) = row.map_err(|e| self.err(e))?;
            let mut v: Value = serde_json::from_str(&text).map_err(|e| self.err(e))?;
            if let Some(o) = v.as_object_mut() {
                o.insert("run_id".into(), Value::from(id));
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Everything stored about one run: result, provenance, series, histogram and the study text.
    pub fn show(&self, id: i64) -> Result<Option<Value>, StudyError> {
        self.conn
            .query_row(
                "SELECT r.result, r.provenance, r.series, r.histogram, s.text, r.started_at, r.finished_at \
                 FROM runs r JOIN studies s ON s.id = r.study_id WHERE r.id = ?1",
                params![id],
                |r| {
                    let get = |i: usize| -> rusqlite::Result<Value> {
                        let t: String = r.get(i)?;
                        Ok(serde_json::from_str(&t).unwrap_or(Value::String(t)))
                    };
                    let mut v = get(0)?;
                    if let Some(o) = v.as_object_mut() {
                        o.insert("run_id".into(), Value::from(id));
                        o.insert("started_at".into(), Value::String(r.get(5)?));
                        o.insert("finished_at".into(), Value::String(r.get(6)?));
                        o.insert("provenance".into(), get(1)?);
                        o.insert("series".into(), get(2)?);
                        o.insert("histogram".into(), get(3)?);
                        o.insert("study_text".into(), Value::String(r.get(4)?));
                    }
                    Ok(v)
                },
            )
            .optional()
            .map_err(|e| self.err(e))
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
