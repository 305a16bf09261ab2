//! The results store on a PostgreSQL server (`--store postgresql://…`), for teams: the same
//! tables as the SQLite store, in a schema `pgrig` (JSON documents as `jsonb`), one INSERT (one
//! transaction) per finished run. The session running a study holds a session advisory lock on
//! it (released by the server when the session ends), so a second pgrig running the same study
//! is refused with the holder named. Readers open with `default_transaction_read_only` and
//! create nothing. Spoken through pgrig's own wire driver; the URL's password is never shown.

use std::collections::BTreeSet;
use std::time::Duration;

use pgrig_wire::quote::literal as lit;
use pgrig_wire::{Config, ConnArgs, Connection, QueryResult};
use serde_json::Value;

use crate::error::StoreError;
use crate::store_schema::{check_version, text_hash, RunRecord, RunRow, SCHEMA_VERSION};

const SCHEMA: &str = "
SET standard_conforming_strings = on;
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS pgrig;
CREATE TABLE IF NOT EXISTS pgrig.meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO pgrig.meta VALUES ('schema_version', '%VERSION%') ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS pgrig.studies (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    file text,
    text text NOT NULL,
    text_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (name, text_hash)
);
CREATE TABLE IF NOT EXISTS pgrig.runs (
    id bigserial PRIMARY KEY,
    study_id bigint NOT NULL REFERENCES pgrig.studies (id),
    run_index integer NOT NULL,
    point jsonb NOT NULL,
    repetition integer NOT NULL,
    round integer NOT NULL,
    target text NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    tps double precision NOT NULL,
    result jsonb NOT NULL,
    provenance jsonb NOT NULL,
    series jsonb NOT NULL,
    histogram jsonb NOT NULL,
    UNIQUE (study_id, run_index)
);
";

/// The first key of the advisory locks that hold studies (`pg_locks.classid`); the second is
/// the study's id.
const LOCK_CLASS: u32 = 0x7067_7269;

/// ISO-8601 UTC with milliseconds, as the SQLite store writes it.
const ISO: &str = r#"to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#;

pub struct PgStore {
    rt: tokio::runtime::Runtime,
    conn: Connection,
    /// the URL without its password, for messages
    shown: String,
    /// readers: how long connecting and each statement may take (a server that never answers
    /// must not hang `results` or `report`); none for a study writing its runs
    deadline: Option<Duration>,
}

/// How long a reader waits for the store server to connect or to answer one statement.
const READ_DEADLINE: Duration = Duration::from_secs(60);

/// `fut`, ended with an error after `deadline` when there is one.
fn within<T, E: std::fmt::Display>(
    rt: &tokio::runtime::Runtime,
    deadline: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match deadline {
        None => rt.block_on(fut).map_err(|e| e.to_string()),
        Some(d) => match rt.block_on(async { tokio::time::timeout(d, fut).await }) {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "the server did not answer within {} s",
                d.as_secs()
            )),
        },
    }
}

fn iso(col: &str) -> String {
    ISO.replace("%s", col)
}

impl PgStore {
    fn connect(url: &str, deadline: Option<Duration>) -> Result<PgStore, StoreError> {
        let shown = pgrig_wire::mask_passwords(url);
        let fail = |e: &dyn std::fmt::Display| StoreError::new(shown.clone(), e);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(&e))?;
        let cfg = Config::from_args(
            &ConnArgs {
                dbname: Some(url.to_string()),
                ..Default::default()
            },
            "pgrig",
        )
        .map_err(|e| fail(&e))?;
        let conn = within(&rt, deadline, Connection::connect(&cfg)).map_err(|e| fail(&e))?;
        Ok(PgStore {
            rt,
            conn,
            shown,
            deadline,
        })
    }

    /// Opens the store for a study, creating schema `pgrig` and its tables if needed.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let mut s = PgStore::connect(url, None)?;
        if s.has_store()? {
            s.check_version()?;
        }
        s.query(&SCHEMA.replace("%VERSION%", &SCHEMA_VERSION.to_string()))
            .map_err(|e| StoreError::new(s.shown.clone(), format!("creating the schema: {e}")))?;
        Ok(s)
    }

    /// Opens an existing store read-only: the session is read-only and nothing is created.
    pub fn open_existing(url: &str) -> Result<PgStore, StoreError> {
        Self::open_existing_within(url, READ_DEADLINE)
    }

    fn open_existing_within(url: &str, deadline: Duration) -> Result<PgStore, StoreError> {
        let mut s = PgStore::connect(url, Some(deadline))?;
        s.query("SET default_transaction_read_only = on")?;
        if !s.has_store()? {
            return Err(StoreError::new(
                s.shown.clone(),
                "no pgrig results store in this database (no tables pgrig.runs and \
                 pgrig.studies); `pgrig study FILE --store URL` creates one",
            ));
        }
        s.check_version()?;
        Ok(s)
    }

    fn has_store(&mut self) -> Result<bool, StoreError> {
        let rows = self.rows(
            "SELECT to_regclass('pgrig.runs') IS NOT NULL AND to_regclass('pgrig.studies') IS NOT NULL",
        )?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .is_some_and(|v| v == "t"))
    }

    fn check_version(&mut self) -> Result<(), StoreError> {
        let rows = self.rows(
            "SELECT CASE WHEN to_regclass('pgrig.meta') IS NULL THEN '0' ELSE \
             (SELECT value FROM pgrig.meta WHERE key = 'schema_version') END",
        )?;
        let v = rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.parse().ok());
        check_version(&self.shown, v.unwrap_or(0))
    }

    fn query(&mut self, sql: &str) -> Result<Vec<QueryResult>, StoreError> {
        let conn = &mut self.conn;
        within(&self.rt, self.deadline, conn.simple_query(sql))
            .map_err(|e| StoreError::new(self.shown.clone(), e.trim_end()))
    }

    /// Rows of the last statement's result, as text (NULL as "").
    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, StoreError> {
        let results = self.query(sql)?;
        let Some(last) = results.last() else {
            return Ok(Vec::new());
        };
        Ok(last
            .rows
            .iter()
            .map(|r| {
                (0..last.columns.len())
                    .map(|i| r.get(i).unwrap_or("").to_string())
                    .collect()
            })
            .collect())
    }

    /// Runs `sql` and reads the integer in the first column of its first row (an id).
    fn returned_id(&mut self, sql: &str) -> Result<i64, StoreError> {
        let rows = self.rows(sql)?;
        let id = rows
            .first()
            .and_then(|r| r.first())
            .cloned()
            .unwrap_or_default();
        self.int(&id)
    }

    fn int(&self, s: &str) -> Result<i64, StoreError> {
        s.parse()
            .map_err(|_| StoreError::new(self.shown.clone(), format!("unexpected value {s:?}")))
    }

    /// The study's id (registered if new), held by this session until it ends.
    pub fn study_id(&mut self, name: &str, file: &str, text: &str) -> Result<i64, StoreError> {
        let (quoted, file, hash) = (lit(name), lit(file), lit(&text_hash(text)));
        let id = self.returned_id(&format!(
            "INSERT INTO pgrig.studies (name, file, text, text_hash) VALUES ({quoted}, {file}, {}, {hash}) \
             ON CONFLICT (name, text_hash) DO NOTHING; \
             SELECT id FROM pgrig.studies WHERE name = {quoted} AND text_hash = {hash}",
            lit(text)
        ))?;
        self.hold(name, id)?;
        Ok(id)
    }

    /// Takes the study's advisory lock for this session, or names the session that has it.
    fn hold(&mut self, name: &str, id: i64) -> Result<(), StoreError> {
        let got = self.rows(&format!(
            "SELECT pg_try_advisory_lock({}, {id})",
            LOCK_CLASS as i32
        ))?;
        if got
            .first()
            .and_then(|r| r.first())
            .is_some_and(|v| v == "t")
        {
            return Ok(());
        }
        let holder = self.rows(&format!(
            "SELECT a.pid, COALESCE(NULLIF(a.application_name, ''), '?'), \
             COALESCE(host(a.client_addr), 'a local socket'), {} \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.classid = {LOCK_CLASS} AND l.objid = {id} \
             AND l.objsubid = 2 AND l.granted",
            iso("a.backend_start")
        ))?;
        let who = match holder.first() {
            Some(r) => format!(
                "another session (server process {}, application {}, from {}, connected since {})",
                r[0], r[1], r[2], r[3]
            ),
            None => "another session".to_string(),
        };
        Err(StoreError::new(
            self.shown.clone(),
            format!(
                "study \"{name}\" is being run into this store by {who}; two runs of one study \
                 would repeat its runs: wait for it to finish or stop it (a study resumes where it \
                 stopped)"
            ),
        ))
    }

    pub fn finished(&mut self, study_id: i64) -> Result<BTreeSet<usize>, StoreError> {
        let rows = self.rows(&format!(
            "SELECT run_index FROM pgrig.runs WHERE study_id = {study_id}"
        ))?;
        rows.iter()
            .map(|r| self.int(&r[0]).map(|i| i as usize))
            .collect()
    }

    pub fn save_run(&mut self, study_id: i64, r: &RunRecord) -> Result<i64, StoreError> {
        let sql = format!(
            "INSERT INTO pgrig.runs (study_id, run_index, point, repetition, round, target, started_at, \
             finished_at, tps, result, provenance, series, histogram) VALUES ({study_id}, {}, {}, {}, {}, {}, \
             to_timestamp({}), to_timestamp({}), {}, {}, {}, {}, {}) RETURNING id",
            r.run_index,
            lit(&r.point.to_string()),
            r.repetition,
            r.round,
            lit(&r.target),
            r.started_unix,
            r.finished_unix,
            if r.tps.is_finite() { r.tps } else { 0.0 },
            lit(&r.result.to_string()),
            lit(&r.provenance.to_string()),
            lit(&r.series.to_string()),
            lit(&r.histogram.to_string()),
        );
        self.returned_id(&sql)
    }

    fn study_filter(study: Option<&str>) -> String {
        match study {
            Some(s) => format!("WHERE s.name = {}", lit(s)),
            None => String::new(),
        }
    }

    pub fn list(&mut self, study: Option<&str>) -> Result<Vec<RunRow>, StoreError> {
        let rows = self.rows(&format!(
            "SELECT r.id, s.name, r.point::text, r.repetition, r.round, r.target, {}, r.tps \
             FROM pgrig.runs r JOIN pgrig.studies s ON s.id = r.study_id {} \
             ORDER BY r.study_id, r.run_index",
            iso("r.finished_at"),
            Self::study_filter(study)
        ))?;
        rows.into_iter()
            .map(|r| {
                Ok(RunRow {
                    id: self.int(&r[0])?,
                    study: r[1].clone(),
                    point: r[2].clone(),
                    repetition: self.int(&r[3])? as u32,
                    round: self.int(&r[4])? as u32,
                    target: r[5].clone(),
                    finished_at: r[6].clone(),
                    tps: r[7].parse().unwrap_or(0.0),
                })
            })
            .collect()
    }

    fn export_where(&mut self, filter: &str) -> Result<Vec<Value>, StoreError> {
        let rows = self.rows(&format!(
            "SELECT r.id, r.result::text FROM pgrig.runs r JOIN pgrig.studies s ON s.id = r.study_id \
             {filter} ORDER BY r.study_id, r.run_index"
        ))?;
        let mut out = Vec::new();
        for r in rows {
            let mut v: Value =
                serde_json::from_str(&r[1]).map_err(|e| StoreError::new(self.shown.clone(), e))?;
            if let Some(o) = v.as_object_mut() {
                o.insert("run_id".into(), Value::from(self.int(&r[0])?));
            }
            out.push(v);
        }
        Ok(out)
    }

    pub fn export(&mut self, study: Option<&str>) -> Result<Vec<Value>, StoreError> {
        self.export_where(&Self::study_filter(study))
    }

    pub fn export_study(&mut self, study_id: i64) -> Result<Vec<Value>, StoreError> {
        self.export_where(&format!("WHERE s.id = {study_id}"))
    }

    pub fn show(&mut self, id: i64) -> Result<Option<Value>, StoreError> {
        let rows = self.rows(&format!(
            "SELECT r.result::text, r.provenance::text, r.series::text, r.histogram::text, s.text, {}, {} \
             FROM pgrig.runs r JOIN pgrig.studies s ON s.id = r.study_id WHERE r.id = {id}",
            iso("r.started_at"),
            iso("r.finished_at")
        ))?;
        let Some(r) = rows.into_iter().next() else {
            return Ok(None);
        };
        let json = |t: &str| serde_json::from_str(t).unwrap_or(Value::String(t.to_string()));
        let mut v = json(&r[0]);
        if let Some(o) = v.as_object_mut() {
            o.insert("run_id".into(), Value::from(id));
            o.insert("started_at".into(), Value::String(r[5].clone()));
            o.insert("finished_at".into(), Value::String(r[6].clone()));
            o.insert("provenance".into(), json(&r[1]));
            o.insert("series".into(), json(&r[2]));
            o.insert("histogram".into(), json(&r[3]));
            o.insert("study_text".into(), Value::String(r[4].clone()));
        }
        Ok(Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gives_up_on_a_server_that_never_answers() {
        // accepts the connection and says nothing (issue 21: every input reader is time-bound)
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = std::thread::spawn(move || listener.accept().map(|(c, _)| c));
        let start = std::time::Instant::now();
        let url = format!("postgresql://u@127.0.0.1:{port}/db?sslmode=disable");
        let e = match PgStore::open_existing_within(&url, Duration::from_secs(1)) {
            Ok(_) => panic!("opened"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("did not answer within 1 s"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10));
        drop(silent.join());
    }
}
