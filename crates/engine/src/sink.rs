//! Where the engine's messages go. The engine never prints: the CLI (or a study) implements
//! [`Sink`] and decides on prefixes, streams and formats.

/// Diagnostics in pgbench's levels. `Raw` lines are printed as they are (e.g. `debug()` output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Detail,
    Hint,
    Info,
    Debug,
    /// printed exactly as given to stderr (no prefix, no newline added)
    Raw,
}

/// One progress report (`-P`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// seconds since the run started (or the Unix epoch with `--progress-timestamp`)
    pub time: f64,
    pub tps: f64,
    pub latency_ms: f64,
    pub stddev_ms: f64,
    pub failed: u64,
    pub lag_ms: f64,
    pub skipped: u64,
    pub retried: u64,
    pub retries: u64,
    /// client CPU time over the interval: the busiest worker thread's share of it on a CPU (0..1)
    pub client_cpu_time: f64,
    /// client run-queue wait over the interval: the largest share of it a worker thread spent
    /// ready to run but waiting for a CPU (0..1)
    pub client_run_queue_wait: f64,
}

/// One whole second of the run, as it completes (every second, whatever `-P` says): what
/// happened in it over all threads and the latency distribution of its successful transactions
/// (µs). For interval reports (sysbench's `--report-interval`), live metrics and merging runs
/// from several hosts.
#[derive(Clone, Copy, Debug)]
pub struct SecondReport<'a> {
    /// 1 = the first second of the benchmark
    pub second: u64,
    /// counts and latency moments of this second
    pub delta: &'a crate::stats::Snapshot,
    /// latency histogram of this second's successful transactions, µs
    pub histogram: &'a hdrhistogram::Histogram<u64>,
}

/// How initialisation (`pgbench -i`) shows the progress of its loading phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitProgress {
    /// pgbench's text lines, through [`Sink::message`] (`terminal`: lines end in `\r`, as
    /// pgbench's do on a terminal)
    Lines { terminal: bool },
    /// a [`PhaseDisplay`] per phase from [`Sink::phase`] (bars on a terminal), and a summary
    /// of the step times at the end
    Displays,
}

/// The display of one initialisation phase, drawn by the front end: a bar when the phase
/// counts rows, a spinner otherwise.
pub trait PhaseDisplay {
    /// `rows` rows of the phase are done.
    fn set_position(&self, rows: u64);
    /// `rows` more rows are done.
    fn advance(&self, rows: u64);
    /// The phase is over (a bar stays at its end, a spinner goes away).
    fn finish(&self);
}

/// A display that shows nothing.
pub struct NoDisplay;

impl PhaseDisplay for NoDisplay {
    fn set_position(&self, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

pub trait Sink: Send + Sync {
    fn message(&self, level: Level, text: &str);
    /// Report text for standard output (the banner before the run).
    fn stdout(&self, text: &str);
    fn progress(&self, p: &Progress);
    /// The version line pgbench prints once connected (`pgbench (15.4, server 16.1)`); pgrig
    /// names itself and the server. Default: nothing.
    fn banner(&self, _server_version: &str) {}
    /// Called once per benchmark when setup (scale detection, vacuum) is done, right before the
    /// clients connect and run (e.g. to start a profiler). Default: nothing.
    fn measuring(&self) {}
    /// Each second of the benchmark once all threads have passed it. Default: nothing.
    fn second(&self, _s: &SecondReport<'_>) {}
    /// How initialisation shows progress. Default: pgbench's lines.
    fn init_progress(&self) -> InitProgress {
        InitProgress::Lines { terminal: false }
    }
    /// The display of one initialisation phase under [`InitProgress::Displays`]: `label` names
    /// it, `rows` is its row count (`None`: a phase without rows).
    fn phase(&self, _label: &str, _rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        Box::new(NoDisplay)
    }
    /// pgbench's password prompt: asked once when the server wants a password and none is
    /// known; `None` when there is no one to ask (default).
    fn password(&self) -> Option<String> {
        None
    }
    /// A native workload's statement failed and the error ends client `client` (not
    /// retryable): `sql` as sent (values inlined when `simple`: sent as a simple query), the
    /// SQLSTATE and the server's message. `true`: the sink reported it in its own words (the
    /// sysbench drop-in prints sysbench's driver lines); `false` (default): the engine prints
    /// pgbench's abort line.
    fn sql_abort(&self, _client: u32, _sql: &[u8], _simple: bool, _error: (&str, &str)) -> bool {
        false
    }
}

/// A sink that drops everything (for library users and tests).
pub struct NullSink;

impl Sink for NullSink {
    fn message(&self, _: Level, _: &str) {}
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

/// libpq's default notice processor for the run's connections: each NOTICE/WARNING the server
/// sends is printed as libpq prints it (`NOTICE:  text`, then `DETAIL:`/`HINT:` lines).
pub(crate) fn notice_printer(sink: std::sync::Arc<dyn Sink>) -> pgrig_wire::NoticeHandler {
    std::sync::Arc::new(move |fields: &pgrig_wire::ErrorFields<'_>| {
        let mut text = fields.to_db_error().to_string();
        text.push('\n');
        sink.message(Level::Raw, &text);
    })
}
