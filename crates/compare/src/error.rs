//! Compare's one error type: every message says what was wrong with the selection, metric or
//! store, and what would work instead.

use pgrig_results::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A selection (A or B) does not parse; `pos` is the byte offset of the bad character.
    #[error("{}", caret(which, text, *pos, message))]
    Selector {
        which: String,
        text: String,
        pos: usize,
        message: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--flame`: a run without the profile, or one that cannot be drawn.
    #[error("{0}")]
    Profile(String),
    #[error("the results store \"{0}\" holds no runs (run a study first, or give --store PATH)")]
    EmptyStore(String),
    #[error("no study named \"{name}\" in \"{store}\"; its studies: {}", known.join(", "))]
    UnknownStudy {
        name: String,
        store: String,
        known: Vec<String>,
    },
    #[error("no run with id {id} in \"{store}\" (see `pgrig results list --store {store}`)")]
    UnknownRun { id: i64, store: String },
    #[error("study \"{study}\" has no matrix key `{key}`; valid keys: {}", valid.join(", "))]
    UnknownKey {
        study: String,
        key: String,
        valid: Vec<String>,
    },
    #[error("no run of study \"{study}\" has {key}={value}; stored values of {key}: {}", values.join(", "))]
    NoMatch {
        study: String,
        key: String,
        value: String,
        values: Vec<String>,
    },
    #[error("{which} ({text}) spans rounds {}; add round=N to compare one round", rounds.join(", "))]
    SpansRounds {
        which: String,
        text: String,
        rounds: Vec<String>,
    },
    #[error(
        "{which} ({text}) selects {n} run{}: compare needs repetitions, at least {needed} runs \
         on each side to show a difference at alpha = {alpha} (set `repetitions = {needed}` in the study)",
        if *n == 1 { "" } else { "s" }
    )]
    TooFewRuns {
        which: String,
        text: String,
        n: usize,
        needed: usize,
        alpha: f64,
    },
    #[error(
        "A and B ran different workloads (A: {a}; B: {b}); their numbers are not comparable \
         (--force compares them anyway)"
    )]
    DifferentWorkloads { a: String, b: String },
    #[error("unknown metric \"{0}\"; metrics:\n{help}", help = crate::metric::help())]
    UnknownMetric(String),
    #[error("metric {metric} is not recorded by the runs of {which}{hint}")]
    MetricMissing {
        metric: String,
        which: String,
        hint: String,
    },
    #[error("could not write \"{path}\": {source}")]
    Output {
        path: String,
        source: std::io::Error,
    },
}

/// `selection B "insert[clients]": expected ... ` with the text and a caret under character
/// `pos` on the next lines.
fn caret(which: &str, text: &str, pos: usize, message: &str) -> String {
    let col = text.get(..pos).unwrap_or(text).chars().count();
    format!(
        "selection {which} \"{text}\", character {}: {message}\n  {text}\n  {}^",
        col + 1,
        " ".repeat(col)
    )
}
