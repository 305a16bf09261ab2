//! Sending one SQL command in the run's query mode and consuming its results: simple mode renders
//! variables into the text; extended/prepared bind them as text parameters (prepared: Parse once per
//! connection, pipelined in front of the first Bind; a failed Parse is reported and the command
//! executed anyway, as pgbench does). Inside `\startpipeline` commands are queued (`pipeline`) and
//! their results read here. Handles `\gset`/`\aset`, shows errors in libpq's layout (`LINE n:`
//! and cursor) and classifies them (retryable serialization/deadlock, other, fatal).

use pgrig_script::command::{Gset, SqlPart};
use pgrig_script::{QueryMode, SqlCommand};
use pgrig_wire::Backend;

use crate::client_state::{Client, FailKind, ParseState};
pub(crate) use crate::outcome::SqlOutcome;
use crate::outcome::{backend_died, error_text, lost, queued_sql};
use crate::shared::RunShared;
use crate::sink::Level;

/// Encodes one command's messages into the connection's buffer (no Sync).
fn encode(sh: &RunShared, c: &mut Client, q: &SqlCommand, prep: usize) {
    let Client {
        conn,
        vars,
        buf,
        spans,
        prepared,
        parse,
        in_pipeline,
        ..
    } = c;
    let conn = conn.as_mut().expect("connected");
    buf.clear();
    *parse = ParseState::None;
    match sh.cfg.mode {
        QueryMode::Simple => {
            for p in &q.parts {
                match p {
                    SqlPart::Lit(s) => buf.extend_from_slice(s),
                    SqlPart::Var { var, name } => {
                        if !vars.render(*var, buf) {
                            buf.push(b':');
                            pgrig_script::bytes::encode_into(name, buf);
                        }
                    }
                }
            }
            conn.query(buf);
        }
        QueryMode::Extended | QueryMode::Prepared => {
            spans.clear();
            for &v in &q.params {
                let start = buf.len();
                spans.push(if vars.render(v, buf) {
                    Some((start, buf.len()))
                } else {
                    None
                });
            }
            let stmt: &str = if sh.cfg.mode == QueryMode::Prepared {
                if !prepared[prep] {
                    conn.parse(&q.prepared_name, &q.param_sql_bytes, q.params.len() as u16);
                    prepared[prep] = true;
                    if !*in_pipeline {
                        *parse = ParseState::Pending;
                    }
                }
                &q.prepared_name
            } else {
                conn.parse("", &q.param_sql_bytes, q.params.len() as u16);
                ""
            };
            let bytes: &[u8] = buf;
            conn.bind("", stmt, spans.iter().map(|s| s.map(|(a, b)| &bytes[a..b])));
            if q.gset.is_some() {
                conn.describe_portal("");
            }
            conn.execute("", 0);
        }
    }
}

pub(crate) async fn run_sql(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    q: &SqlCommand,
    prep: usize,
) -> SqlOutcome {
    encode(sh, c, q, prep);
    if sh.cfg.debug {
        debug_sending(sh, c, q);
    }
    if c.in_pipeline {
        c.pipeline_cmds.push(cmd);
        return SqlOutcome::Done;
    }
    if sh.cfg.mode != QueryMode::Simple {
        c.conn.as_mut().expect("connected").sync();
    }
    if let Err(e) = c.conn.as_mut().expect("connected").send().await {
        // Like libpq, a failed write to a closed connection is not reported at once: what the
        // server said before it closed (a FATAL error) is read and reported instead.
        if !matches!(e, pgrig_wire::Error::Closed | pgrig_wire::Error::Io(_)) {
            return backend_died(sh, c, script, cmd);
        }
    }
    if sh.cfg.debug {
        sh.debug_client(c.id, format_args!("receiving"));
    }
    let out = read_results(sh, c, script, cmd, Some(q), 1).await;
    if sh.cfg.debug {
        // pgbench looks once more when the results are in
        sh.debug_client(c.id, format_args!("receiving"));
    }
    if c.parse != ParseState::Failed {
        return out;
    }
    // Rare: kept out of this future (boxed), so the common path stays small.
    Box::pin(execute_after_failed_prepare(sh, c, script, cmd, q, prep)).await
}

/// pgbench reported the failed prepare and executes the command all the same (its one
/// `sending` line is already out).
async fn execute_after_failed_prepare(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    q: &SqlCommand,
    prep: usize,
) -> SqlOutcome {
    encode(sh, c, q, prep);
    let conn = c.conn.as_mut().expect("connected");
    conn.sync();
    if conn.send().await.is_err() {
        return backend_died(sh, c, script, cmd);
    }
    read_results(sh, c, script, cmd, Some(q), 1).await
}

/// `--debug`: `preparing P_n` when the command's Parse goes with it, then `sending` with the
/// SQL after substitution (simple), with `$n` (extended) or the statement name (prepared).
#[cold]
fn debug_sending(sh: &RunShared, c: &Client, q: &SqlCommand) {
    if c.parse == ParseState::Pending {
        sh.debug_client(c.id, format_args!("preparing {}", q.prepared_name));
    }
    let text = match sh.cfg.mode {
        QueryMode::Simple => String::from_utf8_lossy(&c.buf),
        QueryMode::Extended => std::borrow::Cow::Borrowed(q.param_sql.as_str()),
        QueryMode::Prepared => std::borrow::Cow::Borrowed(q.prepared_name.as_str()),
    };
    sh.debug_client(c.id, format_args!("sending {text}"));
}

/// Per-result bookkeeping for `\gset`/`\aset`.
#[derive(Default)]
struct GsetState {
    names: Vec<String>,
    row: Vec<Option<Vec<u8>>>,
    /// rows of the result being read
    rows: usize,
    /// rows of the last complete result
    last_rows: usize,
}

/// Stores the kept row into `PREFIX || column` variables.
fn store_row(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    qry: usize,
    g: &Gset,
    gs: &GsetState,
) -> Result<(), String> {
    for (name, val) in gs.names.iter().zip(&gs.row) {
        let full = format!("{}{}", g.prefix, name);
        if !pgrig_script::vars::valid_variable_name(&full) {
            let context = if g.all { "aset" } else { "gset" };
            sh.msg(
                Level::Error,
                &pgrig_script::vars::invalid_variable_name_message(context, &full),
            );
            return Err(format!(
                "client {} script {} command {} query {}: error storing into variable {}",
                c.id, script, cmd, qry, full
            ));
        }
        // A variable no command reads has no slot: storing it would be invisible.
        if let Some(id) = sh.vartable.get(&full) {
            // libpq's PQgetvalue gives "" for a NULL column, and that is what pgbench stores.
            match val {
                Some(b) => c.vars.set_str(id, &pgrig_script::bytes::decode(b)),
                None => c.vars.set_str(id, ""),
            }
        }
    }
    Ok(())
}

pub(crate) async fn rollback_if_needed(sh: &RunShared, c: &mut Client) -> Result<(), String> {
    let conn = c.conn.as_mut().expect("connected");
    if conn.transaction_status() == pgrig_wire::TransactionStatus::Idle {
        return Ok(());
    }
    conn.query(b"ROLLBACK");
    conn.send().await.map_err(|e| e.to_string())?;
    if sh.cfg.debug {
        sh.debug_client(c.id, format_args!("receiving"));
    }
    loop {
        match conn.recv().await.map_err(|e| e.to_string())? {
            Backend::ReadyForQuery(_) => return Ok(()),
            Backend::Error(e) => return Err(e.to_string()),
            _ => {}
        }
    }
}

/// Reads until `syncs` ReadyForQuery messages have arrived.
pub(crate) async fn read_results(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    q: Option<&SqlCommand>,
    syncs: usize,
) -> SqlOutcome {
    let mut r = Reader {
        script,
        cmd,
        q,
        gset: q.and_then(|q| q.gset.as_ref()),
        syncs,
        qry: 0,
        error: None,
        gs: GsetState::default(),
        gset_err: None,
        copy: false,
        lost: String::new(),
    };
    // One read usually brings the whole response; its messages are then taken out of the
    // buffer synchronously.
    'read: loop {
        loop {
            match r.take(sh, c) {
                Took::Message => {}
                Took::Empty => break,
                Took::Synced => break 'read,
                Took::CopyIn => {
                    let conn = c.conn.as_mut().expect("connected");
                    conn.copy_fail("COPY is not supported in pgbench");
                    if let Err(e) = conn.send().await {
                        return lost(sh, c, script, cmd, &e.to_string());
                    }
                }
                Took::Lost => return lost(sh, c, script, cmd, &r.lost),
            }
        }
        if c.conn
            .as_mut()
            .expect("connected")
            .read_more()
            .await
            .is_err()
        {
            return r.connection_lost(sh, c);
        }
    }
    if let Some((code, text)) = &r.error {
        return r.failed(sh, c, code, text).await;
    }
    r.finish(sh, c)
}

/// Reading one command's results (a pipeline's: `q` is None, commands read one by one).
struct Reader<'q> {
    script: usize,
    cmd: usize,
    q: Option<&'q SqlCommand>,
    gset: Option<&'q Gset>,
    /// ReadyForQuery messages still to come
    syncs: usize,
    /// queries completed
    qry: usize,
    /// (sqlstate, text), the first error
    error: Option<(String, String)>,
    gs: GsetState,
    gset_err: Option<String>,
    copy: bool,
    /// why the connection failed (`Took::Lost`)
    lost: String,
}

/// What taking one message out of the read buffer found.
#[derive(Clone, Copy)]
enum Took {
    Message,
    /// the buffer holds no whole message
    Empty,
    /// the last ReadyForQuery
    Synced,
    /// the server waits for COPY data
    CopyIn,
    /// the connection failed (`Reader::lost` says why)
    Lost,
}

impl Reader<'_> {
    /// Takes one message out of the buffer. Messages that only count are passed over by their
    /// type byte, unparsed.
    #[inline(always)]
    fn take(&mut self, sh: &RunShared, c: &mut Client) -> Took {
        let conn = c.conn.as_mut().expect("connected");
        let tag = match conn.next_tag() {
            Ok(Some(t)) => t,
            Ok(None) => return Took::Empty,
            Err(e) => return self.lost_with(e),
        };
        let skip = match tag {
            b'1' => {
                c.parse = ParseState::None;
                true
            }
            b'2' | b'3' | b'n' | b's' => true,
            b'D' => self.gset.is_none(),
            b'C' | b'I' if self.gset.is_none() => {
                self.qry += 1;
                true
            }
            b'Z' => {
                if let Err(e) = conn.skip_message() {
                    return self.lost_with(e);
                }
                return self.synced();
            }
            _ => false,
        };
        if skip {
            return match conn.skip_message() {
                Ok(_) => Took::Message,
                Err(e) => self.lost_with(e),
            };
        }
        let msg = match conn.try_recv() {
            Ok(Some(m)) => m,
            Ok(None) => return Took::Empty,
            Err(e) => return self.lost_with(e),
        };
        match msg {
            Backend::RowDescription(rd) if self.gset.is_some() => {
                self.gs.names.clear();
                self.gs
                    .names
                    .extend(rd.columns().map(|c| c.name_str().to_owned()));
            }
            Backend::DataRow(row) if self.gset.is_some() => {
                self.gs.rows += 1;
                self.gs.row.clear();
                self.gs
                    .row
                    .extend(row.iter().map(|b| b.map(<[u8]>::to_vec)));
            }
            Backend::CommandComplete(_) | Backend::EmptyQueryResponse => self.completed(sh, c),
            Backend::CopyInResponse => {
                self.copy = true;
                return Took::CopyIn;
            }
            Backend::CopyOutResponse | Backend::CopyBothResponse => self.copy = true,
            Backend::Error(e) if self.error.is_none() => {
                // In a pipeline the failing command is the one after those completed.
                let failing = self
                    .q
                    .or_else(|| queued_sql(sh, self.script, &c.pipeline_cmds, self.qry));
                self.error = Some((e.code().to_owned(), error_text(sh, &c.buf, failing, &e)));
                if c.parse == ParseState::Pending {
                    c.parse = ParseState::Failed;
                }
            }
            Backend::ReadyForQuery(_) => return self.synced(),
            _ => {}
        }
        Took::Message
    }

    #[cold]
    fn lost_with(&mut self, e: pgrig_wire::Error) -> Took {
        self.lost = e.to_string();
        Took::Lost
    }

    #[inline]
    fn synced(&mut self) -> Took {
        self.syncs -= 1;
        if self.syncs == 0 {
            Took::Synced
        } else {
            Took::Message
        }
    }

    /// A query's end: `\aset` stores its row.
    fn completed(&mut self, sh: &RunShared, c: &mut Client) {
        if let Some(g) = self.gset {
            let gs = &mut self.gs;
            if g.all && gs.rows > 0 && self.gset_err.is_none() && self.error.is_none() {
                if let Err(e) = store_row(sh, c, self.script, self.cmd, self.qry, g, gs) {
                    self.gset_err = Some(e);
                }
            }
            gs.last_rows = gs.rows;
            gs.rows = 0;
        }
        self.qry += 1;
    }

    /// A backend that is terminated says why (FATAL) before it closes: libpq returns that as
    /// the command's error. Without it, pgbench's PQconsumeInput failure.
    fn connection_lost(&self, sh: &RunShared, c: &mut Client) -> SqlOutcome {
        match &self.error {
            Some((_, why)) => lost(sh, c, self.script, self.cmd, why),
            None => backend_died(sh, c, self.script, self.cmd),
        }
    }

    /// All results are in and none was an error: the command's outcome.
    fn finish(&self, sh: &RunShared, c: &mut Client) -> SqlOutcome {
        if self.copy {
            sh.msg(Level::Error, "COPY is not supported in pgbench, aborting");
            return SqlOutcome::Abort;
        }
        if let Some(e) = &self.gset_err {
            sh.msg(Level::Error, e);
            return SqlOutcome::Abort;
        }
        if let Some(g) = self.gset.filter(|g| !g.all) {
            let (script, cmd, qry) = (self.script, self.cmd, self.qry.saturating_sub(1));
            if self.gs.last_rows != 1 {
                sh.msg(
                    Level::Error,
                    &format!(
                        "client {} script {script} command {cmd} query {qry}: expected one row, got {}",
                        c.id, self.gs.last_rows
                    ),
                );
                return SqlOutcome::Abort;
            }
            if let Err(e) = store_row(sh, c, script, cmd, qry, g, &self.gs) {
                sh.msg(Level::Error, &e);
                return SqlOutcome::Abort;
            }
        }
        SqlOutcome::Done
    }

    /// The command failed: a failed prepare is only reported; serialization failures and
    /// deadlocks (and, with `--continue-on-error`, any error) fail the transaction after a
    /// rollback; anything else aborts the client.
    async fn failed(&self, sh: &RunShared, c: &mut Client, code: &str, text: &str) -> SqlOutcome {
        let (script, cmd) = (self.script, self.cmd);
        if self.copy {
            sh.msg(Level::Error, "COPY is not supported in pgbench, aborting");
            return SqlOutcome::Abort;
        }
        if c.parse == ParseState::Failed {
            // pgbench's prepare step logs the error and goes on (the caller executes anyway).
            sh.msg(Level::Error, text.trim_end());
            return SqlOutcome::Done;
        }
        let kind = match code {
            "40001" => Some(FailKind::Serialization),
            "40P01" => Some(FailKind::Deadlock),
            _ if sh.cfg.continue_on_error => Some(FailKind::Other),
            _ => None,
        };
        let Some(k) = kind else {
            // pgbench numbers the queries of one command's results; a pipeline's commands are
            // read one by one, each with one query.
            let qry = if self.q.is_none() { 0 } else { self.qry };
            sh.msg(
                Level::Error,
                &format!(
                    "client {} script {script} aborted in command {cmd} query {qry}: {}",
                    c.id,
                    text.trim_end()
                ),
            );
            return SqlOutcome::Abort;
        };
        if sh.cfg.verbose_errors {
            sh.msg(
                Level::Info,
                &format!(
                    "client {} got an error in command {cmd} (SQL) of script {script}; {}",
                    c.id,
                    text.trim_end()
                ),
            );
        }
        if let Err(e) = rollback_if_needed(sh, c).await {
            return lost(sh, c, script, cmd, &e);
        }
        SqlOutcome::Failed(k)
    }
}
