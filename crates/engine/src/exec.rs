//! Runs one attempt of one script for one client: walks the command list (conditionals, meta
//! commands, SQL), times each command for `-r`, and classifies how the attempt ended.

use std::time::Duration;

use pgrig_script::command::{ShellArg, SleepArg};
use pgrig_script::{eval, CommandKind, EvalCtx, Value};

use crate::client::Client;
use crate::pipeline;
use crate::shared::{RunShared, ThreadCtx};
use crate::sink::Level;
use crate::sql::{self, SqlOutcome};

/// Why a transaction failed (pgbench's failure kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailKind {
    Serialization,
    Deadlock,
    /// any other SQL error, only with `--continue-on-error`
    Other,
}

impl FailKind {
    pub fn log_name(self) -> &'static str {
        match self {
            FailKind::Serialization => "serialization",
            FailKind::Deadlock => "deadlock",
            FailKind::Other => "other",
        }
    }
}

pub(crate) enum Attempt {
    Ok,
    /// a failure that may be retried (or, `Other`, counted and skipped); `cmd` = failing command
    Failed {
        kind: FailKind,
        cmd: usize,
    },
    Abort,
}

fn abort_meta(
    sh: &RunShared,
    c: &Client,
    cmd: usize,
    name: &str,
    script: usize,
    why: &str,
) -> Attempt {
    sh.msg(
        Level::Error,
        &format!(
            "client {} aborted in command {} ({}) of script {}; {}",
            c.id, cmd, name, script, why
        ),
    );
    Attempt::Abort
}

pub(crate) async fn run_script_once(
    sh: &RunShared,
    th: &ThreadCtx,
    c: &mut Client,
    script: usize,
) -> Attempt {
    let commands = &sh.scripts[script].commands;
    let timing = sh.cfg.report_per_command;
    let debug = sh.cfg.debug;
    let mut pc = 0usize;
    // Set when we arrive at an \elif/\else by a jump from a false condition.
    let mut jumped = false;
    while pc < commands.len() {
        let cmd = &commands[pc];
        let t0 = if timing { sh.now_us() } else { 0 };
        let mut next = pc + 1;
        // pgbench shows the meta-commands it executes; an \else or \endif reached from a
        // false branch is only skipped over.
        if debug
            && !matches!(cmd.kind, CommandKind::Sql(_))
            && !(jumped && matches!(cmd.kind, CommandKind::Else { .. } | CommandKind::EndIf))
        {
            sh.debug_meta(c.id, script, pc);
        }
        match &cmd.kind {
            CommandKind::Sql(q) => {
                if c.in_pipeline {
                    if let Some(g) = &q.gset {
                        // pgbench checks this when the command is about to be sent.
                        let (name, why) = if g.all {
                            ("aset", "\\aset is not allowed in pipeline mode")
                        } else {
                            ("gset", "\\gset is not allowed in pipeline mode")
                        };
                        return abort_meta(sh, c, pc, name, script, why);
                    }
                }
                match sql::run_sql(sh, c, script, pc, q, sh.prep_index[script][pc]).await {
                    SqlOutcome::Done => {}
                    SqlOutcome::Failed(kind) => return Attempt::Failed { kind, cmd: pc },
                    SqlOutcome::Abort => return Attempt::Abort,
                }
            }
            CommandKind::Set { var, expr } => match eval_expr(sh, c, script, pc, expr) {
                Ok(v) if sh.assignable(*var, "set") => c.vars.set_value(*var, v),
                Ok(_) => {
                    return abort_meta(
                        sh,
                        c,
                        pc,
                        "set",
                        script,
                        "assignment of meta-command failed",
                    )
                }
                Err(()) => {
                    return abort_meta(
                        sh,
                        c,
                        pc,
                        "set",
                        script,
                        "evaluation of meta-command failed",
                    )
                }
            },
            CommandKind::If { cond, next: n } => match eval_expr(sh, c, script, pc, cond) {
                Ok(v) => {
                    if !v.truth() {
                        jumped = true;
                        record_cmd(sh, th, script, pc, t0, timing);
                        pc = *n;
                        continue;
                    }
                }
                Err(()) => {
                    return abort_meta(sh, c, pc, "if", script, "evaluation of meta-command failed")
                }
            },
            CommandKind::Elif { cond, next: n, end } => {
                if jumped {
                    jumped = false;
                    match eval_expr(sh, c, script, pc, cond) {
                        Ok(v) if v.truth() => {}
                        Ok(_) => {
                            jumped = true;
                            record_cmd(sh, th, script, pc, t0, timing);
                            pc = *n;
                            continue;
                        }
                        Err(()) => {
                            return abort_meta(
                                sh,
                                c,
                                pc,
                                "elif",
                                script,
                                "evaluation of meta-command failed",
                            )
                        }
                    }
                } else {
                    next = *end + 1;
                }
            }
            CommandKind::Else { end } => {
                if jumped {
                    jumped = false;
                } else {
                    next = *end + 1;
                }
            }
            CommandKind::EndIf => jumped = false,
            CommandKind::Sleep { duration, unit_us } => {
                let n = match duration {
                    SleepArg::Literal(n) => *n,
                    SleepArg::Var { var, name } => match c.vars.sleep_value(*var, name) {
                        Ok(n) => n,
                        Err(msg) => {
                            sh.msg(Level::Error, &msg);
                            return abort_meta(
                                sh,
                                c,
                                pc,
                                "sleep",
                                script,
                                "execution of meta-command failed",
                            );
                        }
                    },
                };
                let us = n.saturating_mul(*unit_us);
                if us > 0 {
                    pgrig_wire::rt::sleep(Duration::from_micros(us as u64)).await;
                }
            }
            CommandKind::Shell { args } | CommandKind::SetShell { args, .. } => {
                let set = match &cmd.kind {
                    CommandKind::SetShell { var, .. } => Some(*var),
                    _ => None,
                };
                if let Err(msg) = run_shell(sh, c, args, set) {
                    if !msg.is_empty() {
                        sh.msg(Level::Error, &msg);
                    }
                    let name = if set.is_some() { "setshell" } else { "shell" };
                    return abort_meta(sh, c, pc, name, script, "execution of meta-command failed");
                }
            }
            CommandKind::StartPipeline => {
                if sh.cfg.mode == pgrig_script::QueryMode::Simple {
                    return abort_meta(
                        sh,
                        c,
                        pc,
                        "startpipeline",
                        script,
                        "cannot use pipeline mode with the simple query protocol",
                    );
                }
                if let SqlOutcome::Abort = pipeline::prepare(sh, c, script, pc).await {
                    return Attempt::Abort;
                }
                if c.in_pipeline {
                    return abort_meta(
                        sh,
                        c,
                        pc,
                        "startpipeline",
                        script,
                        "already in pipeline mode",
                    );
                }
                c.in_pipeline = true;
                pipeline::start(c);
            }
            CommandKind::SyncPipeline | CommandKind::EndPipeline => {
                let end = matches!(cmd.kind, CommandKind::EndPipeline);
                let name = cmd.kind.meta_name();
                if !c.in_pipeline {
                    return abort_meta(sh, c, pc, name, script, "not in pipeline mode");
                }
                match pipeline::sync(sh, c, script, pc, end).await {
                    SqlOutcome::Done => {}
                    SqlOutcome::Failed(kind) => return Attempt::Failed { kind, cmd: pc },
                    SqlOutcome::Abort => return Attempt::Abort,
                }
                if end {
                    c.in_pipeline = false;
                }
            }
        }
        record_cmd(sh, th, script, pc, t0, timing);
        pc = next;
    }
    if c.in_pipeline {
        sh.msg(
            Level::Error,
            &format!(
                "client {} aborted: end of script reached with pipeline open",
                c.id
            ),
        );
        return Attempt::Abort;
    }
    // A transaction block left open is checked by the client after the transaction is
    // recorded: pgbench counts it, then aborts the client.
    Attempt::Ok
}

#[inline]
fn record_cmd(sh: &RunShared, th: &ThreadCtx, script: usize, pc: usize, t0: i64, timing: bool) {
    if timing {
        let dt = (sh.now_us() - t0) as f64;
        th.stats.borrow_mut().scripts[script].commands[pc]
            .latency
            .add(dt);
    }
}

fn eval_expr(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    pc: usize,
    expr: &pgrig_script::Expr,
) -> Result<Value, ()> {
    let sink = &sh.sink;
    let mut debug = |v: &Value| {
        let mut line = pgrig_script::eval::debug_line(script, pc + 1, v);
        line.push('\n');
        sink.message(Level::Raw, &line);
    };
    let mut ctx = EvalCtx {
        vars: &mut c.vars,
        rng: &mut c.rng,
        default_seed: sh.default_seed_var,
        names: &sh.vartable,
        debug: &mut debug,
    };
    match eval(expr, &mut ctx) {
        Ok(v) => Ok(v),
        Err(e) => {
            if !e.is_silent() {
                sh.msg(Level::Error, e.message());
            }
            Err(())
        }
    }
}

/// `\shell` / `\setshell`: build the command line, run it through `sh -c`, store an integer.
fn run_shell(
    sh: &RunShared,
    c: &mut Client,
    args: &[ShellArg],
    set: Option<pgrig_script::VarId>,
) -> Result<(), String> {
    let word = match args.first() {
        Some(ShellArg::Literal(s)) => s.clone(),
        Some(ShellArg::Var { name, .. }) => format!(":{name}"),
        None => String::new(),
    };
    // The command line as bytes: the script's and the variables' bytes, as pgbench passes them.
    let mut bytes = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            bytes.push(b' ');
        }
        match a {
            ShellArg::Literal(s) => pgrig_script::bytes::encode_into(s, &mut bytes),
            ShellArg::Var { var, name } => {
                if !c.vars.render(*var, &mut bytes) {
                    return Err(format!("{word}: undefined variable \":{name}\""));
                }
            }
        }
    }
    let line = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&bytes);
    if bytes.len() > 255 {
        return Err(format!("{word}: shell command is too long"));
    }
    match set {
        None => {
            let st = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(line)
                .status();
            match st {
                Ok(s) if s.success() => Ok(()),
                _ => Err(format!("{word}: could not launch shell command")),
            }
        }
        Some(var) => {
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(line)
                .stderr(std::process::Stdio::inherit())
                .output()
                .map_err(|_| format!("{word}: could not launch shell command"))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let first = match text.split_inclusive('\n').next() {
                Some(l) => l.chars().take(63).collect::<String>(),
                None => return Err(format!("{word}: could not read result of shell command")),
            };
            let trimmed = first.trim_end();
            let lead = trimmed.trim_start();
            match lead.parse::<i64>() {
                Ok(v) => {
                    if !sh.assignable(var, "setshell") {
                        // the message is out; pgbench's abort line follows
                        return Err(String::new());
                    }
                    c.vars.set_value(var, Value::Int(v));
                    if sh.cfg.debug {
                        // pgbench's wording, which names the command's first argument
                        let arg = match args.get(1) {
                            Some(ShellArg::Literal(s)) => s.clone(),
                            Some(ShellArg::Var { name, .. }) => format!(":{name}"),
                            None => "(null)".into(),
                        };
                        sh.msg(
                            Level::Debug,
                            &format!("{word}: shell parameter name: \"{arg}\", value: \"{first}\""),
                        );
                    }
                    Ok(())
                }
                Err(_) => Err(format!(
                    "{word}: shell command must return an integer (not \"{first}\")"
                )),
            }
        }
    }
}
