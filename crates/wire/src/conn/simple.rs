//! Conveniences for non-hot paths: simple-protocol queries with text results, statements whose
//! results are ignored, and COPY FROM STDIN (streaming or from chunks).

use super::Connection;
use crate::error::Error;
use crate::proto::backend::Backend;
use crate::proto::DbError;

/// One row of a simple query, as text (`None` is NULL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleRow(pub Vec<Option<String>>);

impl SimpleRow {
    /// Column `i` as text; `None` for NULL or out of range.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.0.get(i).and_then(|v| v.as_deref())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The outcome of one statement of a simple query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// Column names (empty for statements without a result set).
    pub columns: Vec<String>,
    pub rows: Vec<SimpleRow>,
    /// The command tag (`SELECT 1`, `CREATE TABLE`, ...); empty for an empty query.
    pub tag: String,
}

impl QueryResult {
    /// The row count at the end of the tag (`UPDATE 3` → 3), if any.
    pub fn rows_affected(&self) -> Option<u64> {
        let last = self.tag.rsplit(' ').next()?;
        if last.len() == self.tag.len() {
            return None;
        }
        last.parse().ok()
    }
}

/// CopyData messages are cut at this size, and the buffer is sent when it exceeds it.
const COPY_CHUNK: usize = 64 * 1024;

impl Connection {
    /// Runs `sql` (possibly several statements) with the simple protocol; text results.
    /// The first server error is returned after the server is ready again.
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<QueryResult>, Error> {
        self.query(sql.as_bytes());
        self.send().await?;
        let mut results = Vec::new();
        let mut current = QueryResult::default();
        let mut error: Option<DbError> = None;
        loop {
            match self.recv().await? {
                Backend::RowDescription(rd) => {
                    current.columns = rd.names().map(str::to_owned).collect();
                }
                Backend::DataRow(row) => current.rows.push(SimpleRow(
                    row.iter()
                        .map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                )),
                Backend::CommandComplete(tag) => {
                    current.tag = tag.as_str().to_owned();
                    results.push(std::mem::take(&mut current));
                }
                Backend::EmptyQueryResponse => results.push(std::mem::take(&mut current)),
                Backend::Error(e) => {
                    error.get_or_insert_with(|| e.to_db_error().with_query(sql));
                }
                Backend::CopyInResponse => {
                    self.copy_fail("COPY FROM STDIN is not supported by simple_query; use copy_in");
                    self.send().await?;
                }
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e.into()),
            None => Ok(results),
        }
    }

    /// Runs `sql` with the simple protocol, ignoring any rows.
    pub async fn execute_simple(&mut self, sql: &str) -> Result<(), Error> {
        self.query(sql.as_bytes());
        self.send().await?;
        loop {
            match self.recv().await? {
                Backend::Error(e) => {
                    let e = e.to_db_error().with_query(sql);
                    self.skip_until_ready().await?;
                    return Err(e.into());
                }
                Backend::CopyInResponse => {
                    self.copy_fail(
                        "COPY FROM STDIN is not supported by execute_simple; use copy_in",
                    );
                    self.send().await?;
                }
                Backend::ReadyForQuery(_) => return Ok(()),
                _ => {}
            }
        }
    }

    /// Starts `COPY ... FROM STDIN` (`sql`); write data with [`CopyIn::write`].
    pub async fn copy_in_start(&mut self, sql: &str) -> Result<CopyIn<'_>, Error> {
        self.query(sql.as_bytes());
        self.send().await?;
        loop {
            match self.recv().await? {
                Backend::CopyInResponse => return Ok(CopyIn { conn: self }),
                Backend::Error(e) => {
                    let e = e.to_db_error().with_query(sql);
                    self.skip_until_ready().await?;
                    return Err(e.into());
                }
                Backend::ReadyForQuery(_) => {
                    return Err(Error::usage("the statement did not start COPY FROM STDIN"))
                }
                _ => {}
            }
        }
    }

    /// Runs `COPY ... FROM STDIN` feeding it `chunks`; returns the number of rows copied.
    pub async fn copy_in<I>(&mut self, sql: &str, chunks: I) -> Result<u64, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut copy = self.copy_in_start(sql).await?;
        for chunk in chunks {
            copy.write(chunk.as_ref()).await?;
        }
        copy.finish().await
    }
}

/// An open COPY FROM STDIN. Dropping it without [`finish`](Self::finish) or
/// [`fail`](Self::fail) leaves the connection unusable.
pub struct CopyIn<'a> {
    conn: &'a mut Connection,
}

impl CopyIn<'_> {
    /// Queues `data` (any split of the COPY text), sending once enough is buffered.
    pub async fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        for piece in data.chunks(COPY_CHUNK) {
            self.conn.copy_data(piece);
            if self.conn.pending_bytes() >= COPY_CHUNK {
                self.conn.send().await?;
            }
        }
        Ok(())
    }

    /// Ends the COPY; returns the number of rows copied, or the server's error.
    pub async fn finish(self) -> Result<u64, Error> {
        self.conn.copy_done();
        self.conn.send().await?;
        let mut rows = 0;
        let mut error = None;
        loop {
            match self.conn.recv().await? {
                Backend::CommandComplete(tag) => rows = tag.rows().unwrap_or(0),
                Backend::Error(e) => {
                    error.get_or_insert_with(|| e.to_db_error());
                }
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e.into()),
            None => Ok(rows),
        }
    }

    /// Aborts the COPY with `reason`; the server's resulting error is consumed.
    pub async fn fail(self, reason: &str) -> Result<(), Error> {
        self.conn.copy_fail(reason);
        self.conn.send().await?;
        self.conn.skip_until_ready().await?;
        Ok(())
    }
}
