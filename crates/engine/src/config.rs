//! Plain configuration of one benchmark run, built by the CLI (argv) or a study (TOML).
//! The engine sees only these structs.
//!
//! CONTRACT between `cli` (producer) and the engine (consumer): change only additively.
//! Presentation choices (`--json`, `--percentiles`) are the cli's and never come here.

use pgrig_script::QueryMode;

/// Where to connect: libpq-style inputs, resolved by `pgrig_wire` (env vars, conninfo, .pgpass).
pub use pgrig_wire::ConnArgs;

/// A script source as given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptSource {
    /// `-b NAME[@W]`, `-S`, `-N`, or the default tpcb-like. `name` is the full builtin name.
    Builtin { name: String, weight: i64 },
    /// `-f FILE[@W]` (`-` = stdin). `text` is the file's contents, read by the CLI.
    File {
        path: String,
        text: String,
        weight: i64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Duration {
    /// `-t N` transactions per client (default 10).
    Transactions(u64),
    /// `-T SEC`.
    Seconds(u64),
}

/// `--random-seed`: `time` (default), `rand`, or an unsigned integer.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum SeedOption {
    #[default]
    Time,
    Rand,
    Value(u64),
}

/// The worker threads of a run: `-j` clamped to `-c` as pgbench does (a thread without clients
/// would idle), and at least one.
pub fn clamp_threads(threads: u32, clients: u32) -> u32 {
    threads.min(clients).max(1)
}

/// Everything `pgrig bench` needs for a benchmark run (pgbench's benchmark mode).
#[derive(Clone, Debug, PartialEq)]
pub struct BenchConfig {
    pub conn: ConnArgs,
    pub scripts: Vec<ScriptSource>,
    /// `-c`
    pub clients: u32,
    /// `-j` (already clamped to `clients`: [`clamp_threads`])
    pub threads: u32,
    pub duration: Duration,
    /// `-M`
    pub mode: QueryMode,
    /// `-C`
    pub connect_per_tx: bool,
    /// `-D NAME=VALUE`, in order (later ones override).
    pub defines: Vec<(String, String)>,
    /// `-s` given explicitly (sets `:scale` for custom scripts; with builtins only warns).
    pub scale: Option<i32>,
    /// `-n`
    pub no_vacuum: bool,
    /// `-v`
    pub vacuum_all: bool,
    /// `-P SEC`
    pub progress: Option<u32>,
    pub progress_timestamp: bool,
    /// `-r`
    pub report_per_command: bool,
    /// `-R TPS` (total over all clients)
    pub rate: Option<f64>,
    /// `-L MS`, stored in microseconds like pgbench: `(int64)(ms * 1000)`
    pub latency_limit_us: Option<i64>,
    /// `--max-tries` (0 = unlimited), default 1
    pub max_tries: u32,
    pub failures_detailed: bool,
    pub verbose_errors: bool,
    pub exit_on_abort: bool,
    pub continue_on_error: bool,
    /// `-l`
    pub log: bool,
    pub log_prefix: Option<String>,
    pub sampling_rate: Option<f64>,
    pub aggregate_interval: Option<u32>,
    pub random_seed: Option<SeedOption>,
    /// `--debug`
    pub debug: bool,
    /// CPUs (numbers as the kernel counts them) the worker threads may run on; `None`: any
    /// (a study's `client_cpus`).
    pub client_cpus: Option<Vec<usize>>,
    /// A native workload (sysbench, YCSB, TPC-C) instead of `scripts`.
    pub native: Option<crate::workload::NativeWorkload>,
    /// One segment of a run spread over several hosts (`pgrig worker`); `None`: the whole run.
    pub segment: Option<Segment>,
    /// sysbench's `--events`: at most this many transactions over all clients together, each
    /// client taking the next one left (besides `duration`); `None`: no such limit.
    pub total_transactions: Option<u64>,
    /// sysbench's `--forced-shutdown`: seconds after the benchmark start at which every client
    /// still running is cut off mid-transaction (its transaction counted as unfinished, its
    /// connection dropped) and the run ends
    pub forced_end_s: Option<u64>,
}

/// This host runs the clients `first_client..first_client + clients` of a run of
/// `total_clients`: their ids and random streams are those the whole run gives them, so the
/// segments together issue the work one host would with the same seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub first_client: u32,
    pub total_clients: u32,
}

/// The first global client id of this run's clients and the run's total clients.
pub fn segment_clients(cfg: &BenchConfig) -> (u32, u32) {
    cfg.segment
        .map_or((0, cfg.clients), |s| (s.first_client, s.total_clients))
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            conn: ConnArgs::default(),
            scripts: Vec::new(),
            clients: 1,
            threads: 1,
            duration: Duration::Transactions(10),
            mode: QueryMode::Simple,
            connect_per_tx: false,
            defines: Vec::new(),
            scale: None,
            no_vacuum: false,
            vacuum_all: false,
            progress: None,
            progress_timestamp: false,
            report_per_command: false,
            rate: None,
            latency_limit_us: None,
            max_tries: 1,
            failures_detailed: false,
            verbose_errors: false,
            exit_on_abort: false,
            continue_on_error: false,
            log: false,
            log_prefix: None,
            sampling_rate: None,
            aggregate_interval: None,
            random_seed: None,
            debug: false,
            client_cpus: None,
            native: None,
            segment: None,
            total_transactions: None,
            forced_end_s: None,
        }
    }
}

/// `pgbench -i` options (initialisation mode).
#[derive(Clone, Debug, PartialEq)]
pub struct InitConfig {
    pub conn: ConnArgs,
    /// `-I` steps after `-n` / `--foreign-keys` adjustments (chars of `dtgGvpf`; spaces removed).
    pub steps: String,
    pub scale: i32,
    pub fillfactor: i32,
    pub quiet: bool,
    pub index_tablespace: Option<String>,
    pub tablespace: Option<String>,
    pub partitions: i32,
    pub partition_method: Option<PartitionMethod>,
    pub unlogged: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionMethod {
    Range,
    Hash,
}

impl Default for InitConfig {
    fn default() -> Self {
        InitConfig {
            conn: ConnArgs::default(),
            steps: "dtgvp".into(),
            scale: 1,
            fillfactor: 100,
            quiet: false,
            index_tablespace: None,
            tablespace: None,
            partitions: 0,
            partition_method: None,
            unlogged: false,
        }
    }
}
