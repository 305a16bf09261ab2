//! pgbench-compatible command-line parsing for `pgrig bench` (and the `pgbench` link), and
//! for the fleet's workers and manifest checks, which read the same command lines.
//!
//! [`parse_pgbench_args`] turns an argument vector into a [`Parsed`] outcome: what to do
//! ([`Action`]: help, version, builtin list, show a builtin script, initialise, benchmark) plus
//! the informational lines pgbench would already have printed on stderr while parsing
//! (`pgbench: setting random seed to N`). Failures come back as an [`ArgError`] holding the exact
//! stderr lines and the exit status; nothing is printed here.
//!
//! Layout: `getopt` (GNU getopt_long emulation), `numeric` (C number parsing), `options`
//! (pgbench's option table), `state` (per-option handling, in command-line order), `finish`
//! (the checks after the option loop and the final configs), `scripts` (`-b`/`-f`), `system`
//! (seed sources, open-files limit), `help` (the `--help` text), `run_options` (what of a
//! command line travels to the workers of a segmented run).

mod finish;
mod getopt;
mod help;
pub use help::init_options;
mod numeric;
mod options;
pub mod run_options;
mod scripts;
mod state;
mod system;

pub use help::help_text;
pub use scripts::builtin_list_lines;

use options::Opt;
use pgrig_engine::config::{BenchConfig, InitConfig};

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `--help`/`-?` as the first argument: print this text to stdout, exit 0.
    Help(String),
    /// `--version`/`-V` as the first argument: print the version banner to stdout, exit 0.
    Version,
    /// `-b list`: print these lines to **stderr**, exit 0.
    BuiltinList(Vec<String>),
    /// `--show-script=NAME`: print the builtin script with this full name to **stderr**
    /// (`-- NAME: DESC\nSCRIPT\n`), exit 0.
    ShowScript(String),
    /// `-i`: run the initialisation steps.
    Init(InitConfig),
    /// Run a benchmark.
    Bench(BenchConfig),
}

/// pgrig's presentation options of a benchmark (the cli's own: they never reach the engine).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutputOptions {
    /// `--json FILE` (`-` = stdout): the run document
    pub json: Option<String>,
    /// `--percentiles`: latency percentile lines in the text report
    pub percentiles: bool,
    /// `--profile DIR`, `--profile-pid PID`, `--profile-client`: perf profiles of the run
    pub profile: Option<ProfileOptions>,
    /// `--metrics-addr HOST:PORT`, `--metrics-linger SEC`: live OpenMetrics
    pub metrics: Option<MetricsOptions>,
    /// `--segments N --coordinator URL`: run as the coordinator of N `pgrig worker`s
    pub segments: Option<SegmentsOptions>,
}

/// Where live metrics are served (`--metrics-addr`) and how long the final figures wait for a
/// scrape after the run (`--metrics-linger`, seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsOptions {
    pub addr: String,
    pub linger_s: u32,
}

/// A run split into `count` segments coordinated through the database at `coordinator`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentsOptions {
    pub count: u32,
    pub coordinator: String,
    /// `--segments-wait SEC`: how long to wait for every segment to register
    pub wait_s: u32,
    /// `--store PATH|URL`: the results store the merged run is written to
    pub store: Option<String>,
}

/// `--metrics-linger`'s default, seconds: one scrape interval of a Prometheus left at its default
/// (`scrape_interval: 1m`), so the final figures are scraped once before the endpoint goes away.
/// The cli's live metrics take the same value (checked when the cli compiles).
pub const DEFAULT_LINGER_S: u32 = 60;

/// `--segments-wait`'s default, seconds (as a worker's `--wait`).
pub const SEGMENTS_WAIT_S: u32 = 300;

/// Where a benchmark's profiles go and what is profiled (`--profile` and its companions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileOptions {
    /// `DIR/server.folded` and `DIR/server.svg` (and `client.*`)
    pub dir: std::path::PathBuf,
    /// The server's postmaster; `None`: found through the unix socket's lock file
    pub pid: Option<u32>,
    /// Profile pgrig's own process too
    pub client: bool,
}

/// A successful parse.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub action: Action,
    /// `--json`, `--percentiles` (defaults unless the action is a benchmark)
    pub output: OutputOptions,
    /// Full stderr lines pgbench prints while parsing, before acting on the result
    /// (e.g. `pgbench: setting random seed to 42`). Print them first.
    pub notices: Vec<String>,
}

/// A failed parse: print `lines` to stderr (one per line) and exit with `exit_code`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError {
    pub lines: Vec<String>,
    pub exit_code: i32,
}

/// How diagnostics are prefixed, like PostgreSQL's `pg_logging` with a program name.
#[derive(Clone, Debug)]
pub(crate) struct Reporter {
    /// Prefix of every diagnostic (`pgbench`, `pgrig`).
    pub prefix: String,
    /// How the command is invoked, for hints and the usage text (`pgbench`, `pgrig bench`).
    pub invocation: String,
}

impl Reporter {
    fn new(prog: &str) -> Self {
        let prog = prog.trim();
        let prog = if prog.is_empty() { "pgbench" } else { prog };
        let prefix = prog.split_whitespace().next().unwrap_or(prog).to_string();
        Reporter {
            prefix,
            invocation: prog.to_string(),
        }
    }

    pub fn error(&self, msg: &str) -> String {
        format!("{}: error: {msg}", self.prefix)
    }

    pub fn detail(&self, msg: &str) -> String {
        format!("{}: detail: {msg}", self.prefix)
    }

    pub fn hint(&self, msg: &str) -> String {
        format!("{}: hint: {msg}", self.prefix)
    }

    pub fn info(&self, msg: &str) -> String {
        format!("{}: {msg}", self.prefix)
    }

    /// `Try "PROG --help" for more information.`
    pub fn try_help(&self) -> String {
        self.hint(&format!(
            "Try \"{} --help\" for more information.",
            self.invocation
        ))
    }
}

/// Parses pgbench's command line.
///
/// * `prog`: the name to report as. Diagnostics are prefixed with its first word and hints and
///   the help text use all of it: pass `"pgbench"` when invoked through a `pgbench` link
///   (`pgbench: error: ...`, `Try "pgbench --help"`), `"pgrig bench"` for the subcommand
///   (`pgrig: error: ...`, `Try "pgrig bench --help"`).
/// * `args`: the argument vector **including** an `argv[0]` equivalent at index 0; `args[0]` is
///   used verbatim by getopt-style complaints (`/usr/bin/pgbench: invalid option -- 'x'`), and
///   `--help`/`--version` are only recognised as `args[1]`.
/// * `env`: environment lookup (`PGBENCH_RANDOM_SEED`, `POSIXLY_CORRECT`).
///
/// The database name is `-d`, else the first non-option argument, else `None` (the connection
/// layer applies `PGDATABASE`, `PGUSER`, the OS user like libpq). `-f` files are read here (and
/// stdin for `-`); their script text is not parsed here.
pub fn parse_pgbench_args(
    prog: &str,
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Parsed, ArgError> {
    let rep = Reporter::new(prog);
    if let Some(action) = help_or_version(&rep, args) {
        return Ok(Parsed {
            action,
            output: OutputOptions::default(),
            notices: vec![],
        });
    }
    let argv0 = args
        .first()
        .map(String::as_str)
        .unwrap_or(rep.invocation.as_str());
    let rest = args.get(1..).unwrap_or(&[]);
    let mut st = state::State::new(&rep);
    let fail = |st: &state::State, mut lines: Vec<String>| {
        let mut all = st.notices.clone();
        all.append(&mut lines);
        ArgError {
            lines: all,
            exit_code: 1,
        }
    };
    if let Some(seed) = env("PGBENCH_RANDOM_SEED") {
        if let Err(mut lines) = st.set_random_seed(&seed) {
            lines.push(rep.error(
                "error while setting random seed from PGBENCH_RANDOM_SEED environment variable",
            ));
            return Err(fail(&st, lines));
        }
    }
    let posixly_correct = env("POSIXLY_CORRECT").is_some();
    let mut scan = getopt::Getopt::new(options::spec(), argv0, rest, posixly_correct);
    for event in scan.by_ref() {
        match event {
            getopt::Event::Error(line) => return Err(fail(&st, vec![line, rep.try_help()])),
            getopt::Event::Opt { id, arg } => {
                match st.apply(dash_d(id, &arg), arg.unwrap_or_default()) {
                    Ok(None) => {}
                    Ok(Some(action)) => {
                        return Ok(Parsed {
                            action,
                            output: OutputOptions::default(),
                            notices: st.notices,
                        })
                    }
                    Err(lines) => return Err(fail(&st, lines)),
                }
            }
        }
    }
    let positionals = scan.positionals().to_vec();
    if let Some(msg) = combination_error(&st) {
        return Err(fail(&st, vec![rep.error(msg), rep.try_help()]));
    }
    match finish::finish(&mut st, &positionals) {
        Ok(action) => Ok(Parsed {
            action,
            output: output_options(&st),
            notices: st.notices,
        }),
        Err(lines) => Err(fail(&st, lines)),
    }
}

/// `--help`/`-?` and `--version`/`-V`, recognised only as the first argument (as pgbench does).
fn help_or_version(rep: &Reporter, args: &[String]) -> Option<Action> {
    match args.get(1).map(String::as_str) {
        Some("--help" | "-?") => Some(Action::Help(help_text(&rep.invocation))),
        Some("--version" | "-V") => Some(Action::Version),
        _ => None,
    }
}

/// pgrig's own options that only go together.
fn combination_error(st: &state::State) -> Option<&'static str> {
    if st.profile.is_none() && (st.profile_pid.is_some() || st.profile_client) {
        return Some("--profile-pid and --profile-client need --profile DIR");
    }
    if st.segments.is_some() != st.coordinator.is_some() {
        return Some("--segments N and --coordinator URL go together");
    }
    if st.segments.is_none() && (st.segments_wait.is_some() || st.store.is_some()) {
        return Some("--segments-wait and --store go with --segments N --coordinator URL");
    }
    None
}

/// The presentation options (pgrig's own: `--json`, `--percentiles`, `--profile`, live
/// metrics, segments) as parsed.
fn output_options(st: &state::State) -> OutputOptions {
    OutputOptions {
        json: st.json.clone(),
        percentiles: st.percentiles,
        profile: st.profile.as_ref().map(|dir| ProfileOptions {
            dir: dir.into(),
            pid: st.profile_pid,
            client: st.profile_client,
        }),
        metrics: st.metrics_addr.as_ref().map(|addr| MetricsOptions {
            addr: addr.clone(),
            linger_s: st.metrics_linger,
        }),
        segments: st
            .segments
            .zip(st.coordinator.clone())
            .map(|(count, url)| SegmentsOptions {
                count,
                coordinator: url,
                wait_s: st.segments_wait.unwrap_or(SEGMENTS_WAIT_S),
                store: st.store.clone(),
            }),
    }
}

/// `-d` without a word after it is pgbench 15/16's `--debug` (see `options.rs`).
fn dash_d(id: Opt, arg: &Option<String>) -> Opt {
    if id == Opt::Dbname && arg.is_none() {
        Opt::Debug
    } else {
        id
    }
}
