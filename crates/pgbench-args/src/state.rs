//! The option loop's state: each option is validated and recorded as soon as getopt returns it,
//! in command-line order, with pgbench's messages (so the first bad option is the one reported,
//! exactly as pgbench does). `-b list` and `--show-script` end the parse on the spot.

use pgrig_engine::config::{ConnArgs, PartitionMethod, ScriptSource};
use pgrig_script::QueryMode;

use super::numeric::{atof, atoi, option_parse_int, scan_u64_exact, IntError};
use super::options::{Family, Opt};
use super::scripts::{self, MAX_SCRIPTS};
use super::{system, Action, Reporter};

/// Everything collected from the options, with pgbench's defaults and raw (C-like) values.
#[derive(Clone, Debug)]
pub struct State {
    pub rep: Reporter,
    pub notices: Vec<String>,
    pub is_init: bool,
    pub bench_opt_set: bool,
    pub init_opt_set: bool,
    pub conn: ConnArgs,
    // initialisation
    pub init_steps: Option<String>,
    pub foreign_keys: bool,
    pub fillfactor: i32,
    pub quiet: bool,
    pub unlogged: bool,
    pub tablespace: Option<String>,
    pub index_tablespace: Option<String>,
    pub partitions: i32,
    pub partition_method: Option<PartitionMethod>,
    // both modes
    pub no_vacuum: bool,
    pub scale: i32,
    pub scale_given: bool,
    pub debug: bool,
    // benchmark
    pub scripts: Vec<ScriptSource>,
    pub clients: i32,
    pub threads: i32,
    pub nxacts: i32,
    pub duration: i32,
    pub mode: QueryMode,
    pub connect: bool,
    pub defines: Vec<(String, String)>,
    pub vacuum_all: bool,
    pub progress: i32,
    pub progress_timestamp: bool,
    pub report_per_command: bool,
    pub rate: Option<f64>,
    pub latency_limit_us: i64,
    pub max_tries: u32,
    pub failures_detailed: bool,
    pub verbose_errors: bool,
    pub exit_on_abort: bool,
    pub continue_on_error: bool,
    pub log: bool,
    pub log_prefix: Option<String>,
    pub sample_rate: Option<f64>,
    pub agg_interval: i32,
    pub random_seed: Option<u64>,
    pub json: Option<String>,
    pub percentiles: bool,
    pub profile: Option<String>,
    pub profile_pid: Option<u32>,
    pub profile_client: bool,
    pub metrics_addr: Option<String>,
    pub metrics_linger: u32,
    pub segments: Option<u32>,
    pub coordinator: Option<String>,
    pub segments_wait: Option<u32>,
    pub store: Option<String>,
}

type Lines = Vec<String>;

impl State {
    pub fn new(rep: &Reporter) -> Self {
        State {
            rep: rep.clone(),
            notices: Vec::new(),
            is_init: false,
            bench_opt_set: false,
            init_opt_set: false,
            conn: ConnArgs::default(),
            init_steps: None,
            foreign_keys: false,
            fillfactor: 100,
            quiet: false,
            unlogged: false,
            tablespace: None,
            index_tablespace: None,
            partitions: 0,
            partition_method: None,
            no_vacuum: false,
            scale: 1,
            scale_given: false,
            debug: false,
            scripts: Vec::new(),
            clients: 1,
            threads: 1,
            nxacts: 0,
            duration: 0,
            mode: QueryMode::Simple,
            connect: false,
            defines: Vec::new(),
            vacuum_all: false,
            progress: 0,
            progress_timestamp: false,
            report_per_command: false,
            rate: None,
            latency_limit_us: 0,
            max_tries: 1,
            failures_detailed: false,
            verbose_errors: false,
            exit_on_abort: false,
            continue_on_error: false,
            log: false,
            log_prefix: None,
            sample_rate: None,
            agg_interval: 0,
            random_seed: None,
            json: None,
            percentiles: false,
            profile: None,
            profile_pid: None,
            profile_client: false,
            metrics_addr: None,
            metrics_linger: crate::DEFAULT_LINGER_S,
            segments: None,
            coordinator: None,
            segments_wait: None,
            store: None,
        }
    }

    fn err(&self, msg: &str) -> Lines {
        vec![self.rep.error(msg)]
    }

    /// `option_parse_int()` with its two messages.
    fn int(&self, arg: &str, name: &str, min: i32, max: i32) -> Result<i32, Lines> {
        option_parse_int(arg, min, max).map_err(|e| match e {
            IntError::Invalid => self.err(&format!("invalid value \"{arg}\" for option {name}")),
            IntError::Range => self.err(&format!("{name} must be in range {min}..{max}")),
        })
    }

    /// `set_random_seed()`: `time`, `rand` or an unsigned integer; announces the seed.
    pub fn set_random_seed(&mut self, seed: &str) -> Result<(), Lines> {
        let value = match seed {
            "time" => system::monotonic_micros(),
            "rand" => match system::strong_random_u64() {
                Some(v) => v,
                None => return Err(self.err("could not generate random seed")),
            },
            _ => match scan_u64_exact(seed) {
                Some(v) => v,
                None => {
                    return Err(vec![
                        self.rep
                            .error(&format!("unrecognized random seed option \"{seed}\"")),
                        self.rep
                            .detail("Expecting an unsigned integer, \"time\" or \"rand\"."),
                    ])
                }
            },
        };
        self.notices
            .push(self.rep.info(&format!("setting random seed to {value}")));
        self.random_seed = Some(value);
        Ok(())
    }

    fn add_script(&mut self, script: ScriptSource) -> Result<(), Lines> {
        if self.scripts.len() >= MAX_SCRIPTS {
            return Err(self.err(&format!("at most {MAX_SCRIPTS} SQL scripts are allowed")));
        }
        self.scripts.push(script);
        Ok(())
    }

    fn add_builtin(&mut self, name: &str, weight: i64) -> Result<(), Lines> {
        let rep = self.rep.clone();
        let full = scripts::find_builtin(name, &|m| rep.error(m))?;
        self.add_script(ScriptSource::Builtin {
            name: full.to_string(),
            weight,
        })
    }

    /// Handles one option. `Ok(Some(action))` ends the parse at once (`-b list`, `--show-script`).
    pub fn apply(&mut self, opt: Opt, arg: String) -> Result<Option<Action>, Lines> {
        match opt.family() {
            Family::Bench => self.bench_opt_set = true,
            Family::Init => self.init_opt_set = true,
            Family::Common => {}
        }
        if self.apply_init(opt, &arg)?
            || self.apply_logging(opt, &arg)?
            || self.apply_extra(opt, &arg)?
        {
            return Ok(None);
        }
        match opt {
            Opt::Builtin => {
                if arg == "list" {
                    return Ok(Some(Action::BuiltinList(scripts::builtin_list_lines())));
                }
                let (name, weight) = scripts::parse_weight(&arg).map_err(|m| self.err(&m))?;
                self.add_builtin(&name, weight)?;
            }
            Opt::Client => {
                self.clients = self.int(&arg, "-c/--clients", 1, i32::MAX)?;
                if let Err(e) = system::ensure_fd_limit(self.clients) {
                    let mut lines = self.err(&e.message);
                    if !e.hint.is_empty() {
                        lines.push(self.rep.hint(&e.hint));
                    }
                    return Err(lines);
                }
            }
            Opt::Connect => self.connect = true,
            Opt::Dbname => self.conn.dbname = Some(arg),
            Opt::Define => self.define(&arg)?,
            Opt::File => {
                let (path, weight) = scripts::parse_weight(&arg).map_err(|m| self.err(&m))?;
                let text = scripts::read_script_file(&path).map_err(|m| self.err(&m))?;
                self.add_script(ScriptSource::File { path, text, weight })?;
            }
            Opt::Host => self.conn.host = Some(arg),
            Opt::Jobs => self.threads = self.int(&arg, "-j/--jobs", 1, i32::MAX)?,
            Opt::Protocol => {
                self.mode = arg
                    .parse()
                    .map_err(|_| self.err(&format!("invalid query mode (-M): \"{arg}\"")))?;
            }
            Opt::SkipSomeUpdates => self.add_builtin("simple-update", 1)?,
            Opt::Port => self.conn.port = Some(arg),
            Opt::SelectOnly => self.add_builtin("select-only", 1)?,
            Opt::Transactions => self.nxacts = self.int(&arg, "-t/--transactions", 1, i32::MAX)?,
            Opt::Time => self.duration = self.int(&arg, "-T/--time", 1, i32::MAX)?,
            Opt::Username => self.conn.user = Some(arg),
            Opt::VacuumAll => self.vacuum_all = true,
            Opt::RandomSeed => {
                if let Err(mut lines) = self.set_random_seed(&arg) {
                    lines.push(
                        self.rep
                            .error("error while setting random seed from --random-seed option"),
                    );
                    return Err(lines);
                }
            }
            Opt::ShowScript => {
                let rep = self.rep.clone();
                let full = scripts::find_builtin(&arg, &|m| rep.error(m))?;
                return Ok(Some(Action::ShowScript(full.to_string())));
            }
            _ => unreachable!("every option is handled by one of the apply functions"),
        }
        Ok(None)
    }

    /// Initialisation options (and `-i`, `-s`). Whether `opt` was one of them.
    fn apply_init(&mut self, opt: Opt, arg: &str) -> Result<bool, Lines> {
        let arg = arg.to_string();
        match opt {
            Opt::Fillfactor => self.fillfactor = self.int(&arg, "-F/--fillfactor", 10, 100)?,
            Opt::Initialize => self.is_init = true,
            Opt::InitSteps => {
                self.check_init_steps(&arg)?;
                self.init_steps = Some(arg);
            }
            Opt::NoVacuum => self.no_vacuum = true,
            Opt::Quiet => self.quiet = true,
            Opt::Scale => {
                self.scale_given = true;
                self.scale = self.int(&arg, "-s/--scale", 1, i32::MAX)?;
            }
            Opt::UnloggedTables => self.unlogged = true,
            Opt::Tablespace => self.tablespace = Some(arg),
            Opt::IndexTablespace => self.index_tablespace = Some(arg),
            Opt::ForeignKeys => self.foreign_keys = true,
            Opt::Partitions => self.partitions = self.int(&arg, "--partitions", 0, i32::MAX)?,
            Opt::PartitionMethod => {
                self.partition_method = Some(if arg.eq_ignore_ascii_case("range") {
                    PartitionMethod::Range
                } else if arg.eq_ignore_ascii_case("hash") {
                    PartitionMethod::Hash
                } else {
                    return Err(self.err(&format!(
                        "invalid partition method, expecting \"range\" or \"hash\", got: \"{arg}\""
                    )));
                })
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Logging, progress, rate, latency limit and failure-handling options. Whether `opt` was one of them.
    fn apply_logging(&mut self, opt: Opt, arg: &str) -> Result<bool, Lines> {
        let arg = arg.to_string();
        match opt {
            Opt::Log => self.log = true,
            Opt::LatencyLimit => {
                let ms = atof(&arg);
                if ms <= 0.0 {
                    return Err(self.err(&format!("invalid latency limit: \"{arg}\"")));
                }
                self.latency_limit_us = (ms * 1000.0) as i64;
            }
            Opt::Progress => self.progress = self.int(&arg, "-P/--progress", 1, i32::MAX)?,
            Opt::ReportPerCommand => self.report_per_command = true,
            Opt::Rate => {
                let tps = atof(&arg);
                if tps <= 0.0 {
                    return Err(self.err(&format!("invalid rate limit: \"{arg}\"")));
                }
                self.rate = Some(tps);
            }
            Opt::SamplingRate => {
                let rate = atof(&arg);
                if rate <= 0.0 || rate > 1.0 {
                    return Err(self.err(&format!("invalid sampling rate: \"{arg}\"")));
                }
                self.sample_rate = Some(rate);
            }
            Opt::AggregateInterval => {
                self.agg_interval = self.int(&arg, "--aggregate-interval", 1, i32::MAX)?
            }
            Opt::ProgressTimestamp => self.progress_timestamp = true,
            Opt::LogPrefix => self.log_prefix = Some(arg),
            Opt::FailuresDetailed => self.failures_detailed = true,
            Opt::MaxTries => {
                let n = atoi(&arg);
                if n < 0 {
                    return Err(self.err(&format!("invalid number of maximum tries: \"{arg}\"")));
                }
                self.max_tries = n as u32;
            }
            Opt::VerboseErrors => self.verbose_errors = true,
            Opt::ExitOnAbort => self.exit_on_abort = true,
            Opt::Debug => self.debug = true,
            Opt::ContinueOnError => self.continue_on_error = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// pgrig's own long options. Whether `opt` was one of them.
    fn apply_extra(&mut self, opt: Opt, arg: &str) -> Result<bool, Lines> {
        let arg = arg.to_string();
        match opt {
            Opt::Json => self.json = Some(arg),
            Opt::Percentiles => self.percentiles = true,
            Opt::Profile => self.profile = Some(arg),
            Opt::ProfilePid => match arg.trim().parse::<u32>() {
                Ok(pid) if pid > 0 => self.profile_pid = Some(pid),
                _ => return Err(self.err(&format!("invalid --profile-pid: \"{arg}\""))),
            },
            Opt::ProfileClient => self.profile_client = true,
            Opt::MetricsAddr => self.metrics_addr = Some(arg),
            Opt::MetricsLinger => {
                self.metrics_linger = self.int(&arg, "--metrics-linger", 0, 86_400)? as u32
            }
            Opt::Segments => self.segments = Some(self.int(&arg, "--segments", 1, 10_000)? as u32),
            Opt::Coordinator => self.coordinator = Some(arg),
            Opt::SegmentsWait => {
                self.segments_wait = Some(self.int(&arg, "--segments-wait", 1, 86_400)? as u32)
            }
            Opt::Store => self.store = Some(arg),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `-D NAME=VALUE`: split at the first `=`, both sides non-empty, NAME a valid variable name.
    fn define(&mut self, arg: &str) -> Result<(), Lines> {
        let split = arg.find('=').filter(|&eq| eq > 0 && eq + 1 < arg.len());
        let Some(eq) = split else {
            return Err(self.err(&format!("invalid variable definition: \"{arg}\"")));
        };
        let (name, value) = (&arg[..eq], &arg[eq + 1..]);
        if !valid_variable_name(name) {
            return Err(self.err(&format!("option: invalid variable name: \"{name}\"")));
        }
        self.defines.push((name.to_string(), value.to_string()));
        Ok(())
    }

    /// `checkInitSteps()`.
    fn check_init_steps(&self, steps: &str) -> Result<(), Lines> {
        if steps.is_empty() {
            return Err(self.err("no initialization steps specified"));
        }
        if let Some(bad) = steps.chars().find(|c| !"dtgGvpf ".contains(*c)) {
            return Err(vec![
                self.rep
                    .error(&format!("unrecognized initialization step \"{bad}\"")),
                self.rep.detail("Allowed step characters are: \"dtgGvpf\"."),
            ]);
        }
        Ok(())
    }
}

/// pgbench's variable names: `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*` (bytes).
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        None => false,
        Some(&c) if c >= 0x80 || c.is_ascii_alphabetic() || c == b'_' => b[1..]
            .iter()
            .all(|&c| c >= 0x80 || c.is_ascii_alphanumeric() || c == b'_'),
        Some(_) => false,
    }
}
