//! Running one case with one tool (pgbench 15 or pgrig's `pgbench` link) in its own database and
//! directory, and checking what it produced against the case: the suites' `command_checks_all`
//! (exit status, every stdout and stderr regex), plus the after-SQL and log-file checks.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pgrig_lab::{quote_ident, Server};

use super::data::Case;
use super::perl_re::like;

/// A program that answers to the name `pgbench`.
pub struct Tool {
    pub exe: PathBuf,
}

/// The run's shared context: the cluster, the template database with pgbench's tables, the seed.
pub struct Context {
    pub server: &'static Server,
    pub template: String,
    pub seed: u64,
}

/// What one tool did on one case: `None` if it passed, else why not (with its output).
pub type Outcome = Option<String>;

const TIMEOUT: Duration = Duration::from_secs(90);

/// Runs `case` with `tool`: its own database (from the template when the case needs pgbench's
/// tables) and directory, the command `runs` times, then the checks.
pub fn run_case(ctx: &Context, case: &Case, tool: &Tool) -> Outcome {
    let attempts = if case.races.is_some() { 3 } else { 1 };
    let mut outcome = None;
    for _ in 0..attempts {
        outcome = run_once(ctx, case, tool);
        if outcome.is_none() {
            break;
        }
    }
    outcome
}

fn run_once(ctx: &Context, case: &Case, tool: &Tool) -> Outcome {
    let dir = tempfile::tempdir().expect("case directory");
    let db = CaseDb::create(ctx, case);
    if case.tablespace {
        ensure_tablespace(ctx.server);
    }
    if let Some(sql) = &case.sql {
        if let Err(e) = ctx.server.psql(&db.name, sql) {
            return Some(format!("case setup SQL failed: {e}"));
        }
    }
    let args = arguments(ctx, case, dir.path());
    let mut problems = Vec::new();
    for _ in 0..case.runs.unwrap_or(1) {
        let out = execute(ctx, case, tool, &db.name, dir.path(), &args);
        problems.extend(check_output(ctx, case, &out));
        if !problems.is_empty() {
            problems.push(format!(
                "command: pgbench {}\n--- stdout:\n{}--- stderr:\n{}",
                args.join(" "),
                clip(&out.stdout),
                clip(&out.stderr)
            ));
            return Some(problems.join("\n"));
        }
    }
    problems.extend(check_after(ctx, case, &db.name));
    problems.extend(check_logs(case, dir.path()));
    (!problems.is_empty()).then(|| problems.join("\n"))
}

/// The command line: the options (split on white space), `-f` for each script in name order
/// (the file written without its `@weight`), then the trailing arguments.
fn arguments(ctx: &Context, case: &Case, dir: &Path) -> Vec<String> {
    let fill = |s: &str| {
        s.replace("{dir}", &dir.display().to_string())
            .replace("{seed}", &ctx.seed.to_string())
    };
    let mut args: Vec<String> = fill(&case.args)
        .split_whitespace()
        .map(String::from)
        .collect();
    for (name, text) in &case.files {
        let path = dir.join(name);
        let file = match name.rsplit_once('@') {
            Some((base, w)) if w.chars().all(|c| c.is_ascii_digit()) => dir.join(base),
            _ => path.clone(),
        };
        std::fs::write(&file, text).expect("write script");
        args.push("-f".into());
        args.push(path.display().to_string());
    }
    args.extend(fill(&case.extra_args).split_whitespace().map(String::from));
    args
}

pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the tool in `dir` with only the database's `PG*` environment (plus the case's), output to
/// files (so neither pipe can fill), killed after [`TIMEOUT`].
fn execute(
    ctx: &Context,
    case: &Case,
    tool: &Tool,
    db: &str,
    dir: &Path,
    args: &[String],
) -> Output {
    let mut cmd = Command::new(&tool.exe);
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("PG")) {
            cmd.env_remove(&k);
        }
    }
    let db = if case.no_server {
        "pgrig_tap_no_server"
    } else {
        db
    };
    cmd.envs(ctx.server.env(db)).envs(&case.env);
    let (out_path, err_path) = (dir.join(".stdout"), dir.join(".stderr"));
    cmd.stdout(std::fs::File::create(&out_path).expect("stdout file"));
    cmd.stderr(std::fs::File::create(&err_path).expect("stderr file"));
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.exe.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let mut stderr = read(&err_path);
    if status.is_none() {
        stderr.push_str("\n[killed after the test's timeout]\n");
    }
    Output {
        code: status.and_then(|s| s.code()),
        stdout: read(&out_path),
        stderr,
    }
}

fn check_output(ctx: &Context, case: &Case, out: &Output) -> Vec<String> {
    let mut problems = Vec::new();
    if out.code != Some(case.status) {
        problems.push(format!("status {:?}, expected {}", out.code, case.status));
    }
    let seed = ctx.seed.to_string();
    for (stream, pats, text) in [
        ("stdout", &case.stdout, &out.stdout),
        ("stderr", &case.stderr, &out.stderr),
    ] {
        for pat in pats {
            let pat = pat.replace("{seed}", &seed);
            match like(&pat, text) {
                Ok(true) => {}
                Ok(false) => problems.push(format!("{stream} does not match /{pat}/")),
                Err(e) => panic!("case {:?}: bad pattern {e}", case.name),
            }
        }
    }
    problems
}

fn check_after(ctx: &Context, case: &Case, db: &str) -> Vec<String> {
    let Some(after) = &case.after else {
        return Vec::new();
    };
    let out = match ctx.server.psql(db, &after.sql) {
        Ok(out) => out,
        Err(e) => return vec![format!("after-SQL failed: {e}")],
    };
    let seed = ctx.seed.to_string();
    after
        .stdout
        .iter()
        .map(|p| p.replace("{seed}", &seed))
        .filter(|p| !like(p, &out).expect("after pattern"))
        .map(|p| format!("after-SQL output does not match /{p}/:\n{out}"))
        .collect()
}

fn check_logs(case: &Case, dir: &Path) -> Vec<String> {
    let Some(logs) = &case.logs else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("case directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("{}.", logs.prefix)))
        .collect();
    names.sort();
    let mut problems = Vec::new();
    if names.len() != logs.files {
        problems.push(format!(
            "{} log files {names:?}, expected {}",
            names.len(),
            logs.files
        ));
    }
    let name_re = format!(r"^{}\.\d+(\.\d+)?$", logs.prefix);
    for name in &names {
        if !like(&name_re, name).expect("name pattern") {
            problems.push(format!("log file name {name} does not match /{name_re}/"));
        }
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let lines: Vec<&str> = text
            .trim_end_matches('\n')
            .split('\n')
            .filter(|_| !text.is_empty())
            .collect();
        if lines.len() < logs.min_lines || lines.len() > logs.max_lines {
            problems.push(format!(
                "{name}: {} lines, expected {}..={}",
                lines.len(),
                logs.min_lines,
                logs.max_lines
            ));
        }
        for l in lines
            .iter()
            .filter(|l| !like(&logs.line, l).expect("line pattern"))
        {
            problems.push(format!("{name}: line {l:?} does not match /{}/", logs.line));
        }
    }
    problems
}

fn clip(s: &str) -> String {
    const MAX: usize = 4000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[... {} more bytes]\n", &s[..end], s.len() - end)
}

/// A database for one case run, dropped afterwards (none for 002's serverless cases).
struct CaseDb {
    name: String,
    server: &'static Server,
    created: bool,
}

impl CaseDb {
    fn create(ctx: &Context, case: &Case) -> CaseDb {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "tap_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        if !case.no_server {
            let template = if case.init {
                format!(" TEMPLATE {}", quote_ident(&ctx.template))
            } else {
                String::new()
            };
            let sql = format!("CREATE DATABASE {}{template}", quote_ident(&name));
            ctx.server
                .psql("postgres", &sql)
                .expect("create case database");
        }
        CaseDb {
            name,
            server: ctx.server,
            created: !case.no_server,
        }
    }
}

impl Drop for CaseDb {
    fn drop(&mut self) {
        if !self.created {
            return;
        }
        let sql = format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            quote_ident(&self.name)
        );
        let _ = self.server.psql("postgres", &sql);
    }
}

/// The suite's tablespace `regress_pgbench_tap_1_ts`, created once in a directory owned by the
/// server's account.
fn ensure_tablespace(server: &'static Server) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let dir = server.root_dir().join("regress_pgbench_tap_1_ts_dir");
        std::fs::create_dir_all(&dir).expect("tablespace directory");
        let chown = Command::new("chown")
            .arg(server.os_user())
            .arg(&dir)
            .status()
            .expect("chown");
        assert!(
            chown.success(),
            "chown {} {}",
            server.os_user(),
            dir.display()
        );
        let sql = format!(
            "CREATE TABLESPACE regress_pgbench_tap_1_ts LOCATION '{}'",
            dir.display()
        );
        server.psql("postgres", &sql).expect("create tablespace");
    });
}
