//! `\startpipeline`, `\syncpipeline`, `\endpipeline`: commands inside a pipeline are queued
//! (see `sql`), Syncs added, and everything read at `\endpipeline`. In prepared mode, pgbench
//! prepares every command of the pipeline before entering it, one round trip each, reporting a
//! failed prepare and going on; pgrig does the same in one write.

use pgrig_script::{CommandKind, QueryMode};
use pgrig_wire::Backend;

use crate::client_state::Client;
use crate::outcome::{backend_died, error_text, lost, SqlOutcome};
use crate::shared::RunShared;
use crate::sink::Level;
use crate::sql::read_results;

/// Before `\startpipeline` at `pc` enters pipeline mode.
pub(crate) async fn prepare(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    pc: usize,
) -> SqlOutcome {
    if sh.cfg.mode != QueryMode::Prepared {
        return SqlOutcome::Done;
    }
    let commands = &sh.scripts[script].commands;
    let conn = c.conn.as_mut().expect("connected");
    let mut queued = Vec::new();
    for (j, cmd) in commands.iter().enumerate().skip(pc + 1) {
        match &cmd.kind {
            CommandKind::EndPipeline => break,
            CommandKind::Sql(q) => {
                let p = sh.prep_index[script][j];
                if !c.prepared[p] {
                    if sh.cfg.debug {
                        sh.debug_client(c.id, format_args!("preparing {}", q.prepared_name));
                    }
                    conn.parse(&q.prepared_name, &q.param_sql, q.params.len() as u16);
                    conn.sync();
                    c.prepared[p] = true;
                    queued.push(q);
                }
            }
            _ => {}
        }
    }
    if queued.is_empty() {
        return SqlOutcome::Done;
    }
    if conn.send().await.is_err() {
        return backend_died(sh, c, script, pc);
    }
    for q in queued {
        loop {
            match conn.recv().await {
                Ok(Backend::ReadyForQuery(_)) => break,
                Ok(Backend::Error(e)) => {
                    let text = error_text(sh, &[], Some(q), &e);
                    sh.msg(Level::Error, text.trim_end());
                }
                Ok(_) => {}
                Err(_) => return backend_died(sh, c, script, pc),
            }
        }
    }
    SqlOutcome::Done
}

pub(crate) fn start(c: &mut Client) {
    c.pending_syncs = 0;
    c.pipeline_cmds.clear();
}

pub(crate) async fn sync(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    cmd: usize,
    end: bool,
) -> SqlOutcome {
    let conn = c.conn.as_mut().expect("connected");
    conn.sync();
    c.pending_syncs += 1;
    if !end {
        return SqlOutcome::Done;
    }
    if let Err(e) = conn.send().await {
        return lost(sh, c, script, cmd, &e.to_string());
    }
    let n = c.pending_syncs;
    c.pending_syncs = 0;
    if sh.cfg.debug {
        sh.debug_client(c.id, format_args!("receiving"));
    }
    let out = read_results(sh, c, script, cmd, None, n).await;
    if sh.cfg.debug {
        // pgbench reads the pipeline's results command by command, then each sync
        for _ in 0..c.pipeline_cmds.len() {
            sh.debug_client(c.id, format_args!("receiving"));
        }
        for _ in 0..n {
            sh.debug_client(c.id, format_args!("pipeline ending"));
        }
    }
    out
}
