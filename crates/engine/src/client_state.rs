//! A client's state that the steps of a transaction share (`client` runs the client, `exec` one
//! script attempt, `sql`/`pipeline` the commands, `outcome` words failures): its connection,
//! variables and reused buffers, where a queued Parse stands, and pgbench's failure kinds. Its
//! own file so that those modules depend on it and not on each other.

use pgrig_script::{Prng, Vars};

pub(crate) struct Client {
    pub id: u32,
    pub vars: Vars,
    pub rng: Prng,
    pub conn: Option<pgrig_wire::Connection>,
    /// prepared statements already prepared on the current connection
    pub prepared: Vec<bool>,
    /// transactions done (ok + skipped + failed), pgbench's `cnt`
    pub cnt: u64,
    /// reused buffers: rendered SQL / parameter bytes and parameter spans
    pub buf: Vec<u8>,
    pub spans: Vec<Option<(usize, usize)>>,
    pub in_pipeline: bool,
    /// Syncs queued in the current pipeline
    pub pending_syncs: usize,
    /// command indexes of the SQL commands queued in the current pipeline
    pub pipeline_cmds: Vec<usize>,
    /// where the Parse queued with the current command (prepared mode) stands
    pub parse: ParseState,
    /// a native workload's program for this client (taken out while it runs a step)
    pub program: Option<Box<dyn crate::workload::TxProgram>>,
    /// a native statement's parameters and the values it returned (reused)
    pub params: crate::workload::Params,
    pub rows: crate::workload::Rows,
    /// the native transaction just run ended in the workload's own rollback
    pub rolled_back: bool,
    /// latency of this client's successful transactions, summed (µs)
    pub busy_us: f64,
    /// when the client last let its thread's other tasks run (µs, `RunShared::now_us`)
    pub yielded_us: i64,
    /// the thread's reactor turns at `yielded_us` ([`pgrig_wire::rt::turns`])
    pub turns_seen: u64,
    /// the start of the transaction running now (µs, `RunShared::now_us`), if one is
    pub tx_begin_us: Option<i64>,
}

/// A Parse sent in front of a command's first Bind (prepared mode): pgbench prepares with a
/// separate round trip, so a failed Parse is reported on its own and the command is still
/// executed (failing with `prepared statement "P_n" does not exist`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseState {
    None,
    Pending,
    Failed,
}

impl Client {
    pub fn new(id: u32, vars: Vars, rng: Prng, n_prepared: usize) -> Self {
        Client {
            id,
            vars,
            rng,
            conn: None,
            prepared: vec![false; n_prepared],
            cnt: 0,
            buf: Vec::with_capacity(1024),
            spans: Vec::with_capacity(16),
            in_pipeline: false,
            pending_syncs: 0,
            pipeline_cmds: Vec::new(),
            parse: ParseState::None,
            program: None,
            params: crate::workload::Params::new(),
            rows: crate::workload::Rows::default(),
            rolled_back: false,
            busy_us: 0.0,
            yielded_us: 0,
            turns_seen: 0,
            tx_begin_us: None,
        }
    }
}

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
