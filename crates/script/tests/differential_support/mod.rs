//! Shared machinery of the differential tests: running pgbench 15 (the oracle) on a script and
//! replaying the same script with pgrig's parser and evaluator, both producing a transcript of
//! the stderr lines that matter (`debug(...)` lines, `pgbench: error: ...` lines and the
//! `client 0 aborted in command K ...` line), so the two can be compared line by line.
//!
//! Used as `mod differential_support;` by several test binaries; not every binary uses every
//! item.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pgrig_script::eval::debug_line;
use pgrig_script::parse::parse_script;
use pgrig_script::seeding::seed_states_with;
use pgrig_script::{eval, CommandKind, EvalCtx, QueryMode, Value, VarTable, Vars};

/// The default `--random-seed` of the expression corpus (the one of pgbench's TAP tests).
pub const DEFAULT_SEED: u64 = 5432;

/// Options of one pgbench run (and of its replay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub seed: u64,
    /// `-D NAME=VALUE` definitions, in order.
    pub defines: Vec<(String, String)>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: DEFAULT_SEED,
            defines: Vec::new(),
        }
    }
}

impl RunOptions {
    /// The pgbench arguments these options stand for (for failure messages and the oracle run).
    pub fn pgbench_args(&self) -> Vec<String> {
        let mut args = vec![format!("--random-seed={}", self.seed)];
        for (k, v) in &self.defines {
            args.push("-D".into());
            args.push(format!("{k}={v}"));
        }
        args
    }

    pub fn describe(&self) -> String {
        self.pgbench_args()
            .iter()
            .map(|a| {
                if a.contains([' ', '\t', '\'']) || a.ends_with('=') {
                    format!("'{}'", a.replace('\'', "'\\''"))
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The stderr lines of one run that the comparison looks at, attributed to commands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    /// 0-based command index => its lines, in order.
    pub by_command: BTreeMap<usize, Vec<String>>,
    /// Lines that could not be attributed to a command (should stay empty).
    pub other: Vec<String>,
    /// 0-based index of the command the client aborted in, if it did.
    pub aborted_at: Option<usize>,
}

impl Transcript {
    pub fn lines_of(&self, command: usize) -> &[String] {
        self.by_command
            .get(&command)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Parses pgbench's stderr of a run that got past script parsing.
pub fn parse_pgbench_stderr(stderr: &str) -> Transcript {
    let mut t = Transcript::default();
    let mut pending: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("debug(script=0,command=") {
            let n: usize = rest
                .split(')')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected debug line from pgbench: {line:?}"));
            t.by_command.entry(n - 1).or_default().push(line.to_owned());
        } else if let Some(rest) = line.strip_prefix("pgbench: error: client 0 aborted in command ")
        {
            let k: usize = rest
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected abort line from pgbench: {line:?}"));
            let entry = t.by_command.entry(k).or_default();
            entry.append(&mut pending);
            entry.push(line.to_owned());
            t.aborted_at = Some(k);
        } else if line.starts_with("pgbench: setting random seed to ")
            || line == "pgbench: error: Run was aborted; the above results are incomplete."
        {
        } else if line.starts_with("pgbench: error: ") {
            pending.push(line.to_owned());
        } else {
            t.other.push(line.to_owned());
        }
    }
    t.other.append(&mut pending);
    t
}

/// What happened when pgbench was run on a script.
pub enum PgbenchRun {
    /// It ran (exit 0 or 2); the transcript of its stderr.
    Ran(Transcript),
    /// It rejected the script or failed otherwise (exit code and full stderr).
    Failed { code: Option<i32>, stderr: String },
}

/// The pgbench binary, or a panic telling how to get one.
pub fn pgbench() -> PathBuf {
    pgrig_testkit::pgbench_oracle()
}

/// Runs `pgbench -n -t 1 -c 1 OPTIONS -f FILE` against `db` on `script` (written to
/// `dir/name`, run with `dir` as the working directory so messages name the file as `name`).
pub fn run_pgbench(
    db: &pgrig_testkit::TestDb,
    dir: &Path,
    name: &str,
    script: &str,
    opts: &RunOptions,
) -> PgbenchRun {
    std::fs::write(dir.join(name), script).expect("write script");
    let mut cmd = db.command(pgbench());
    cmd.current_dir(dir)
        .args(["-n", "-t", "1", "-c", "1"])
        .args(opts.pgbench_args())
        .args(["-f", name]);
    let out = pgrig_testkit::run(cmd);
    match out.code {
        Some(0) | Some(2) => PgbenchRun::Ran(parse_pgbench_stderr(&out.stderr)),
        code => PgbenchRun::Failed {
            code,
            stderr: out.stderr,
        },
    }
}

/// Runs pgbench on a script file that it should reject before connecting (the server address
/// points nowhere, so a script that is accepted fails with a connection error instead).
pub fn run_pgbench_parse_only(dir: &Path, name: &str) -> pgrig_testkit::CmdOutput {
    let mut cmd = Command::new(pgbench());
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("PG")) {
            cmd.env_remove(&k);
        }
    }
    cmd.current_dir(dir)
        .env("PGHOST", "/nonexistent-pgrig-socket-dir")
        .env("PGPORT", "1")
        .env("PGCONNECT_TIMEOUT", "1")
        .args(["-n", "-t", "1", "-f", name]);
    pgrig_testkit::run(cmd)
}

/// Whether pgbench's stderr shows that it accepted the script and went on to connect.
pub fn pgbench_got_to_connecting(stderr: &str) -> bool {
    stderr.contains("connection to server") || stderr.contains("could not create connection")
}

/// Outcome of replaying a script with pgrig.
pub enum Replay {
    Ran(Transcript),
    /// `parse_script` rejected it: `pgbench: error: {err}`.
    Rejected(String),
}

/// Parses `script` (named `name`) with pgrig and evaluates its `\set` commands in order, the way
/// client 0 of `pgbench -n -t 1 -c 1 OPTIONS` would, producing pgbench's stderr lines.
pub fn replay(name: &str, script: &str, opts: &RunOptions) -> Replay {
    let mut table = VarTable::new();
    let mut prepared = 0;
    let commands = match parse_script(name, script, &mut table, QueryMode::Simple, &mut prepared) {
        Ok(c) => c,
        Err(e) => return Replay::Rejected(format!("pgbench: error: {e}")),
    };

    // -D definitions first, then the automatic variables pgbench defines unless -D did.
    let mut vars = Vars::new();
    for (k, v) in &opts.defines {
        let id = table.intern(k);
        vars.define(id, v);
    }
    let defined = |name: &str| opts.defines.iter().any(|(k, _)| k == name);
    let default_seed_defined = defined("default_seed");
    let states = seed_states_with(opts.seed, 1, 1, default_seed_defined);
    let autos: [(&str, Option<i64>); 4] = [
        ("scale", Some(1)),
        ("client_id", Some(0)),
        ("default_seed", states.default_seed),
        ("random_seed", Some(states.random_seed as i64)),
    ];
    for (name, value) in autos {
        let id = table.intern(name);
        if !defined(name) {
            if let Some(v) = value {
                vars.set_value(id, Value::Int(v));
            }
        }
    }
    let default_seed = table.intern("default_seed");
    let mut rng = states.clients[0];

    let mut t = Transcript::default();
    for (i, cmd) in commands.iter().enumerate() {
        let CommandKind::Set { var, expr } = &cmd.kind else {
            panic!(
                "replay handles only \\set scripts, command {i} is {:?}",
                cmd.kind
            );
        };
        let mut lines: Vec<String> = Vec::new();
        let result = {
            let mut sink = |v: &Value| lines.push(debug_line(0, i + 1, v));
            let mut ctx = EvalCtx {
                vars: &mut vars,
                names: &table,
                rng: &mut rng,
                default_seed,
                debug: &mut sink,
            };
            eval(expr, &mut ctx)
        };
        match result {
            Ok(v) => {
                vars.set_value(*var, v);
                if !lines.is_empty() {
                    t.by_command.insert(i, lines);
                }
            }
            Err(e) => {
                if !e.is_silent() {
                    lines.push(format!("pgbench: error: {e}"));
                }
                lines.push(format!(
                    "pgbench: error: client 0 aborted in command {i} (set) of script 0; \
                     evaluation of meta-command failed"
                ));
                t.by_command.insert(i, lines);
                t.aborted_at = Some(i);
                break;
            }
        }
    }
    Replay::Ran(t)
}

/// Runs `jobs` on up to `threads` threads, results in input order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = f(&items[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// The corpus directory.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Entries of the corpus's `KNOWN_DIFFERENCES.md`: lines `- KIND: \`KEY\` ...` (KIND = `expr`).
/// Returns the keys of the given kind.
pub fn known_differences(kind: &str) -> Vec<String> {
    let path = corpus_dir().join("KNOWN_DIFFERENCES.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let prefix = format!("- {kind}: `");
    text.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|rest| rest.split_once('`').map(|(k, _)| k.to_owned()))
        .collect()
}

/// Indents every line of `s` (for failure reports).
pub fn indent(lines: &[String]) -> String {
    if lines.is_empty() {
        return "      (nothing)\n".into();
    }
    lines.iter().map(|l| format!("      {l}\n")).collect()
}
