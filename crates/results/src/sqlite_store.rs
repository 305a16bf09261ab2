//! The SQLite results store (one file, default `./pgrig.db`). A study opens it for writing
//! ([`SqliteStore::open`]: created 0600 whatever the umask, SQLite's journal files inherit that
//! mode; a file that is not a pgrig store, or one of another schema version, is refused) and
//! holds its study for the whole run ([`crate::store_lock`]). `pgrig results` (and reports)
//! open it read-only ([`SqliteStore::open_existing`]), so reading never writes: a read-only
//! file can be read, and an empty file stays empty.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

use crate::error::StoreError;
use crate::store_lock::StudyLock;
use crate::store_schema::{
    check_version, create_private, text_hash, RunRecord, RunRow, SCHEMA_VERSION,
};
use pgrig_wire::strerror;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('schema_version', '%VERSION%');
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

/// The SQLite store.
pub struct SqliteStore {
    conn: Connection,
    path: String,
    /// The study this process is running into the store (writers only).
    lock: Option<StudyLock>,
}

/// What opening a store is for.
#[derive(Clone, Copy, PartialEq)]
enum Access {
    Read,
    /// writing into a file that existed
    Write,
    /// writing into the file this process has just created
    Create,
}

/// Checks that the database is a pgrig store of this schema version (or, for writing, empty).
fn check_kind(conn: &Connection, path: &str, access: Access) -> Result<(), StoreError> {
    check_tables(conn, path, access)
}

/// [`check_kind`]'s work; `Access::Write` accepts a database without tables only when this
/// process has just created the file ([`SqliteStore::open`] checks that first).
fn check_tables(conn: &Connection, path: &str, access: Access) -> Result<(), StoreError> {
    let not_store = |why: &str| StoreError::new(path, format!("not a pgrig results store ({why})"));
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => not_store("not an SQLite database"),
            _ => StoreError::new(path, e),
        })?;
    let has = |t: &str| tables.iter().any(|x| x == t);
    if tables.is_empty() {
        return match access {
            Access::Create => Ok(()),
            Access::Read | Access::Write => Err(not_store(
                "an empty database; `pgrig study FILE --store PATH` creates a store",
            )),
        };
    }
    if !has("runs") || !has("studies") {
        return Err(not_store(&format!(
            "it holds other tables: {}",
            tables.join(", ")
        )));
    }
    let version: i64 = if has("meta") {
        conn.query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()
        .map_err(|e| StoreError::new(path, e))?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
    } else {
        0
    };
    check_version(path, version)
}

/// Why a store path cannot be opened as a file.
enum NotRegular {
    Io(std::io::Error),
    /// a FIFO, a device, a socket or a directory
    Kind(&'static str),
}

impl NotRegular {
    fn into_error(self, path: &str) -> StoreError {
        match self {
            NotRegular::Io(e) => StoreError::new(path, strerror(&e)),
            NotRegular::Kind(k) => StoreError::new(
                path,
                format!("{k}, not a regular file: a SQLite store is a regular file"),
            ),
        }
    }
}

/// Opens `path` without blocking (a FIFO would wait for a writer forever) and checks that it is
/// a regular file.
fn regular_file(path: &str, mode: libc::c_int) -> Result<(), NotRegular> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(mode != libc::O_WRONLY)
        .write(mode != libc::O_RDONLY)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let t = match file.and_then(|f| f.metadata()) {
        Ok(m) => m.file_type(),
        // opening a FIFO for writing without a reader fails with ENXIO: it is still a FIFO
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(NotRegular::Kind("a FIFO")),
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
            return Err(NotRegular::Kind("a directory"))
        }
        Err(e) => return Err(NotRegular::Io(e)),
    };
    match () {
        _ if t.is_file() => Ok(()),
        _ if t.is_fifo() => Err(NotRegular::Kind("a FIFO")),
        _ if t.is_dir() => Err(NotRegular::Kind("a directory")),
        _ if t.is_socket() => Err(NotRegular::Kind("a socket")),
        _ => Err(NotRegular::Kind("a device")),
    }
}

/// The tables, created in one transaction (never half a store).
fn schema() -> String {
    format!(
        "BEGIN IMMEDIATE;\n{}\nCOMMIT;",
        SCHEMA.replace("%VERSION%", &SCHEMA_VERSION.to_string())
    )
}

impl SqliteStore {
    /// Opens the store at `path` for a study, creating it (0600) if needed.
    pub fn open(path: &str) -> Result<SqliteStore, StoreError> {
        let created = create_private(std::path::Path::new(path))
            .map_err(|e| StoreError::new(path, format!("could not create it: {}", strerror(&e))))?;
        regular_file(path, libc::O_WRONLY).map_err(|e| match e {
            NotRegular::Io(e) => StoreError::new(
                path,
                format!(
                    "a study writes its store, and this one cannot be written: {}",
                    strerror(&e)
                ),
            ),
            e => e.into_error(path),
        })?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Self::connect(path, flags)?;
        let access = if created {
            Access::Create
        } else {
            Access::Write
        };
        check_kind(&conn, path, access)?;
        conn.execute_batch(&schema())
            .map_err(|e| StoreError::new(path, format!("creating the schema: {e}")))?;
        Ok(SqliteStore {
            conn,
            path: path.to_string(),
            lock: None,
        })
    }

    /// Opens an existing store read-only (`pgrig results`, reports): nothing is ever written,
    /// a missing file is an error, not a new store.
    pub fn open_existing(path: &str) -> Result<SqliteStore, StoreError> {
        if !std::path::Path::new(path).exists() {
            return Err(StoreError::new(
                path,
                "no such file (run a study first, or give --store PATH)",
            ));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Self::connect(path, flags)?;
        check_kind(&conn, path, Access::Read)?;
        Ok(SqliteStore {
            conn,
            path: path.to_string(),
            lock: None,
        })
    }

    /// Checks an existing file as [`SqliteStore::open`] would, read-only.
    pub fn check(path: &str) -> Result<(), StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        check_kind(&Self::connect(path, flags)?, path, Access::Write)
    }

    fn connect(path: &str, flags: OpenFlags) -> Result<Connection, StoreError> {
        // SQLite says only "unable to open database file" (and waits forever on a FIFO): say
        // why first
        regular_file(path, libc::O_RDONLY).map_err(|e| match e {
            NotRegular::Io(e) => {
                StoreError::new(path, format!("could not read it: {}", strerror(&e)))
            }
            e => e.into_error(path),
        })?;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| StoreError::new(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| StoreError::new(path, e))?;
        Ok(conn)
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::new(&self.path, e)
    }

    /// The id of the study with this name and text, registering it if new, and held for this
    /// process until the store is closed: a second process running the same study into this
    /// store gets an error naming this one.
    pub fn study_id(&mut self, name: &str, file: &str, text: &str) -> Result<i64, StoreError> {
        let hash = text_hash(text);
        // INSERT OR IGNORE: two processes registering the same study at once get one row
        self.conn
            .execute(
                "INSERT OR IGNORE INTO studies (name, file, text, text_hash) VALUES (?1, ?2, ?3, ?4)",
                params![name, file, text, hash],
            )
            .map_err(|e| self.err(e))?;
        let id: i64 = self
            .conn
            .query_row(
                "SELECT id FROM studies WHERE name = ?1 AND text_hash = ?2",
                params![name, hash],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        // the study this store already holds stays held (its lock would conflict with itself)
        if self.lock.as_ref().is_none_or(|l| l.id != id) {
            self.lock = None;
            self.lock = Some(StudyLock::acquire(&self.path, name, id)?);
        }
        Ok(id)
    }

    /// Run indexes already finished for a study.
    pub fn finished(&self, study_id: i64) -> Result<BTreeSet<usize>, StoreError> {
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
    pub fn save_run(&mut self, study_id: i64, r: &RunRecord) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| StoreError::new(&path, e))?;
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
        .map_err(|e| StoreError::new(&path, e))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(|e| StoreError::new(&path, e))?;
        Ok(id)
    }

    /// Stored runs (optionally of one study name), in study and run order.
    pub fn list(&self, study: Option<&str>) -> Result<Vec<RunRow>, StoreError> {
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
    pub fn export(&self, study: Option<&str>) -> Result<Vec<Value>, StoreError> {
        self.export_where(
            "?1 IS NULL OR s.name = ?1",
            rusqlite::types::Value::from(study.map(str::to_string)),
        )
    }

    /// Export documents of one study (one version of its text).
    pub fn export_study(&self, study_id: i64) -> Result<Vec<Value>, StoreError> {
        self.export_where("s.id = ?1", rusqlite::types::Value::from(study_id))
    }

    fn export_where(
        &self,
        filter: &str,
        param: rusqlite::types::Value,
    ) -> Result<Vec<Value>, StoreError> {
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
    pub fn show(&self, id: i64) -> Result<Option<Value>, StoreError> {
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
