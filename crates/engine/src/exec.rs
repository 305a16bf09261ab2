//! Runs one attempt of one script for one client: walks the command list (conditionals, meta
//! commands, SQL), times each command for `-r`, and classifies how the attempt ended.

use std::time::Duration;

use pgrig_script::command::{ShellArg, SleepArg};
use pgrig_script::{eval, CommandKind, EvalCtx, Value};

use crate::client_state::{Client, FailKind};
use crate::pipeline;
use crate::shared::{RunShared, ThreadCtx};
use crate::sink::Level;
use crate::sql::{self, SqlOutcome};

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
    let mut pc = 0usize;
    // Set when we arrive at an \elif/\else by a jump from a false condition.
    let mut jumped = false;
    while pc < commands.len() {
        let cmd = &commands[pc];
        let t0 = if timing { sh.now_us() } else { 0 };
        if sh.cfg.debug {
            debug_meta(sh, c, script, pc, &cmd.kind, jumped);
        }
        let next = match &cmd.kind {
            CommandKind::Sql(q) => match pipeline_gset(sh, c, script, pc, q) {
                Err(end) => Err(end),
                Ok(()) => {
                    let outcome = sql::run_sql(sh, c, script, pc, q, sh.prep_index[script][pc]);
                    sql_step(outcome.await, pc)
                }
            },
            CommandKind::Sleep { duration, unit_us } => {
                match sleep_us(sh, c, script, pc, duration, *unit_us) {
                    Ok(us) if us > 0 => {
                        pgrig_wire::rt::sleep(Duration::from_micros(us as u64)).await;
                        Ok(pc + 1)
                    }
                    Ok(_) => Ok(pc + 1),
                    Err(end) => Err(end),
                }
            }
            CommandKind::StartPipeline => start_pipeline(sh, c, script, pc).await,
            CommandKind::SyncPipeline | CommandKind::EndPipeline => {
                sync_pipeline(sh, c, script, pc, &cmd.kind).await
            }
            kind @ (CommandKind::If { .. }
            | CommandKind::Elif { .. }
            | CommandKind::Else { .. }
            | CommandKind::EndIf) => branch(sh, c, script, pc, kind, &mut jumped),
            kind => meta(sh, c, script, pc, kind),
        };
        match next {
            Ok(next) => {
                record_cmd(sh, th, script, pc, t0, timing);
                pc = next;
            }
            Err(end) => return end,
        }
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

/// The abort reason when a meta-command's expression cannot be evaluated.
const EVAL_FAILED: &str = "evaluation of meta-command failed";

/// The next command's index, or how the attempt ended.
type Step = Result<usize, Attempt>;

/// `--debug`: pgbench shows the meta-commands it executes; an \else or \endif reached from a
/// false branch is only skipped over.
#[cold]
fn debug_meta(
    sh: &RunShared,
    c: &Client,
    script: usize,
    pc: usize,
    kind: &CommandKind,
    jumped: bool,
) {
    match kind {
        CommandKind::Sql(_) => {}
        CommandKind::Else { .. } | CommandKind::EndIf if jumped => {}
        _ => sh.debug_meta(c.id, script, pc),
    }
}

#[inline]
fn sql_step(outcome: SqlOutcome, pc: usize) -> Step {
    match outcome {
        SqlOutcome::Done => Ok(pc + 1),
        SqlOutcome::Failed(kind) => Err(Attempt::Failed { kind, cmd: pc }),
        SqlOutcome::Abort => Err(Attempt::Abort),
    }
}

/// pgbench checks when a command is about to be sent that `\gset`/`\aset` is not used in a
/// pipeline.
#[inline]
fn pipeline_gset(
    sh: &RunShared,
    c: &Client,
    script: usize,
    pc: usize,
    q: &pgrig_script::SqlCommand,
) -> Result<(), Attempt> {
    match &q.gset {
        Some(g) if c.in_pipeline => {
            let (name, why) = if g.all {
                ("aset", "\\aset is not allowed in pipeline mode")
            } else {
                ("gset", "\\gset is not allowed in pipeline mode")
            };
            Err(abort_meta(sh, c, pc, name, script, why))
        }
        _ => Ok(()),
    }
}

/// The meta-commands that run without waiting, but for the conditionals (`branch`): `\set`,
/// `\shell`/`\setshell`.
#[inline]
fn meta(sh: &RunShared, c: &mut Client, script: usize, pc: usize, kind: &CommandKind) -> Step {
    match kind {
        CommandKind::Set { var, expr } => match eval_expr(sh, c, script, pc, expr) {
            Ok(v) if sh.assignable(*var, "set") => {
                c.vars.set_value(*var, v);
                Ok(pc + 1)
            }
            Ok(_) => Err(abort_meta(
                sh,
                c,
                pc,
                "set",
                script,
                "assignment of meta-command failed",
            )),
            Err(()) => Err(abort_meta(sh, c, pc, "set", script, EVAL_FAILED)),
        },
        CommandKind::Shell { args } | CommandKind::SetShell { args, .. } => {
            let set = match kind {
                CommandKind::SetShell { var, .. } => Some(*var),
                _ => None,
            };
            if let Err(msg) = run_shell(sh, c, args, set) {
                if !msg.is_empty() {
                    sh.msg(Level::Error, &msg);
                }
                let name = if set.is_some() { "setshell" } else { "shell" };
                return Err(abort_meta(
                    sh,
                    c,
                    pc,
                    name,
                    script,
                    "execution of meta-command failed",
                ));
            }
            Ok(pc + 1)
        }
        _ => unreachable!("commands that wait are run by run_script_once"),
    }
}

/// `\if`, `\elif`, `\else`, `\endif`: where the walk goes on. `jumped` is set when the next
/// command is reached from a false condition.
fn branch(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    pc: usize,
    kind: &CommandKind,
    jumped: &mut bool,
) -> Step {
    match kind {
        CommandKind::If { cond, next } => match eval_expr(sh, c, script, pc, cond) {
            Ok(v) if !v.truth() => {
                *jumped = true;
                Ok(*next)
            }
            Ok(_) => Ok(pc + 1),
            Err(()) => Err(abort_meta(sh, c, pc, "if", script, EVAL_FAILED)),
        },
        CommandKind::Elif { cond, next, end } => {
            if !*jumped {
                return Ok(*end + 1);
            }
            *jumped = false;
            match eval_expr(sh, c, script, pc, cond) {
                Ok(v) if v.truth() => Ok(pc + 1),
                Ok(_) => {
                    *jumped = true;
                    Ok(*next)
                }
                Err(()) => Err(abort_meta(sh, c, pc, "elif", script, EVAL_FAILED)),
            }
        }
        CommandKind::Else { end } => {
            if !*jumped {
                return Ok(*end + 1);
            }
            *jumped = false;
            Ok(pc + 1)
        }
        CommandKind::EndIf => {
            *jumped = false;
            Ok(pc + 1)
        }
        _ => unreachable!("not a conditional"),
    }
}

/// `\sleep`'s length in µs (a variable's value checked as pgbench does).
fn sleep_us(
    sh: &RunShared,
    c: &Client,
    script: usize,
    pc: usize,
    duration: &SleepArg,
    unit_us: i64,
) -> Result<i64, Attempt> {
    let n = match duration {
        SleepArg::Literal(n) => *n,
        SleepArg::Var { var, name } => match c.vars.sleep_value(*var, name) {
            Ok(n) => n,
            Err(msg) => {
                sh.msg(Level::Error, &msg);
                let why = "execution of meta-command failed";
                return Err(abort_meta(sh, c, pc, "sleep", script, why));
            }
        },
    };
    Ok(n.saturating_mul(unit_us))
}

/// `\startpipeline`.
async fn start_pipeline(sh: &RunShared, c: &mut Client, script: usize, pc: usize) -> Step {
    let name = "startpipeline";
    if sh.cfg.mode == pgrig_script::QueryMode::Simple {
        let why = "cannot use pipeline mode with the simple query protocol";
        return Err(abort_meta(sh, c, pc, name, script, why));
    }
    if let SqlOutcome::Abort = pipeline::prepare(sh, c, script, pc).await {
        return Err(Attempt::Abort);
    }
    if c.in_pipeline {
        return Err(abort_meta(
            sh,
            c,
            pc,
            name,
            script,
            "already in pipeline mode",
        ));
    }
    c.in_pipeline = true;
    pipeline::start(c);
    Ok(pc + 1)
}

/// `\syncpipeline` and `\endpipeline`.
async fn sync_pipeline(
    sh: &RunShared,
    c: &mut Client,
    script: usize,
    pc: usize,
    kind: &CommandKind,
) -> Step {
    let end = matches!(kind, CommandKind::EndPipeline);
    if !c.in_pipeline {
        return Err(abort_meta(
            sh,
            c,
            pc,
            kind.meta_name(),
            script,
            "not in pipeline mode",
        ));
    }
    let step = sql_step(pipeline::sync(sh, c, script, pc, end).await, pc);
    if step.is_ok() && end {
        c.in_pipeline = false;
    }
    step
}

#[inline]
fn record_cmd(sh: &RunShared, th: &ThreadCtx, script: usize, pc: usize, t0: i64, timing: bool) {
    if timing {
        let dt = (sh.now_us() - t0) as f64;
        th.stats.borrow_mut().scripts[script].record_command(pc, dt);
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
    let bytes = shell_line(c, args, &word)?;
    let line = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&bytes);
    if bytes.len() > 255 {
        return Err(format!("{word}: shell command is too long"));
    }
    let Some(var) = set else {
        let st = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(line)
            .status();
        return match st {
            Ok(s) if s.success() => Ok(()),
            _ => Err(format!("{word}: could not launch shell command")),
        };
    };
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(line)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|_| format!("{word}: could not launch shell command"))?;
    set_shell_result(sh, c, args, &word, var, &out.stdout)
}

/// The command line as bytes: the script's and the variables' bytes, as pgbench passes them.
fn shell_line(c: &Client, args: &[ShellArg], word: &str) -> Result<Vec<u8>, String> {
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
    Ok(bytes)
}

/// `\setshell`: the first line of the command's output, which must be an integer, into `var`.
fn set_shell_result(
    sh: &RunShared,
    c: &mut Client,
    args: &[ShellArg],
    word: &str,
    var: pgrig_script::VarId,
    stdout: &[u8],
) -> Result<(), String> {
    let text = String::from_utf8_lossy(stdout);
    let first = match text.split_inclusive('\n').next() {
        Some(l) => l.chars().take(63).collect::<String>(),
        None => return Err(format!("{word}: could not read result of shell command")),
    };
    let Ok(v) = first.trim_end().trim_start().parse::<i64>() else {
        return Err(format!(
            "{word}: shell command must return an integer (not \"{first}\")"
        ));
    };
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
