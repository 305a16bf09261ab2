//! How an SQL command ended ([`SqlOutcome`]) and how a failure is worded, as pgbench words it:
//! the server's error in libpq's layout (`LINE n:` and cursor into the command's text as sent),
//! a connection lost under a command with or without the server's last words.

use pgrig_script::{QueryMode, SqlCommand};

use crate::client_state::{Client, FailKind};
use crate::shared::RunShared;
use crate::sink::Level;

pub(crate) enum SqlOutcome {
    Done,
    Failed(FailKind),
    Abort,
}

/// pgbench's wording when the connection fails under a command with nothing said by the server.
pub(crate) fn backend_died(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
) -> SqlOutcome {
    sh.msg(
        Level::Error,
        &format!(
            "client {} aborted in command {} (SQL) of script {}; perhaps the backend died while processing",
            c.id, cmd, script
        ),
    );
    c.conn = None;
    SqlOutcome::Abort
}

pub(crate) fn lost(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    msg: &str,
) -> SqlOutcome {
    sh.msg(
        Level::Error,
        &format!(
            "client {} script {} aborted in command {} query 0: {}",
            c.id,
            script,
            cmd,
            msg.trim_end()
        ),
    );
    c.conn = None;
    SqlOutcome::Abort
}

/// libpq's text for a command's error; with a position, its `LINE n:` display points into the
/// command's text as sent (simple mode: after substitution; extended/prepared: with `$n`).
#[cold]
pub(crate) fn error_text(
    sh: &RunShared,
    sent: &[u8],
    q: Option<&SqlCommand>,
    e: &pgrig_wire::ErrorFields<'_>,
) -> String {
    let db = e.to_db_error();
    match (db.position, q) {
        (Some(_), Some(q)) => {
            let text = match sh.cfg.mode {
                QueryMode::Simple => String::from_utf8_lossy(sent).into_owned(),
                QueryMode::Extended | QueryMode::Prepared => q.param_sql.clone(),
            };
            db.with_query(text).to_string()
        }
        _ => db.to_string(),
    }
}

/// The `n`th SQL command queued in the current pipeline.
pub(crate) fn queued_sql<'a>(
    sh: &'a RunShared,
    script: usize,
    queued: &[usize],
    n: usize,
) -> Option<&'a SqlCommand> {
    match &sh.scripts[script].commands.get(*queued.get(n)?)?.kind {
        pgrig_script::CommandKind::Sql(q) => Some(q),
        _ => None,
    }
}
