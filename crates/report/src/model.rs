//! The report's plain model: what was measured, independent of where it came from (a results
//! store, a `--json` document, pgbench's logs). `input` fills it; `choose` turns it into charts.

/// Everything one report shows.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Where the data came from (store path, file names), for the page header.
    pub sources: Vec<String>,
    pub studies: Vec<Study>,
    /// Runs that belong to no study (`--json` files, pgbench logs, runs picked by id).
    pub loose: Vec<Run>,
}

/// One study (one version of its text) and its runs in plan order.
#[derive(Debug, Clone, Default)]
pub struct Study {
    pub name: String,
    pub text: String,
    pub runs: Vec<Run>,
    /// query studies: each point's query figures as the study's summary derives them
    pub query: Vec<QueryPoint>,
}

/// One query at one point of a query study: median client time, and speedup and efficiency
/// against the degree-0 point as `pgrig_results::query_summary` derives them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryPoint {
    pub query: String,
    pub target: String,
    /// the point's other values (without `parallel_workers`)
    pub rest: String,
    pub degree: Option<f64>,
    pub median_ms: Option<f64>,
    pub speedup: Option<f64>,
    pub ideal: Option<f64>,
    pub efficiency: Option<f64>,
}

/// One node of an executed plan (depth-first order), from EXPLAIN ANALYZE.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanNode {
    pub id: u64,
    pub depth: u32,
    /// `Seq Scan on public.pgbench_accounts`
    pub label: String,
    pub inclusive_ms: f64,
    pub self_ms: f64,
    pub rows: f64,
    pub loops: f64,
    /// the planner's estimate of rows per loop
    pub est_rows: f64,
    /// cardinality error (1 = exact), when the plan recorded it
    pub q_error: Option<f64>,
}

/// A query of a query run with the plan of its representative execution (the successful one
/// with the median client time among those with server figures, else the plan execution).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryPlan {
    pub name: String,
    pub client_ms: Option<f64>,
    pub nodes: Vec<PlanNode>,
    /// the plan's shape (`pgrig_results::plans::fingerprint`): equal means the same plan
    pub fingerprint: String,
    /// the plan as indented text (`pgrig_results::plans::plan_text`)
    pub text: Vec<String>,
    /// client time (ms) of every successful measured execution of the run
    pub client_times: Vec<f64>,
    /// planning time (ms) of every successful execution with server figures
    pub planning_times: Vec<f64>,
}

/// A value of a matrix key: its text, and its number when it is one (then the axis is numeric).
#[derive(Debug, Clone, PartialEq)]
pub struct PointValue {
    pub text: String,
    pub number: Option<f64>,
}

/// Latency summary in milliseconds (HDR percentiles).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p99_9: Option<f64>,
    pub max: Option<f64>,
}

/// One second (or one aggregation interval) of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Second {
    /// Seconds since the start of the run at the end of this interval.
    pub t: f64,
    pub tps: f64,
    pub latency_mean_ms: Option<f64>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    pub failed: f64,
    pub retries: f64,
    /// server figures of this second, where a sampler collected them: checkpoints done, WAL
    /// bytes written, server CPUs busy
    pub checkpoints: f64,
    pub wal_bytes: Option<f64>,
    pub server_cpu: Option<f64>,
}

/// A latency distribution as a percentile curve: (quantile in [0, 1], milliseconds), ascending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    /// "all transactions", a script's name, ...
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One command of a script (or a native workload's statement) with its latency.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statement {
    pub script: String,
    pub text: String,
    pub executions: f64,
    pub mean_ms: f64,
    /// 99th percentile, when the run measured the command's distribution (native workload
    /// statements; script commands under `-r`)
    pub p99_ms: Option<f64>,
}

/// Sizes of one relation after a run, in bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sizes {
    pub heap: f64,
    pub indexes: f64,
    pub total: f64,
}

/// A relation's size as PostgreSQL's functions split it, in bytes (stores written since the
/// parts were collected): main fork, free-space + visibility maps + init fork, TOAST (with
/// its index); indexes and total are in [`Sizes`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeParts {
    pub main: f64,
    pub maps: f64,
    pub toast: f64,
}

/// What the server did during a run (totals over the run, from the collectors).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Server {
    pub wal_bytes: Option<f64>,
    pub checkpoints: Option<f64>,
    /// server processes' CPU use in CPUs (throwaway servers)
    pub cpus_busy: Option<f64>,
    /// wait-event samples per `Type:Event`
    pub wait_events: Vec<(String, f64)>,
}

/// One run: a point of a study (or a standalone run) measured once.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// How the run is named on the page: `run 12`, a file name.
    pub id: String,
    pub target: String,
    /// The point's matrix values, in the study file's order.
    pub point: Vec<(String, PointValue)>,
    /// a steps study: the point's step (0-based position in the study's steps, name)
    pub step: Option<(usize, String)>,
    pub repetition: u32,
    pub round: u32,
    pub tps: f64,
    pub duration_s: f64,
    pub ok: f64,
    pub failed: f64,
    pub retries: f64,
    pub aborted_clients: f64,
    pub latency: Latency,
    /// the client's CPU time and run-queue wait (busiest thread's shares of the run)
    pub client_cpu: Option<pgrig_results::client_cpu::Figures>,
    pub server: Server,
    pub relation_sizes: Vec<(String, Sizes)>,
    /// the same relations' parts, where the run recorded them
    pub relation_parts: Vec<(String, SizeParts)>,
    pub statements: Vec<Statement>,
    pub series: Vec<Second>,
    /// overall first, then per script when known
    pub distributions: Vec<Distribution>,
    /// provenance flattened to `key.path = value` lines
    pub provenance: Vec<(String, String)>,
    /// query runs: each query's plan
    pub query: Vec<QueryPlan>,
    /// `[collect] profile`: folded stacks by whose (`server`, `client`)
    pub profiles: Vec<(String, String)>,
}

impl Run {
    /// `clients=4 isolation=serializable`, or `(single point)`.
    pub fn point_label(&self) -> String {
        label(&self.point)
    }

    /// The value of a matrix key at this run's point.
    pub fn value(&self, key: &str) -> Option<&PointValue> {
        self.point.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// `k=v k=v` of point values.
pub fn label(values: &[(String, PointValue)]) -> String {
    if values.is_empty() {
        return "(single point)".into();
    }
    values
        .iter()
        .map(|(k, v)| format!("{k}={}", v.text))
        .collect::<Vec<_>>()
        .join(" ")
}
