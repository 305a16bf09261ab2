//! Running a native workload ([`crate::workload`]) on the same client loop as scripts (the
//! run's view of the workload is [`crate::native_run::NativeRun`]): one attempt of one
//! transaction ([`run_native_once`]): the program's steps, each statement sent in the run's
//! query mode (simple: parameters inlined; extended: unnamed statement; prepared: `W_n` parsed
//! once per connection), its reply read into the client's reused buffers, its latency recorded
//! for the per-statement figures. Errors are classified as for scripts: the workload's
//! retryable SQLSTATEs (and, with `--continue-on-error`, any error) fail the attempt after a
//! rollback; anything else aborts the client.

use pgrig_script::QueryMode;
use pgrig_wire::Backend;

use crate::client_state::{Client, FailKind};
use crate::exec::Attempt;
use crate::outcome::lost;
use crate::shared::{RunShared, ThreadCtx};
use crate::sink::Level;
use crate::workload::{inline_params, Reply, Step, StmtId};

/// How one statement ended.
enum StmtEnd {
    /// the tag's row count (else the rows received), and whether a row set came back
    Ok(u64, bool),
    /// retryable (or counted) failure, after the rollback
    Failed(FailKind),
    Abort,
}

/// One attempt of transaction `tx`: runs the program's steps to its end.
pub(crate) async fn run_native_once(
    sh: &RunShared,
    th: &ThreadCtx,
    c: &mut Client,
    tx: usize,
    retry: bool,
) -> Attempt {
    let nat = sh.native.as_ref().expect("native run");
    let mut prog = c.program.take().expect("client program");
    prog.begin(tx, retry);
    let mut count: Option<u64> = None;
    let end = loop {
        c.params.clear();
        let step = {
            let reply = count.map(|count| Reply {
                count,
                rows: &c.rows,
            });
            prog.step(reply.as_ref(), &mut c.params)
        };
        let id = match step {
            Step::Run(id) => id,
            Step::Done => break Attempt::Ok,
            Step::RolledBack => {
                c.rolled_back = true;
                break Attempt::Ok;
            }
            Step::Abort(why) => {
                sh.msg(
                    Level::Error,
                    &format!("client {} aborted in transaction type {tx}: {why}", c.id),
                );
                break Attempt::Abort;
            }
        };
        let slot = match nat.slots[tx].get(id as usize) {
            Some(&s) if s != u32::MAX => s as usize,
            _ => {
                sh.msg(
                    Level::Error,
                    &format!(
                        "client {} aborted: transaction type {tx} ran statement {id}, which it does not list",
                        c.id
                    ),
                );
                break Attempt::Abort;
            }
        };
        let t0 = sh.now_us();
        match run_statement(sh, c, tx, slot, id).await {
            StmtEnd::Ok(n, rowset) => {
                let us = (sh.now_us() - t0) as f64;
                let mut stats = th.stats.borrow_mut();
                stats.scripts[tx].record_command(slot, us);
                stats.scripts[tx].snap.counts.replies.add(rowset, n);
                count = Some(n);
            }
            StmtEnd::Failed(kind) => break Attempt::Failed { kind, cmd: slot },
            StmtEnd::Abort => break Attempt::Abort,
        }
    };
    c.program = Some(prog);
    end
}

/// The program's closing statement ([`crate::workload::TxProgram::finish`]) when the client's
/// run ends normally: recorded in the per-statement figures of the first type that lists it.
/// `false`: it failed and the client aborted.
pub(crate) async fn run_native_finish(sh: &RunShared, th: &ThreadCtx, c: &mut Client) -> bool {
    let Some(nat) = sh.native.as_ref() else {
        return true;
    };
    if c.conn.is_none() {
        return true;
    }
    c.params.clear();
    let Some(id) = c.program.as_mut().and_then(|p| p.finish(&mut c.params)) else {
        return true;
    };
    let listed = nat.slots.iter().enumerate().find_map(|(tx, row)| {
        row.get(id as usize)
            .filter(|&&s| s != u32::MAX)
            .map(|&s| (tx, s as usize))
    });
    let Some((tx, slot)) = listed else {
        sh.msg(
            Level::Error,
            &format!(
                "client {} aborted: its closing statement {id} is listed by no transaction type",
                c.id
            ),
        );
        return false;
    };
    let t0 = sh.now_us();
    match run_statement(sh, c, tx, slot, id).await {
        StmtEnd::Ok(n, rowset) => {
            let us = (sh.now_us() - t0) as f64;
            let mut stats = th.stats.borrow_mut();
            stats.scripts[tx].record_command(slot, us);
            stats.scripts[tx].snap.counts.replies.add(rowset, n);
            true
        }
        _ => false,
    }
}

/// Queues statement `id`'s messages with the parameters in `c.params`.
fn encode(sh: &RunShared, c: &mut Client, id: StmtId) {
    let nat = sh.native.as_ref().expect("native run");
    let s = &nat.stmts[id as usize];
    let conn = c.conn.as_mut().expect("connected");
    if s.simple || sh.cfg.mode == QueryMode::Simple {
        if s.nparams == 0 {
            conn.query(s.sql.as_bytes());
        } else {
            c.buf.clear();
            inline_params(&s.sql, &c.params, &mut c.buf);
            conn.query(&c.buf);
        }
        return;
    }
    let name: &str = if sh.cfg.mode == QueryMode::Prepared {
        if !c.prepared[id as usize] {
            conn.parse(&s.prepared_name, s.sql.as_bytes(), s.nparams);
            c.prepared[id as usize] = true;
        }
        &s.prepared_name
    } else {
        conn.parse("", s.sql.as_bytes(), s.nparams);
        ""
    };
    conn.bind("", name, c.params.values());
    conn.execute("", 0);
    conn.sync();
}

/// Sends statement `id` and reads its reply.
async fn run_statement(
    sh: &RunShared,
    c: &mut Client,
    tx: usize,
    slot: usize,
    id: StmtId,
) -> StmtEnd {
    encode(sh, c, id);
    if sh.cfg.debug {
        let sql = &sh.native.as_ref().expect("native run").stmts[id as usize].sql;
        sh.debug_client(c.id, format_args!("sending {sql}"));
    }
    if let Err(e) = c.conn.as_mut().expect("connected").send().await {
        if !matches!(e, pgrig_wire::Error::Closed | pgrig_wire::Error::Io(_)) {
            return lost_end(sh, c, tx, slot, &e.to_string());
        }
    }
    let keep = sh.native.as_ref().expect("native run").stmts[id as usize].rows;
    c.rows.clear();
    let mut reply = ReplyState::default();
    loop {
        match take_all(c, keep, &mut reply) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return lost_end(sh, c, tx, slot, &e),
        }
        if let Err(e) = c.conn.as_mut().expect("connected").read_more().await {
            let why = reply.error.map(|e| e.text).unwrap_or_else(|| e.to_string());
            return lost_end(sh, c, tx, slot, &why);
        }
    }
    match reply.error {
        None => StmtEnd::Ok(reply.count.unwrap_or(reply.rows), reply.rowset),
        Some(e) => failed(sh, c, (tx, slot, id), &e).await,
    }
}

/// The first error of a reply.
struct ReplyError {
    code: String,
    /// as pgbench prints it (severity, message, position)
    text: String,
    /// the server's message alone
    message: String,
}

#[derive(Default)]
struct ReplyState {
    rows: u64,
    /// a row set came back: a RowDescription (simple protocol), a DataRow, or a tag of a
    /// command that returns rows (an extended-protocol SELECT of no row describes nothing)
    rowset: bool,
    count: Option<u64>,
    error: Option<ReplyError>,
}

/// Takes the buffered messages; true at ReadyForQuery.
fn take_all(c: &mut Client, keep: bool, r: &mut ReplyState) -> Result<bool, String> {
    let conn = c.conn.as_mut().expect("connected");
    loop {
        let tag = match conn.next_tag() {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(false),
            Err(e) => return Err(e.to_string()),
        };
        match tag {
            b'D' if !keep => {
                r.rows += 1;
                r.rowset = true;
                conn.skip_message().map_err(|e| e.to_string())?;
                continue;
            }
            b'T' => {
                r.rowset = true;
                conn.skip_message().map_err(|e| e.to_string())?;
                continue;
            }
            b'1' | b'2' | b'3' | b'n' | b's' | b'I' => {
                conn.skip_message().map_err(|e| e.to_string())?;
                continue;
            }
            _ => {}
        }
        match conn.try_recv().map_err(|e| e.to_string())? {
            Some(Backend::DataRow(row)) => {
                r.rows += 1;
                r.rowset = true;
                c.rows.begin_row(row.len());
                for v in row.iter() {
                    c.rows.push_cell(v);
                }
            }
            Some(Backend::CommandComplete(tag)) => {
                r.rowset |= returns_rows(tag.as_bytes());
                r.count = Some(tag.rows().unwrap_or(r.rows));
            }
            Some(Backend::Error(e)) => {
                if r.error.is_none() {
                    let db = e.to_db_error();
                    r.error = Some(ReplyError {
                        code: db.code.clone(),
                        text: db.to_string(),
                        message: db.message.clone(),
                    });
                }
            }
            Some(Backend::ReadyForQuery(_)) => return Ok(true),
            Some(Backend::CopyInResponse) => {
                conn.copy_fail("COPY is not supported by native workloads");
            }
            Some(_) => {}
            None => return Ok(false),
        }
    }
}

/// Whether a command tag names a command that returns a row set (libpq's `PGRES_TUPLES_OK`).
fn returns_rows(tag: &[u8]) -> bool {
    [&b"SELECT"[..], b"FETCH", b"SHOW", b"EXPLAIN"]
        .iter()
        .any(|w| tag.starts_with(w) && matches!(tag.get(w.len()), None | Some(b' ')))
}

/// A statement failed: retryable (per the workload) or, with `--continue-on-error`, any
/// error fails the attempt after a rollback; anything else aborts the client.
async fn failed(
    sh: &RunShared,
    c: &mut Client,
    (tx, slot, id): (usize, usize, StmtId),
    e: &ReplyError,
) -> StmtEnd {
    let nat = sh.native.as_ref().expect("native run");
    let (code, text) = (e.code.as_str(), e.text.as_str());
    let kind = match code {
        "40P01" if nat.workload.retryable(code) => Some(FailKind::Deadlock),
        _ if nat.workload.retryable(code) => Some(FailKind::Serialization),
        _ if sh.cfg.continue_on_error => Some(FailKind::Other),
        _ => None,
    };
    let Some(kind) = kind else {
        let s = &nat.stmts[id as usize];
        let simple = s.simple || sh.cfg.mode == QueryMode::Simple;
        let sent = if simple && s.nparams > 0 {
            &c.buf[..]
        } else {
            s.sql.as_bytes()
        };
        if !sh.sink.sql_abort(c.id, sent, simple, (code, &e.message)) {
            sh.msg(
                Level::Error,
                &format!(
                    "client {} script {tx} aborted in command {slot} query 0: {}",
                    c.id,
                    text.trim_end()
                ),
            );
        }
        return StmtEnd::Abort;
    };
    if sh.cfg.verbose_errors {
        sh.msg(
            Level::Info,
            &format!(
                "client {} got an error in command {slot} (SQL) of script {tx}; {}",
                c.id,
                text.trim_end()
            ),
        );
    }
    if let Err(e) = crate::sql::rollback_if_needed(sh, c).await {
        return lost_end(sh, c, tx, slot, &e);
    }
    StmtEnd::Failed(kind)
}

fn lost_end(sh: &RunShared, c: &mut Client, tx: usize, slot: usize, why: &str) -> StmtEnd {
    lost(sh, c, tx, slot, why);
    StmtEnd::Abort
}
