//! pgbench's option table (PostgreSQL 19/master): the getopt string
//! `b:c:Cd:D:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v`, the long options in pgbench's array order
//! (the order shows in getopt's "ambiguous" message), and pgrig's extra long options, which
//! never take part in abbreviation of pgbench's own.

use super::getopt::{HasArg, LongOpt, ShortOpt, Spec};

/// Every option pgbench (and pgrig bench) knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    Builtin,
    Client,
    Connect,
    Dbname,
    Define,
    File,
    Fillfactor,
    Host,
    Initialize,
    InitSteps,
    Jobs,
    Log,
    LatencyLimit,
    NoVacuum,
    Port,
    Progress,
    Protocol,
    Quiet,
    ReportPerCommand,
    Rate,
    Scale,
    SelectOnly,
    SkipSomeUpdates,
    Time,
    Transactions,
    Username,
    VacuumAll,
    UnloggedTables,
    Tablespace,
    IndexTablespace,
    SamplingRate,
    AggregateInterval,
    ProgressTimestamp,
    LogPrefix,
    ForeignKeys,
    RandomSeed,
    ShowScript,
    Partitions,
    PartitionMethod,
    FailuresDetailed,
    MaxTries,
    VerboseErrors,
    ExitOnAbort,
    Debug,
    ContinueOnError,
    // ---- pgrig extras ----
    Json,
    Percentiles,
    Profile,
    ProfilePid,
    ProfileClient,
    MetricsAddr,
    MetricsLinger,
    Segments,
    Coordinator,
    SegmentsWait,
    Store,
}

use HasArg::{No, Required as Req, WordOrNone};

const fn s(ch: char, has_arg: HasArg, id: Opt) -> ShortOpt<Opt> {
    ShortOpt { ch, has_arg, id }
}

const fn l(name: &'static str, has_arg: HasArg, id: Opt) -> LongOpt<Opt> {
    LongOpt { name, has_arg, id }
}

const SHORT: &[ShortOpt<Opt>] = &[
    s('b', Req, Opt::Builtin),
    s('c', Req, Opt::Client),
    s('C', No, Opt::Connect),
    // `-d`: pgbench 15/16 read it as `--debug`, 17+ as `--dbname DBNAME`. Followed by a word, the
    // database is that word under either reading (15 takes it as the positional DBNAME), so it is
    // `--dbname`; followed by an option or nothing it can only be `--debug` (the 15/16 scripts).
    s('d', WordOrNone, Opt::Dbname),
    s('D', Req, Opt::Define),
    s('f', Req, Opt::File),
    s('F', Req, Opt::Fillfactor),
    s('h', Req, Opt::Host),
    s('i', No, Opt::Initialize),
    s('I', Req, Opt::InitSteps),
    s('j', Req, Opt::Jobs),
    s('l', No, Opt::Log),
    s('L', Req, Opt::LatencyLimit),
    s('M', Req, Opt::Protocol),
    s('n', No, Opt::NoVacuum),
    s('N', No, Opt::SkipSomeUpdates),
    s('p', Req, Opt::Port),
    s('P', Req, Opt::Progress),
    s('q', No, Opt::Quiet),
    s('r', No, Opt::ReportPerCommand),
    s('R', Req, Opt::Rate),
    s('s', Req, Opt::Scale),
    s('S', No, Opt::SelectOnly),
    s('t', Req, Opt::Transactions),
    s('T', Req, Opt::Time),
    s('U', Req, Opt::Username),
    s('v', No, Opt::VacuumAll),
];

const LONG: &[LongOpt<Opt>] = &[
    l("builtin", Req, Opt::Builtin),
    l("client", Req, Opt::Client),
    l("connect", No, Opt::Connect),
    l("dbname", Req, Opt::Dbname),
    l("define", Req, Opt::Define),
    l("file", Req, Opt::File),
    l("fillfactor", Req, Opt::Fillfactor),
    l("host", Req, Opt::Host),
    l("initialize", No, Opt::Initialize),
    l("init-steps", Req, Opt::InitSteps),
    l("jobs", Req, Opt::Jobs),
    l("log", No, Opt::Log),
    l("latency-limit", Req, Opt::LatencyLimit),
    l("no-vacuum", No, Opt::NoVacuum),
    l("port", Req, Opt::Port),
    l("progress", Req, Opt::Progress),
    l("protocol", Req, Opt::Protocol),
    l("quiet", No, Opt::Quiet),
    l("report-per-command", No, Opt::ReportPerCommand),
    l("rate", Req, Opt::Rate),
    l("scale", Req, Opt::Scale),
    l("select-only", No, Opt::SelectOnly),
    l("skip-some-updates", No, Opt::SkipSomeUpdates),
    l("time", Req, Opt::Time),
    l("transactions", Req, Opt::Transactions),
    l("username", Req, Opt::Username),
    l("vacuum-all", No, Opt::VacuumAll),
    l("unlogged-tables", No, Opt::UnloggedTables),
    l("tablespace", Req, Opt::Tablespace),
    l("index-tablespace", Req, Opt::IndexTablespace),
    l("sampling-rate", Req, Opt::SamplingRate),
    l("aggregate-interval", Req, Opt::AggregateInterval),
    l("progress-timestamp", No, Opt::ProgressTimestamp),
    l("log-prefix", Req, Opt::LogPrefix),
    l("foreign-keys", No, Opt::ForeignKeys),
    l("random-seed", Req, Opt::RandomSeed),
    l("show-script", Req, Opt::ShowScript),
    l("partitions", Req, Opt::Partitions),
    l("partition-method", Req, Opt::PartitionMethod),
    l("failures-detailed", No, Opt::FailuresDetailed),
    l("max-tries", Req, Opt::MaxTries),
    l("verbose-errors", No, Opt::VerboseErrors),
    l("exit-on-abort", No, Opt::ExitOnAbort),
    l("debug", No, Opt::Debug),
    l("continue-on-error", No, Opt::ContinueOnError),
];

const EXTRA_LONG: &[LongOpt<Opt>] = &[
    l("json", Req, Opt::Json),
    l("percentiles", No, Opt::Percentiles),
    l("profile", Req, Opt::Profile),
    l("profile-pid", Req, Opt::ProfilePid),
    l("profile-client", No, Opt::ProfileClient),
    l("metrics-addr", Req, Opt::MetricsAddr),
    l("metrics-linger", Req, Opt::MetricsLinger),
    l("segments", Req, Opt::Segments),
    l("coordinator", Req, Opt::Coordinator),
    l("segments-wait", Req, Opt::SegmentsWait),
    l("store", Req, Opt::Store),
];

/// The long name of an option (every option has one).
pub fn long_name(id: Opt) -> &'static str {
    (LONG.iter().chain(EXTRA_LONG))
        .find(|o| o.id == id)
        .map_or("?", |o| o.name)
}

/// The getopt tables for pgbench's command line.
pub fn spec() -> Spec<'static, Opt> {
    Spec {
        short: SHORT,
        long: LONG,
        extra_long: EXTRA_LONG,
    }
}

/// Which mode an option belongs to (`benchmarking_option_set` / `initialization_option_set`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Valid in both modes (`-d -h -p -U -n -s -i --debug`; `--show-script` exits at once).
    Common,
    Init,
    Bench,
}

impl Opt {
    pub fn family(self) -> Family {
        use Opt::*;
        match self {
            Dbname | Host | Port | Username | NoVacuum | Scale | Initialize | Debug
            | ShowScript => Family::Common,
            Fillfactor | InitSteps | Quiet | UnloggedTables | Tablespace | IndexTablespace
            | ForeignKeys | Partitions | PartitionMethod => Family::Init,
            _ => Family::Bench,
        }
    }
}
