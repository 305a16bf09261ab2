//! Native workloads: transaction programs written in Rust (sysbench's OLTP family, YCSB, TPC-C)
//! that run on the same runner as pgbench scripts — clients, `-j` threads, `-R` with latency
//! from the scheduled start, retries, per-transaction-type and per-statement statistics,
//! progress, the run document.
//!
//! The interface is sans-IO: a workload names its statements and transaction types once
//! ([`Catalogue`]); each client gets a [`TxProgram`] that, step by step, says which statement to
//! run next and writes its parameters into a reused [`Params`] buffer; the engine sends it in
//! the run's query mode and hands the reply ([`Reply`]: the row count and, when the statement
//! asks for them, the returned values) to the next step. Nothing here allocates per
//! transaction: the engine owns and reuses the buffers.
//!
//! Retries: when a statement fails with a retryable SQLSTATE ([`Workload::retryable`], by
//! default serialization failure 40001 and deadlock 40P01) the engine rolls the transaction
//! back and calls [`TxProgram::begin`] again with `retry = true`, within the run's
//! `--max-tries` (0 = unlimited); the program must then replay the same inputs.

use std::fmt;
use std::sync::Arc;

/// A statement's index in [`Catalogue::statements`].
pub type StmtId = u16;

/// One statement a workload runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// Short name for reports (`point_select`, `new_order.get_district`); the per-statement
    /// report lines show the SQL text.
    pub name: String,
    /// SQL with `$1..$n` placeholders (none for BEGIN/COMMIT).
    pub sql: String,
    /// Always sent with the simple protocol, whatever the query mode (BEGIN/COMMIT, as sysbench
    /// sends them).
    pub simple: bool,
    /// Keep the returned rows' values for the program (else only their number is counted).
    pub rows: bool,
}

impl Statement {
    /// A statement whose returned values the program does not read.
    pub fn new(name: impl Into<String>, sql: impl Into<String>) -> Self {
        Statement {
            name: name.into(),
            sql: sql.into(),
            simple: false,
            rows: false,
        }
    }

    /// A statement always sent as a simple query (BEGIN, COMMIT, ROLLBACK).
    pub fn simple(name: impl Into<String>, sql: impl Into<String>) -> Self {
        Statement {
            simple: true,
            ..Statement::new(name, sql)
        }
    }

    /// The program reads the returned rows' values ([`Reply::get`]).
    pub fn with_rows(mut self) -> Self {
        self.rows = true;
        self
    }

    /// Number of `$n` parameters (the highest `n` in the text).
    pub fn param_count(&self) -> u16 {
        let b = self.sql.as_bytes();
        let mut max = 0u16;
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'$' {
                let mut n: u32 = 0;
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    n = n * 10 + u32::from(b[j] - b'0');
                    j += 1;
                }
                if j > i + 1 {
                    max = max.max(n.min(u32::from(u16::MAX)) as u16);
                }
                i = j;
            } else {
                i += 1;
            }
        }
        max
    }
}

/// One transaction type: its name, its weight in the mix and the statements it may run (in
/// the order the per-statement report lists them).
#[derive(Clone, Debug, PartialEq)]
pub struct TxType {
    pub name: String,
    /// Relative weight when the engine chooses ([`TxProgram::choose`] returns `None`); 0 =
    /// never chosen by the engine.
    pub weight: u32,
    pub statements: Vec<StmtId>,
}

/// What a workload runs: every statement once, and the transaction types.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Catalogue {
    pub statements: Vec<Statement>,
    pub transactions: Vec<TxType>,
}

impl Catalogue {
    /// Adds a statement and returns its id.
    pub fn add(&mut self, s: Statement) -> StmtId {
        self.statements.push(s);
        (self.statements.len() - 1) as StmtId
    }
}

/// Where a client's program starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSeed {
    /// 0-based client number within the run.
    pub id: u32,
    /// Clients in the run.
    pub clients: u32,
    /// The run's random seed (`--random-seed`): a program derives its own streams from it and
    /// its id, so a run with the same seed issues the same work.
    pub seed: u64,
}

/// A native workload: shared, read-only during the run.
pub trait Workload: Send + Sync + fmt::Debug {
    /// The name runs are labelled with (`oltp_read_write`, `ycsb-a`, `tpcc`).
    fn name(&self) -> &str;
    /// Statements and transaction types.
    fn catalogue(&self) -> &Catalogue;
    /// One client's program, made before the run starts.
    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram>;
    /// SQLSTATEs after which a transaction is rolled back and tried again.
    fn retryable(&self, sqlstate: &str) -> bool {
        matches!(sqlstate, "40001" | "40P01")
    }
    /// Statements run once on one connection before the clients start (e.g. a check that
    /// the tables exist); an error there ends the run with that error.
    fn preflight(&self) -> Vec<String> {
        Vec::new()
    }
    /// Queries run after the preflight, on the same connection, asking the dataset what the
    /// run must know (TPC-C's load-time constants); each answer (its first row's first value,
    /// or the server's error) goes to [`configure`](Self::configure).
    fn dataset_queries(&self) -> Vec<String> {
        Vec::new()
    }
    /// Takes the answers of [`dataset_queries`](Self::dataset_queries) before any client's
    /// program is made; an error ends the run with that message.
    fn configure(&self, _answers: &[Result<Option<String>, String>]) -> Result<(), String> {
        Ok(())
    }
    /// The run's `scale` (`options.scale` of the run document), when the workload has one
    /// (TPC-C's warehouses).
    fn scale(&self) -> Option<i64> {
        None
    }
}

/// What a program does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Run this statement with the parameters just written into [`Params`].
    Run(StmtId),
    /// The transaction ended (it committed, or it ran no transaction block).
    Done,
    /// The transaction ended by a rollback the workload intends (TPC-C's unused item): counted
    /// as completed, and in the run's `rollbacks`.
    RolledBack,
    /// Something the program cannot go on from (a row that must exist is missing): the client
    /// aborts with this message.
    Abort(String),
}

/// One client's transaction program (state machine). Owned by its client's task.
pub trait TxProgram: Send {
    /// The next transaction's type, or `None` to let the engine choose by the weights.
    fn choose(&mut self) -> Option<usize> {
        None
    }
    /// How long to wait before transaction `tx` starts, in µs (TPC-C's keying and think
    /// times): not counted in its latency. Called once per transaction, after the choice.
    fn delay_us(&mut self, _tx: usize) -> u64 {
        0
    }
    /// Called after each transaction: `true` to close the connection and open a new one
    /// before the next (sysbench's `--reconnect=N`), counted in the run's `reconnects`.
    fn reconnect(&mut self) -> bool {
        false
    }
    /// Called once when the client's run ends normally (its limit reached or the run
    /// stopped), on its open connection: a last statement to run, outside any transaction's
    /// figures but counted in the statement's (sysbench's `thread_done`, which sends
    /// bulk_insert's last batch). Parameters go into `params` (cleared by the engine).
    fn finish(&mut self, _params: &mut Params) -> Option<StmtId> {
        None
    }
    /// A transaction of type `tx` begins; `retry`: the previous attempt of the same transaction
    /// failed with a retryable error and was rolled back (replay the same inputs).
    fn begin(&mut self, tx: usize, retry: bool);
    /// The next step. `reply` is the reply to the statement run last (`None` at the first step
    /// of an attempt). Parameters for [`Step::Run`] go into `params` (cleared by the engine).
    fn step(&mut self, reply: Option<&Reply<'_>>, params: &mut Params) -> Step;
    /// The program's own counters at the end of the run (summed over clients into the run
    /// document's `workload_counters`), e.g. TPC-C's districts skipped by Delivery.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A shareable workload in a [`crate::config::BenchConfig`]: compared by name and identity.
#[derive(Clone)]
pub struct NativeWorkload(pub Arc<dyn Workload>);

impl fmt::Debug for NativeWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NativeWorkload({})", self.0.name())
    }
}

impl PartialEq for NativeWorkload {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

/// How a parameter is rendered when the query mode is simple (values inlined into the text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// inlined as written (digits)
    Number,
    /// inlined as a quoted literal (`'...'`, quotes doubled)
    Text,
    Null,
}

/// A statement's parameters in text format, written into one reused buffer.
#[derive(Debug, Default)]
pub struct Params {
    buf: Vec<u8>,
    spans: Vec<(u32, u32, ParamKind)>,
}

impl Params {
    pub fn new() -> Self {
        Params {
            buf: Vec::with_capacity(512),
            spans: Vec::with_capacity(32),
        }
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.spans.clear();
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// An integer parameter.
    pub fn int(&mut self, v: i64) -> &mut Self {
        let start = self.buf.len();
        push_int(&mut self.buf, v);
        self.push(start, ParamKind::Number)
    }

    /// A decimal parameter written with `decimals` digits after the point.
    pub fn decimal(&mut self, v: f64, decimals: usize) -> &mut Self {
        use std::io::Write;
        let start = self.buf.len();
        let _ = write!(self.buf, "{v:.decimals$}");
        self.push(start, ParamKind::Number)
    }

    /// A text parameter.
    pub fn text(&mut self, v: &[u8]) -> &mut Self {
        let start = self.buf.len();
        self.buf.extend_from_slice(v);
        self.push(start, ParamKind::Text)
    }

    /// A text parameter written in place (no allocation): `f` appends the value's bytes.
    pub fn text_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let start = self.buf.len();
        f(&mut self.buf);
        self.push(start, ParamKind::Text)
    }

    /// A parameter inlined as written, in any query mode a SQL fragment the program vouches
    /// for (bulk_insert's `(1,1),(2,2)` rows after `VALUES`): for statements sent as simple
    /// queries only (bound, it is sent as text).
    pub fn raw_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let start = self.buf.len();
        f(&mut self.buf);
        self.push(start, ParamKind::Number)
    }

    /// SQL NULL.
    pub fn null(&mut self) -> &mut Self {
        let start = self.buf.len();
        self.push(start, ParamKind::Null)
    }

    fn push(&mut self, start: usize, kind: ParamKind) -> &mut Self {
        self.spans.push((start as u32, self.buf.len() as u32, kind));
        self
    }

    /// Parameter `i` (0-based): its bytes (`None` for NULL) and kind.
    pub fn get(&self, i: usize) -> Option<(Option<&[u8]>, ParamKind)> {
        let &(a, b, kind) = self.spans.get(i)?;
        let v = (kind != ParamKind::Null).then(|| &self.buf[a as usize..b as usize]);
        Some((v, kind))
    }

    /// The parameters in order, for binding.
    pub fn values(&self) -> impl ExactSizeIterator<Item = Option<&[u8]>> + '_ {
        self.spans.iter().map(move |&(a, b, kind)| {
            (kind != ParamKind::Null).then(|| &self.buf[a as usize..b as usize])
        })
    }
}

/// Appends the decimal digits of `v` (a `-` first when negative) without allocating: the one
/// integer formatter of parameters, COPY rows and keys.
pub fn push_int(buf: &mut Vec<u8>, v: i64) {
    let mut b = [0u8; 20];
    buf.extend_from_slice(decimal(v, &mut b));
}

/// `v` in decimal, written at the end of `b`; returns the digits (with the sign).
pub fn decimal(v: i64, b: &mut [u8; 20]) -> &[u8] {
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        // i64::MIN has 19 digits, so there is room for the sign
        i -= 1;
        b[i] = b'-';
    }
    &b[i..]
}

/// The values of the rows a statement returned (kept only for statements with
/// [`Statement::rows`]), in text format. Filled by the engine into reused buffers.
#[derive(Debug, Default)]
pub struct Rows {
    bytes: Vec<u8>,
    /// per cell: start and length in `bytes` (length -1 = NULL)
    cells: Vec<(u32, i32)>,
    columns: usize,
}

impl Rows {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.cells.clear();
        self.columns = 0;
    }

    /// Starts a new row of `columns` cells.
    pub fn begin_row(&mut self, columns: usize) {
        self.columns = columns;
    }

    /// Appends one cell of the current row.
    pub fn push_cell(&mut self, v: Option<&[u8]>) {
        match v {
            Some(v) => {
                self.cells.push((self.bytes.len() as u32, v.len() as i32));
                self.bytes.extend_from_slice(v);
            }
            None => self.cells.push((self.bytes.len() as u32, -1)),
        }
    }

    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.columns).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The text value of `(row, col)`; `None` for NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&[u8]> {
        if col >= self.columns {
            return None;
        }
        let &(a, len) = self.cells.get(row * self.columns + col)?;
        (len >= 0).then(|| &self.bytes[a as usize..a as usize + len as usize])
    }
}

/// The reply to one statement.
#[derive(Debug)]
pub struct Reply<'a> {
    /// Rows returned (SELECT) or affected (INSERT/UPDATE/DELETE), from the command tag.
    pub count: u64,
    /// The returned values when the statement asked for them (else empty).
    pub rows: &'a Rows,
}

impl Reply<'_> {
    /// The text value of `(row, col)`.
    pub fn get(&self, row: usize, col: usize) -> Option<&[u8]> {
        self.rows.get(row, col)
    }

    /// `(row, col)` as an integer.
    pub fn int(&self, row: usize, col: usize) -> Option<i64> {
        std::str::from_utf8(self.get(row, col)?).ok()?.parse().ok()
    }

    /// `(row, col)` as a float (numeric columns).
    pub fn float(&self, row: usize, col: usize) -> Option<f64> {
        std::str::from_utf8(self.get(row, col)?).ok()?.parse().ok()
    }
}

/// `sql` with `$n` replaced by the parameters as literals (simple query mode): numbers as
/// written, text quoted with `'` doubled, NULL as `NULL`. Appends to `out`.
pub fn inline_params(sql: &str, params: &Params, out: &mut Vec<u8>) {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let mut j = i + 1;
            let mut n = 0usize;
            while j < b.len() && b[j].is_ascii_digit() {
                n = n * 10 + usize::from(b[j] - b'0');
                j += 1;
            }
            match n.checked_sub(1).and_then(|k| params.get(k)) {
                Some((None, _)) | Some((_, ParamKind::Null)) => out.extend_from_slice(b"NULL"),
                Some((Some(v), ParamKind::Number)) => out.extend_from_slice(v),
                Some((Some(v), ParamKind::Text)) => {
                    out.push(b'\'');
                    for &c in v {
                        if c == b'\'' {
                            out.push(b'\'');
                        }
                        out.push(c);
                    }
                    out.push(b'\'');
                }
                None => out.extend_from_slice(&b[i..j]),
            }
            i = j;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_count_is_the_highest_placeholder() {
        let s = Statement::new("x", "SELECT c FROM t WHERE id BETWEEN $1 AND $12 OR $2");
        assert_eq!(s.param_count(), 12);
        assert_eq!(Statement::simple("b", "BEGIN").param_count(), 0);
    }

    #[test]
    fn inlined_parameters_quote_text_and_keep_numbers() {
        let mut p = Params::new();
        p.int(-42).text(b"it's").null();
        let mut out = Vec::new();
        inline_params("SELECT $1, $2, $3, $4", &p, &mut out);
        assert_eq!(out, b"SELECT -42, 'it''s', NULL, $4");
        let vals: Vec<_> = p.values().collect();
        assert_eq!(vals, vec![Some(&b"-42"[..]), Some(&b"it's"[..]), None]);
    }

    #[test]
    fn extreme_integers_format() {
        let mut p = Params::new();
        p.int(i64::MIN).int(0).int(i64::MAX);
        assert_eq!(
            p.get(0).unwrap().0.unwrap(),
            i64::MIN.to_string().as_bytes()
        );
        assert_eq!(p.get(1).unwrap().0.unwrap(), b"0");
        assert_eq!(
            p.get(2).unwrap().0.unwrap(),
            i64::MAX.to_string().as_bytes()
        );
    }

    #[test]
    fn rows_are_addressed_by_row_and_column() {
        let mut r = Rows::default();
        r.begin_row(2);
        r.push_cell(Some(b"1"));
        r.push_cell(None);
        r.begin_row(2);
        r.push_cell(Some(b"x"));
        r.push_cell(Some(b""));
        assert_eq!(r.len(), 2);
        assert_eq!(r.get(0, 0), Some(&b"1"[..]));
        assert_eq!(r.get(0, 1), None);
        assert_eq!(r.get(1, 1), Some(&b""[..]));
        assert_eq!(r.get(2, 0), None);
        let reply = Reply { count: 2, rows: &r };
        assert_eq!(reply.int(0, 0), Some(1));
    }
}
